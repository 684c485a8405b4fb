#include "faults.hpp"

#include <unistd.h>

#include <cstdlib>
#include <iostream>

namespace sbx_standin {
namespace {

std::string fault() {
  const char* f = std::getenv("SBX_STANDIN_FAULT");
  return f ? f : "";
}

}  // namespace

bool not_logged_in() { return fault() == "not-logged-in"; }
bool no_virtualization() { return fault() == "no-virtualization"; }

void maybe_hang(const std::string& command) {
  const char* hang = std::getenv("SBX_STANDIN_HANG");
  if (hang && command == hang)
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

}  // namespace sbx_standin
