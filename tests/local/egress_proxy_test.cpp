// The local egress proxy in-process, over real sockets: the jail's side is a listener
// handed over a Unix socket as the jail's starter hands it, the upstream an echo server
// on this machine's loopback (what it echoes is what it received), names come from a
// resolver seam. CONNECT, plain HTTP and SOCKS5 reach what the list names and nothing
// else; hostile clients (huge headers, SOCKS garbage, floods of idle connections, a TLS
// handshake naming another server) are refused while the proxy goes on serving.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "corral/os/unique_fd.hpp"
#include "egress_proxy.hpp"
#include "proxy_harness.hpp"

using corral::EgressReport;
using corral::local::EgressAddress;
using corral::local::EgressPolicy;
using corral::local::EgressProxy;
using corral::local::tls_server_name;
using corral::os::UniqueFd;
using corral::test::loopback_listener;

namespace {

// A server on 127.0.0.1 that sends back every byte it receives, one thread per connection.
class EchoServer {
 public:
  EchoServer() : listener_(loopback_listener(port_)) {
    thread_ = std::thread([this] {
      for (;;) {
        const int c = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) return;  // shut down
        std::lock_guard lock(mutex_);
        clients_.emplace_back([c] {
          UniqueFd fd(c);
          char chunk[65536];
          for (ssize_t n; (n = ::recv(c, chunk, sizeof chunk, 0)) > 0;)
            if (::send(c, chunk, static_cast<size_t>(n), MSG_NOSIGNAL) != n) return;
        });
      }
    });
  }
  ~EchoServer() {
    ::shutdown(listener_.get(), SHUT_RDWR);
    thread_.join();
    for (std::thread& t : clients_) t.join();
  }
  int port() const { return port_; }

 private:
  int port_ = 0;
  UniqueFd listener_;
  std::mutex mutex_;
  std::vector<std::thread> clients_;
  std::thread thread_;
};

EgressAddress v4(const char* text) {
  EgressAddress a;
  auto* in = reinterpret_cast<sockaddr_in*>(&a.address);
  in->sin_family = AF_INET;
  REQUIRE(::inet_pton(AF_INET, text, &in->sin_addr) == 1);
  a.size = sizeof *in;
  return a;
}

// api.example is the echo server; inside.example points at another loopback address.
std::vector<EgressAddress> resolve(const std::string& name) {
  if (name == "api.example") return {v4("127.0.0.1")};
  if (name == "inside.example") return {v4("127.0.0.2")};
  return {};
}

// The proxy of these tests: names from resolve().
struct Harness : corral::test::ProxyHarness {
  explicit Harness(const std::vector<std::string>& allow) : ProxyHarness(allow, resolve) {}
};

void send_text(int fd, const std::string& text) {
  REQUIRE(::send(fd, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size()));
}

// Reads until `marker` has arrived, the peer closes or 10 s pass; all that arrived.
std::string receive_until(int fd, const std::string& marker) {
  std::string got;
  char chunk[4096];
  while (got.find(marker) == std::string::npos) {
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) break;
    got.append(chunk, static_cast<size_t>(n));
  }
  return got;
}

std::string receive_exactly(int fd, size_t n) {
  std::string got;
  char chunk[4096];
  while (got.size() < n) {
    const ssize_t r = ::recv(fd, chunk, std::min(sizeof chunk, n - got.size()), 0);
    if (r <= 0) break;
    got.append(chunk, static_cast<size_t>(r));
  }
  return got;
}

// True when the peer closed the connection (rather than the read timing out).
bool closed_by_peer(int fd) {
  char c;
  for (;;) {
    const ssize_t n = ::recv(fd, &c, 1, 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
    if (n < 0) return false;
  }
}

std::string socks5_connect(const std::string& host, int port) {
  std::string r("\x05\x01\x00\x03", 4);
  r += static_cast<char>(host.size());
  r += host;
  r += static_cast<char>(port >> 8);
  r += static_cast<char>(port & 0xff);
  return r;
}

// A TLS 1.3-shaped ClientHello record naming `server` (none: no server_name extension).
std::string client_hello(const std::string& server) {
  auto be = [](size_t n, int width) {
    std::string s;
    for (int i = width - 1; i >= 0; --i) s += static_cast<char>((n >> (8 * i)) & 0xff);
    return s;
  };
  std::string extensions;
  if (!server.empty()) {
    const std::string entry = std::string(1, '\0') + be(server.size(), 2) + server;
    const std::string list = be(entry.size(), 2) + entry;
    extensions += be(0, 2) + be(list.size(), 2) + list;
  }
  extensions += be(43, 2) + be(3, 2) + "\x02\x03\x04";  // supported_versions
  const std::string body = std::string("\x03\x03", 2) + std::string(32, '\x2a') + std::string(1, '\0') +
                           be(2, 2) + "\x13\x01" + be(1, 1) + std::string(1, '\0') + be(extensions.size(), 2) +
                           extensions;
  const std::string handshake = "\x01" + be(body.size(), 3) + body;
  return std::string("\x16\x03\x01", 3) + be(handshake.size(), 2) + handshake;
}

const corral::EgressDestination* find(const std::vector<corral::EgressDestination>& list, const std::string& host,
                                      int port) {
  for (const auto& d : list)
    if (d.host == host && d.port == port) return &d;
  return nullptr;
}

}  // namespace

