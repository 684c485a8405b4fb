// The egress proxy in-process, as the local unit tests drive it: a listener on this
// machine's loopback handed to the proxy over a Unix socket, as a jail's starter hands its
// own, so the tests connect where a jail's programs would.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "corral/os/unique_fd.hpp"
#include "egress_proxy.hpp"

namespace corral::test {

// A TCP listener on 127.0.0.1; `port` receives its port.
inline os::UniqueFd loopback_listener(int& port) {
  os::UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  REQUIRE(fd.valid());
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(fd.get(), 4096) == 0);
  socklen_t size = sizeof a;
  REQUIRE(::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &size) == 0);
  port = ntohs(a.sin_port);
  return fd;
}

// A proxy for `allow` (names from `resolve`; secrets put in through `secrets` when given)
// serving a listener of its own at `port`.
struct ProxyHarness {
  ProxyHarness(const std::vector<std::string>& allow, local::EgressResolver resolve,
               std::shared_ptr<local::EgressInterceptor> secrets = nullptr) {
    os::UniqueFd listener = loopback_listener(port);
    int pair[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    os::UniqueFd ours(pair[0]);
    proxy = std::make_unique<local::EgressProxy>(local::EgressPolicy(allow, std::move(resolve)), os::UniqueFd(pair[1]),
                                                 std::move(secrets));
    char byte = 0;
    iovec data{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr m{};
    m.msg_iov = &data;
    m.msg_iovlen = 1;
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    cmsghdr* rights = CMSG_FIRSTHDR(&m);
    rights->cmsg_level = SOL_SOCKET;
    rights->cmsg_type = SCM_RIGHTS;
    rights->cmsg_len = CMSG_LEN(sizeof(int));
    const int fd = listener.get();
    std::memcpy(CMSG_DATA(rights), &fd, sizeof fd);
    REQUIRE(::sendmsg(ours.get(), &m, 0) == 1);
  }
  // A connection to the proxy, reads bounded by 10 s.
  os::UniqueFd dial() const {
    os::UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    REQUIRE(fd.valid());
    timeval limit{10, 0};
    ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    REQUIRE(::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    return fd;
  }
  int port = 0;
  std::unique_ptr<local::EgressProxy> proxy;
};

}  // namespace corral::test
