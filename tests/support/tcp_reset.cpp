#include "tcp_reset.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>

#include <filesystem>

namespace corral::test {
namespace {

// This process's IPv4 TCP socket from `local_port` to `peer_port`, or -1.
int socket_between(int local_port, int peer_port) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    const int fd = std::atoi(entry.path().filename().c_str());
    sockaddr_in local{}, peer{};
    socklen_t n = sizeof local;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &n) != 0 || local.sin_family != AF_INET) continue;
    n = sizeof peer;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &n) != 0) continue;
    if (ntohs(local.sin_port) == local_port && ntohs(peer.sin_port) == peer_port) return fd;
  }
  return -1;
}

}  // namespace

bool reset_tcp_connection(int local_port, int peer_port) {
  const int fd = socket_between(local_port, peer_port);
  sockaddr none{};
  none.sa_family = AF_UNSPEC;
  return fd >= 0 && ::connect(fd, &none, sizeof none) == 0;
}

}  // namespace corral::test