TEST_CASE("CONNECT, plain HTTP and SOCKS5 reach a listed host; the upstream sees origin-form and the URL's own Host") {
  EchoServer echo;
  const std::string api = "api.example:" + std::to_string(echo.port());
  Harness h({api, "127.0.0.1:" + std::to_string(echo.port())});

  UniqueFd tunnel = h.dial();
  send_text(tunnel.get(), "CONNECT " + api + " HTTP/1.1\r\nHost: " + api + "\r\n\r\n");
  CHECK(receive_until(tunnel.get(), "\r\n\r\n") == "HTTP/1.1 200 Connection established\r\n\r\n");
  send_text(tunnel.get(), "hello through the tunnel");
  CHECK(receive_exactly(tunnel.get(), 24) == "hello through the tunnel");

  UniqueFd plain = h.dial();
  send_text(plain.get(), "GET http://" + api +
                             "/path?q=1 HTTP/1.1\r\nHost: evil.example\r\nProxy-Authorization: Basic eA==\r\n"
                             "Proxy-Connection: keep-alive\r\nAccept: */*\r\n\r\n");
  const std::string forwarded = receive_until(plain.get(), "\r\n\r\n");
  CHECK(forwarded.rfind("GET /path?q=1 HTTP/1.1\r\nHost: " + api + "\r\n", 0) == 0);
  CHECK(forwarded.find("Accept: */*\r\n") != std::string::npos);
  CHECK(forwarded.find("Connection: close\r\n\r\n") != std::string::npos);
  CHECK(forwarded.find("evil") == std::string::npos);
  CHECK(forwarded.find("Proxy-") == std::string::npos);

  UniqueFd socks = h.dial();
  send_text(socks.get(), std::string("\x05\x01\x00", 3));
  CHECK(receive_exactly(socks.get(), 2) == std::string("\x05\x00", 2));
  send_text(socks.get(), socks5_connect("api.example", echo.port()));
  CHECK(receive_exactly(socks.get(), 10).substr(0, 2) == std::string("\x05\x00", 2));
  send_text(socks.get(), "ping");
  CHECK(receive_exactly(socks.get(), 4) == "ping");

  const EgressReport report = h.proxy->report();
  const auto* allowed = find(report.allowed, "api.example", echo.port());
  REQUIRE(allowed);
  CHECK(allowed->count == 3);
  CHECK(report.refused.empty());
}

TEST_CASE("what the list does not name is refused with a reason, counted, and never connected to") {
  EchoServer echo;
  const int port = echo.port();
  Harness h({"api.example:" + std::to_string(port), "inside.example:" + std::to_string(port)});

  auto connect_reply = [&](const std::string& target) {
    UniqueFd c = h.dial();
    send_text(c.get(), "CONNECT " + target + " HTTP/1.1\r\n\r\n");
    return receive_until(c.get(), "\n\n");
  };
  const std::string unlisted = connect_reply("other.example:443");
  CHECK(unlisted.rfind("HTTP/1.1 403 Forbidden\r\n", 0) == 0);
  CHECK(unlisted.find("corral: other.example:443 is refused: not in the allow list") != std::string::npos);
  // The echo server is on 127.0.0.1: a name is not an address, and the address is not listed.
  CHECK(connect_reply("127.0.0.1:" + std::to_string(port)).rfind("HTTP/1.1 403", 0) == 0);
  CHECK(connect_reply("api.example:" + std::to_string(port + 1 == 65536 ? 1 : port + 1)).rfind("HTTP/1.1 403", 0) == 0);
  const std::string inside = connect_reply("inside.example:" + std::to_string(port));
  CHECK(inside.find("resolves to a loopback, link-local or private address") != std::string::npos);

  UniqueFd socks = h.dial();
  send_text(socks.get(), std::string("\x05\x01\x00", 3));
  CHECK(receive_exactly(socks.get(), 2) == std::string("\x05\x00", 2));
  send_text(socks.get(), socks5_connect("other.example", 80));
  CHECK(receive_exactly(socks.get(), 2) == std::string("\x05\x02", 2));  // not allowed by ruleset

  const EgressReport report = h.proxy->report();
  CHECK(report.allowed.empty());
  const auto* other = find(report.refused, "other.example", 443);
  REQUIRE(other);
  CHECK(other->reason == "not in the allow list");
  REQUIRE(find(report.refused, "inside.example", port));
  CHECK(find(report.refused, "other.example", 80));
}

