#include "conformance/reach_target.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <fmt/format.h>

#include "corral/errors.hpp"

namespace corral {

ReachTarget::ReachTarget(const std::string& target) {
  if (!target.empty()) {
    const size_t colon = target.rfind(':');
    const std::string ip = target.substr(0, colon == std::string::npos ? 0 : colon);
    const std::string port = colon == std::string::npos ? "" : target.substr(colon + 1);
    in_addr addr{};
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), port_);
    if (inet_pton(AF_INET, ip.c_str(), &addr) != 1 || ec != std::errc() || end != port.data() + port.size() ||
        port_ < 1 || port_ > 65535)
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("--network-target must be an IPv4 address and a port, IP:PORT, not '{}'", target),
                  "e.g. --network-target 203.0.113.7:443, an address the provider's sandboxes can reach");
    ip_ = ip;
    return;
  }
  ip_ = "127.0.0.1";
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 64) != 0 ||
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int err = errno;
    if (fd_ >= 0) ::close(fd_);
    throw Error(ErrorCode::internal, fmt::format("cannot listen on 127.0.0.1 for the network checks: {}", strerror(err)));
  }
  port_ = ntohs(addr.sin_port);
}

ReachTarget::~ReachTarget() {
  if (fd_ >= 0) ::close(fd_);
}

std::string ReachTarget::text() const { return fmt::format("{}:{}", ip_, port_); }

std::string ReachTarget::script() const {
  // A direct connection first; then, when the environment names an HTTP proxy (a
  // provider that reaches the outside through one, as local's allow lists do), a CONNECT
  // through it, which reaches the target only when the proxy answers 200.
  return fmt::format(
      "if ! command -v bash >/dev/null 2>&1; then echo no-bash; exit 0; fi; "
      "limit=; if command -v timeout >/dev/null 2>&1; then limit='timeout 10'; fi; "
      "if $limit bash -c 'exec 3<>/dev/tcp/{0}/{1} && exit 0; "
      "p=${{http_proxy:-$HTTP_PROXY}}; p=${{p#http://}}; p=${{p%%/*}}; [ -n \"$p\" ] || exit 1; "
      "exec 4<>\"/dev/tcp/${{p%:*}}/${{p##*:}}\" || exit 1; "
      "printf \"CONNECT {0}:{1} HTTP/1.1\\r\\nHost: {0}:{1}\\r\\n\\r\\n\" >&4; "
      "read -r version status rest <&4; [ \"$status\" = 200 ]' 2>/dev/null; "
      "then echo reached; else echo unreachable; fi",
      ip_, port_);
}

Reach read_reach(std::string_view out) {
  if (out == "reached\n") return Reach::reached;
  if (out == "unreachable\n") return Reach::unreachable;
  if (out == "no-bash\n") return Reach::no_bash;
  return Reach::unknown;
}

}  // namespace corral
