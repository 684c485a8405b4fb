// Fault switches of the stand-in sbx, set by the tests through the environment:
//   SBX_STANDIN_FAULT=<fault>[,<fault>...] with faults
//     not-logged-in                every command that needs the daemon says to sign in
//     no-virtualization            a sandbox VM cannot start (create, exec of a stopped one)
//     create-fails-after-register  create records the sandbox, then fails starting it
//     rm-fails                     rm fails and removes nothing
//     ls-garbled                   `ls --json` prints a cut-off document ({"sandboxes":)
//     exec-dies                    `exec` exits 1 ("connection reset") once the command
//                                  has printed on stdout, leaving the command running
//   SBX_STANDIN_HANG=<command>     that command never finishes (e.g. create, ls); a
//                                  hanging create has already recorded its sandbox. Each
//                                  hang is logged as "<command> <pid>" in hangs.log.
#pragma once

#include <string>

#include "state.hpp"

namespace sbx_standin {

bool not_logged_in();
bool no_virtualization();
bool create_fails_after_register();
bool rm_fails();
bool ls_garbled();
bool exec_dies();
// Blocks forever when SBX_STANDIN_HANG names `command`, once hangs.log records it (so a
// test can wait for the hang and end the process afterwards).
void maybe_hang(const State& state, const std::string& command);

// Exit codes and messages in the style of the real tool (its texts are not documented;
// these carry the phrases users see: "sbx login", "virtualization").
int fail_not_logged_in();
int fail_no_virtualization();
int fail_start(const std::string& name);
int fail_rm(const std::string& name);

}  // namespace sbx_standin