TEST_CASE("hostile clients: a 1 MiB header, SOCKS5 garbage and non-proxy requests are refused; others still served") {
  EchoServer echo;
  const std::string api = "api.example:" + std::to_string(echo.port());
  Harness h({api, "127.0.0.1:" + std::to_string(echo.port())});

  UniqueFd huge = h.dial();
  std::thread writer([fd = huge.get()] {
    const std::string line = "GET http://api.example/ HTTP/1.1\r\nX-Pad: " + std::string(1 << 20, 'a');
    (void)::send(fd, line.data(), line.size(), MSG_NOSIGNAL);  // the proxy stops reading at 64 KiB
  });
  CHECK(receive_until(huge.get(), "\n\n").rfind("HTTP/1.1 431", 0) == 0);
  ::shutdown(huge.get(), SHUT_RDWR);
  writer.join();

  UniqueFd no_method = h.dial();
  send_text(no_method.get(), std::string("\x05\x02\x01\x02", 4));  // GSSAPI and password only
  CHECK(receive_exactly(no_method.get(), 2) == std::string("\x05\xff", 2));
  CHECK(closed_by_peer(no_method.get()));

  UniqueFd garbage = h.dial();
  send_text(garbage.get(), std::string("\x05\x01\x00", 3));
  CHECK(receive_exactly(garbage.get(), 2) == std::string("\x05\x00", 2));
  send_text(garbage.get(), std::string("\x05\x01\x00\x09garbage!!", 13));  // an address type that does not exist
  CHECK(receive_exactly(garbage.get(), 2) == std::string("\x05\x08", 2));
  CHECK(closed_by_peer(garbage.get()));

  UniqueFd origin_form = h.dial();
  send_text(origin_form.get(), "GET / HTTP/1.1\r\nHost: api.example\r\n\r\n");
  CHECK(receive_until(origin_form.get(), "\n\n").rfind("HTTP/1.1 400", 0) == 0);

  UniqueFd credentials = h.dial();
  send_text(credentials.get(), "GET http://api.example@other.example/ HTTP/1.1\r\n\r\n");
  CHECK(receive_until(credentials.get(), "\n\n").rfind("HTTP/1.1 400", 0) == 0);

  UniqueFd fine = h.dial();
  send_text(fine.get(), "CONNECT " + api + " HTTP/1.1\r\n\r\n");
  CHECK(receive_until(fine.get(), "\r\n\r\n").rfind("HTTP/1.1 200", 0) == 0);
  send_text(fine.get(), "still here");
  CHECK(receive_exactly(fine.get(), 10) == "still here");
  CHECK(h.proxy->report().refused.size() >= 4);
}

TEST_CASE("10,000 connections opened and held: the oldest handshaking ones are closed, the newest is served") {
  rlimit files{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &files) == 0);
  files.rlim_cur = files.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &files);
  // The test holds one descriptor a connection, the proxy (in this process) one for each it
  // still holds, at most its cap plus those closing: leave room for that and the rest. Past
  // the cap either way, so the flood always makes the proxy evict.
  const size_t flood = std::min<size_t>(
      10'000, files.rlim_cur > 2 * EgressProxy::kMaxConnections + 600 ? files.rlim_cur - EgressProxy::kMaxConnections - 512
                                                                       : EgressProxy::kMaxConnections + 64);
  CAPTURE(flood);
  EchoServer echo;
  const std::string api = "api.example:" + std::to_string(echo.port());
  Harness h({api, "127.0.0.1:" + std::to_string(echo.port())});

  std::vector<UniqueFd> held;
  held.reserve(flood);
  for (size_t i = 0; i < flood; ++i) held.push_back(h.dial());
  UniqueFd fresh = h.dial();
  send_text(fresh.get(), "CONNECT " + api + " HTTP/1.1\r\n\r\n");
  CHECK(receive_until(fresh.get(), "\r\n\r\n").rfind("HTTP/1.1 200", 0) == 0);
  send_text(fresh.get(), "served");
  CHECK(receive_exactly(fresh.get(), 6) == "served");
  CHECK(closed_by_peer(held.front().get()));  // the oldest idle one was let go

  std::int64_t evicted = 0;
  for (const auto& d : h.proxy->report().refused)
    if (d.reason == "closed while handshaking, for a newer connection") evicted = d.count;
  CHECK(evicted >= static_cast<std::int64_t>(flood) + 1 - EgressProxy::kMaxConnections);
  CHECK(evicted <= static_cast<std::int64_t>(flood));
}

