// Fault switches of the stand-in sbx, set by the tests through the environment:
//   SBX_STANDIN_FAULT=<fault>[,<fault>...] with faults
//     not-logged-in                every command that needs the daemon says to sign in
//     no-virtualization            a sandbox VM cannot start (create, exec of a stopped one)
//     create-fails-after-register  create records the sandbox, then fails starting it
//     rm-fails                     rm fails and removes nothing
//   SBX_STANDIN_HANG=<command>     that command never finishes (e.g. create, ls); a
//                                  hanging create has already recorded its sandbox
#pragma once

#include <string>

namespace sbx_standin {

bool not_logged_in();
bool no_virtualization();
bool create_fails_after_register();
bool rm_fails();
// Blocks forever when SBX_STANDIN_HANG names `command`.
void maybe_hang(const std::string& command);

// Exit codes and messages in the style of the real tool (its texts are not documented;
// these carry the phrases users see: "sbx login", "virtualization").
int fail_not_logged_in();
int fail_no_virtualization();
int fail_start(const std::string& name);
int fail_rm(const std::string& name);

}  // namespace sbx_standin
