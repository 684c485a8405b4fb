// The host side of a jail's egress (--network allow:). The jail has a network namespace
// of its own, with loopback alone; its starter listens on that loopback and hands the
// listening socket over a Unix socket to this proxy, which accepts the jail's connections
// from the host side. It speaks HTTP CONNECT, plain HTTP forwarding (absolute-form) and
// SOCKS5 with names, resolves names itself, asks the EgressPolicy of every destination,
// and counts what was allowed and refused. A program that ignores the proxy variables
// reaches nothing: the jail has no route out.
//
// Thread rules: construct and destroy an EgressProxy on one thread; report() may be called
// from any thread. The proxy runs one accepting thread and one thread per connection, at
// most kMaxConnections at once: past that, the oldest connection still handshaking is
// closed for the new one, or the new one is when every slot is relaying (counted as
// refused either way).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "corral/os/unique_fd.hpp"
#include "corral/types.hpp"
#include "egress_policy.hpp"
#include "egress_interceptor.hpp"

namespace corral::local {

class EgressProxy {
 public:
  static constexpr int kMaxConnections = 256;
  static constexpr size_t kMaxHeaderBytes = 64 * 1024;  // a request's line and headers
  static constexpr int kHandshakeSeconds = 10;          // to say where to go, and to connect
  static constexpr size_t kMaxReported = 256;           // destinations listed; the rest as one

  // Serves the jail whose starter sends its listening socket over `channel`; with
  // `secrets`, tunnels to their hosts are intercepted to put the values in
  // (egress_intercept.hpp), and plain HTTP to them is refused.
  EgressProxy(EgressPolicy policy, os::UniqueFd channel, std::shared_ptr<EgressInterceptor> secrets = nullptr);
  // Stops: no new connection, every open one closed, every thread done.
  ~EgressProxy();
  EgressProxy(const EgressProxy&) = delete;
  EgressProxy& operator=(const EgressProxy&) = delete;

  // What the jail's connections asked for so far.
  EgressReport report() const;

  struct State;  // shared with the proxy's threads

 private:
  std::shared_ptr<State> state_;
  std::thread acceptor_;
};

// The server name (SNI) a TLS ClientHello record at the start of `bytes` asks for;
// nullopt when `bytes` is no ClientHello record or names no server.
std::optional<std::string> tls_server_name(std::string_view bytes);

}  // namespace corral::local
