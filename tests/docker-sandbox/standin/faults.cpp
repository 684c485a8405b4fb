#include "faults.hpp"

#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <sstream>

namespace sbx_standin {
namespace {

// True when the comma-separated SBX_STANDIN_FAULT lists `name`.
bool fault(const std::string& name) {
  const char* f = std::getenv("SBX_STANDIN_FAULT");
  std::istringstream in(f ? f : "");
  for (std::string item; std::getline(in, item, ',');)
    if (item == name) return true;
  return false;
}

}  // namespace

bool not_logged_in() { return fault("not-logged-in"); }
bool no_virtualization() { return fault("no-virtualization"); }
bool create_fails_after_register() { return fault("create-fails-after-register"); }
bool rm_fails() { return fault("rm-fails"); }
bool ls_garbled() { return fault("ls-garbled"); }
bool exec_dies() { return fault("exec-dies"); }

void maybe_hang(const State& state, const std::string& command) {
  const char* hang = std::getenv("SBX_STANDIN_HANG");
  if (!hang || command != hang) return;
  state.log("hangs.log", command + " " + std::to_string(::getpid()));
  while (true) ::pause();
}

int fail_not_logged_in() {
  std::cerr << "ERROR: You are not signed in. Run 'sbx login' to sign in with your Docker account.\n";
  return 1;
}

int fail_no_virtualization() {
  std::cerr << "ERROR: failed to start the sandbox VM: hardware virtualization is not available "
               "on this host (cannot open /dev/kvm)\n";
  return 1;
}

int fail_start(const std::string& name) {
  std::cerr << "ERROR: sandbox \"" << name << "\" was created but failed to start: image pull timed out\n";
  return 1;
}

int fail_rm(const std::string& name) {
  std::cerr << "ERROR: failed to remove sandbox \"" << name << "\": device or resource busy\n";
  return 1;
}

}  // namespace sbx_standin
