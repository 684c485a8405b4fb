// Fault switches of the stand-in sbx, set by the tests through the environment:
//   SBX_STANDIN_FAULT=not-logged-in | no-virtualization
//   SBX_STANDIN_HANG=<command>   that command never finishes (e.g. create, ls)
#pragma once

#include <string>

namespace sbx_standin {

bool not_logged_in();
bool no_virtualization();
// Blocks forever when SBX_STANDIN_HANG names `command`.
void maybe_hang(const std::string& command);

// Exit codes and messages in the style of the real tool (its texts are not documented;
// these carry the phrases users see: "sbx login", "virtualization").
int fail_not_logged_in();
int fail_no_virtualization();

}  // namespace sbx_standin
