#include "private_network.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <stdexcept>

namespace corral::test {
namespace {

// Writes `text` to `path`; 0 or errno. Async-signal-safe.
int write_proc(const char* path, const char* text, size_t size) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  ssize_t n = write(fd, text, size);
  int err = n == static_cast<ssize_t>(size) ? 0 : (n < 0 ? errno : EIO);
  close(fd);
  return err;
}

}  // namespace

PrivateNetwork prepare_private_network() {
  PrivateNetwork plan;
  plan.as_root = geteuid() == 0;
  plan.uid_map = std::to_string(geteuid()) + " " + std::to_string(geteuid()) + " 1\n";
  plan.gid_map = std::to_string(getegid()) + " " + std::to_string(getegid()) + " 1\n";
  return plan;
}

int enter_private_network(const PrivateNetwork& plan) {
  if (plan.as_root) return unshare(CLONE_NEWNET) == 0 ? 0 : errno;
  if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) return errno;
  if (int e = write_proc("/proc/self/setgroups", "deny", 4)) return e;
  if (int e = write_proc("/proc/self/uid_map", plan.uid_map.data(), plan.uid_map.size())) return e;
  return write_proc("/proc/self/gid_map", plan.gid_map.data(), plan.gid_map.size());
}

bool allows_loopback(const std::vector<std::string>& allow) {
  const std::uint32_t loopback = INADDR_LOOPBACK;
  for (const std::string& entry : allow) {
    const size_t slash = entry.find('/');
    in_addr addr{};
    if (inet_pton(AF_INET, entry.substr(0, slash).c_str(), &addr) != 1) continue;
    int bits = 32;
    if (slash != std::string::npos) {
      try {
        bits = std::stoi(entry.substr(slash + 1));
      } catch (const std::exception&) {
        continue;
      }
      if (bits < 0 || bits > 32) continue;
    }
    const std::uint32_t mask = bits == 0 ? 0 : ~std::uint32_t{0} << (32 - bits);
    if ((ntohl(addr.s_addr) & mask) == (loopback & mask)) return true;
  }
  return false;
}

LoopbackListener::LoopbackListener() {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd_, 64) != 0 ||
      getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error(std::string("cannot listen on 127.0.0.1: ") + strerror(errno));
  port_ = ntohs(addr.sin_port);
}

LoopbackListener::~LoopbackListener() {
  if (fd_ >= 0) close(fd_);
}

std::string LoopbackListener::probe_script() const {
  return "if bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(port_) +
         "' 2>/dev/null; then echo reached; else echo unreachable; fi";
}

}  // namespace corral::test