TEST_CASE("with every slot relaying, a new connection is closed unheard and counted") {
  EchoServer echo;
  const std::string api = "api.example:" + std::to_string(echo.port());
  Harness h({api, "127.0.0.1:" + std::to_string(echo.port())});
  std::vector<UniqueFd> tunnels;
  for (int i = 0; i < EgressProxy::kMaxConnections; ++i) {
    tunnels.push_back(h.dial());
    send_text(tunnels.back().get(), "CONNECT " + api + " HTTP/1.1\r\n\r\nx");  // relaying once "x" is through
    REQUIRE(receive_until(tunnels.back().get(), "\r\n\r\nx").find("\r\n\r\nx") != std::string::npos);
  }
  UniqueFd over = h.dial();
  CHECK(closed_by_peer(over.get()));
  bool counted = false;
  for (const auto& d : h.proxy->report().refused) counted |= d.reason == "too many connections at once";
  CHECK(counted);
  send_text(tunnels.front().get(), "y");  // the relaying ones are untouched
  CHECK(receive_exactly(tunnels.front().get(), 1) == "y");
}

TEST_CASE("a TLS handshake naming another server than the CONNECT host is refused; the same name, any case, is relayed") {
  EchoServer echo;
  const std::string api = "api.example:" + std::to_string(echo.port());
  Harness h({api, "127.0.0.1:" + std::to_string(echo.port())});

  UniqueFd fronted = h.dial();
  send_text(fronted.get(), "CONNECT " + api + " HTTP/1.1\r\n\r\n");
  CHECK(receive_until(fronted.get(), "\r\n\r\n").rfind("HTTP/1.1 200", 0) == 0);
  send_text(fronted.get(), client_hello("evil.example"));
  CHECK(closed_by_peer(fronted.get()));  // nothing echoed: the upstream never saw it

  const std::string hello = client_hello("API.Example.");
  UniqueFd same = h.dial();
  send_text(same.get(), "CONNECT " + api + " HTTP/1.1\r\n\r\n" + hello);
  // The echo may arrive in the same read as the proxy's answer: keep what follows it.
  const std::string answer = receive_until(same.get(), "\r\n\r\n");
  CHECK(answer.rfind("HTTP/1.1 200", 0) == 0);
  std::string echoed = answer.substr(std::min(answer.size(), answer.find("\r\n\r\n") + 4));
  echoed += receive_exactly(same.get(), hello.size() - std::min(hello.size(), echoed.size()));
  CHECK(echoed == hello);

  bool counted = false;
  for (const auto& d : h.proxy->report().refused)
    counted |= d.host == "api.example" && d.reason == "its TLS handshake names another server ('evil.example')";
  CHECK(counted);
}

TEST_CASE("tls_server_name reads the SNI of a ClientHello and nothing from a truncated or foreign record") {
  CHECK(tls_server_name(client_hello("pypi.org")) == "pypi.org");
  CHECK_FALSE(tls_server_name(client_hello("")));
  const std::string full = client_hello("pypi.org");
  for (size_t cut = 0; cut < full.size(); ++cut) CHECK_FALSE(tls_server_name(full.substr(0, cut)));
  CHECK_FALSE(tls_server_name("GET / HTTP/1.1\r\n\r\n"));
  std::string lying = full;
  lying[4] = '\xff';  // a record length past the end
  CHECK_FALSE(tls_server_name(lying));
}

TEST_CASE("the proxy stops with tunnels open, and its listener handed over closed is no crash") {
  EchoServer echo;
  const std::string api = "api.example:" + std::to_string(echo.port());
  auto h = std::make_unique<Harness>(std::vector<std::string>{api, "127.0.0.1:" + std::to_string(echo.port())});
  UniqueFd tunnel = h->dial();
  send_text(tunnel.get(), "CONNECT " + api + " HTTP/1.1\r\n\r\nopen");
  CHECK(receive_until(tunnel.get(), "open").find("open") != std::string::npos);
  UniqueFd idle = h->dial();
  h.reset();  // returns: every thread woke on the stop event
  CHECK(closed_by_peer(tunnel.get()));
  CHECK(closed_by_peer(idle.get()));

  int pair[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
  {
    EgressProxy orphan(EgressPolicy({api}, resolve), UniqueFd(pair[1]));
    ::close(pair[0]);  // the jail ended before it sent its listener
    CHECK(orphan.report().allowed.empty());
  }
}
