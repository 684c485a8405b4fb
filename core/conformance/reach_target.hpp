// What the conformance kit's network checks try to reach from inside a sandbox: a TCP
// address, by default a listener of the kit's own on this machine's 127.0.0.1, and the
// shell script a command tries it with.
#pragma once

#include <string>
#include <string_view>

namespace corral {

class ReachTarget {
 public:
  // `target` is "IP:PORT" (an IPv4 address), or "" for a listener opened now on
  // 127.0.0.1 (connections complete in its backlog; nothing is read). Throws
  // invalid-argument for a malformed target, internal when the listener cannot open.
  explicit ReachTarget(const std::string& target);
  ~ReachTarget();
  ReachTarget(const ReachTarget&) = delete;
  ReachTarget& operator=(const ReachTarget&) = delete;

  const std::string& ip() const { return ip_; }
  // True when the target is the kit's own listener on this machine.
  bool own() const { return fd_ >= 0; }
  int port() const { return port_; }
  // "127.0.0.1:40123".
  std::string text() const;
  // A sh script printing "reached" when a TCP connection to the target opens within 10 s,
  // directly or through the HTTP proxy the command's environment names (CONNECT answered
  // 200), else "unreachable"; "no-bash" when the sandbox lacks bash, whose /dev/tcp connects.
  std::string script() const;

 private:
  std::string ip_;
  int port_ = 0;
  int fd_ = -1;
};

// What a run of ReachTarget::script() printed.
enum class Reach { reached, unreachable, no_bash, unknown };
Reach read_reach(std::string_view out);

}  // namespace corral
