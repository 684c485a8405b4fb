// A network namespace for a stand-in's command: how a stand-in enforces a sandbox created
// with "no internet" for real, so tests see a command fail to connect rather than only a
// flag in a request body.
#pragma once

#include <string>
#include <vector>

namespace corral::test {

// What the child needs, prepared before fork (after it only async-signal-safe calls).
struct PrivateNetwork {
  bool as_root = false;  // root can make a network namespace alone; others need a user one
  std::string uid_map;   // "UID UID 1": the caller stays itself inside
  std::string gid_map;
};
PrivateNetwork prepare_private_network();

// In a forked child before exec: moves it into a new network namespace that has only a
// loopback (down), so nothing on this machine or beyond is reachable. Returns 0, or the
// errno of the step that failed (the child must then not run the command).
int enter_private_network(const PrivateNetwork& plan);

// True when an allow list's entries (IP addresses and CIDRs; domains never match) take in
// 127.0.0.1: the one address a test's sandbox reaches. A stand-in whose sandboxes live on
// this machine enforces an allow list with it: this machine's network when the list names
// its loopback, none at all otherwise.
bool allows_loopback(const std::vector<std::string>& allow);

// A TCP socket listening on 127.0.0.1 of this machine's network (connections complete in
// its backlog; nothing is read): what a sandbox without a network must fail to reach.
class LoopbackListener {
 public:
  LoopbackListener();
  ~LoopbackListener();
  LoopbackListener(const LoopbackListener&) = delete;
  LoopbackListener& operator=(const LoopbackListener&) = delete;
  int port() const { return port_; }
  // A sh script that prints "reached" when it can connect to the listener, else
  // "unreachable" (bash's /dev/tcp, so nothing beyond bash is needed in the sandbox).
  std::string probe_script() const;

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace corral::test
