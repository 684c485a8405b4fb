#include "egress_proxy.hpp"

#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "corral/os/errno_error.hpp"
#include "egress_io.hpp"

namespace corral::local {

using Clock = EgressClock;

struct EgressProxy::State {
  State(EgressPolicy p, std::shared_ptr<EgressInterceptor> s) : policy(std::move(p)), secrets(std::move(s)) {}
  EgressPolicy policy;
  std::shared_ptr<EgressInterceptor> secrets;  // null: nothing intercepted
  os::UniqueFd stop{::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)};

  // One open connection; its thread removes it, under `mutex`, before closing its socket,
  // so a shutdown() through `fd` never reaches a reused descriptor.
  struct Connection {
    int fd;
    bool handshaking = true;  // not yet relaying: may be evicted for a newer one
    bool evicted = false;
  };

  mutable std::mutex mutex;
  std::condition_variable idle;
  std::list<Connection> connections;  // oldest first
  std::map<std::pair<std::string, int>, std::int64_t> allowed;
  std::map<std::tuple<std::string, int, std::string>, std::int64_t> refused;

  void count_allowed(const std::string& host, int port) {
    std::lock_guard lock(mutex);
    auto key = std::make_pair(host, port);
    if (!allowed.count(key) && allowed.size() >= EgressProxy::kMaxReported) key = {"(others)", 0};
    ++allowed[key];
  }
  void count_refused(const std::string& host, int port, const std::string& reason) {
    std::lock_guard lock(mutex);
    auto key = std::make_tuple(host, port, reason);
    if (!refused.count(key) && refused.size() >= EgressProxy::kMaxReported) key = {"(others)", 0, "several reasons"};
    ++refused[key];
  }
};

namespace {

using State = EgressProxy::State;

// Sends each write at once. A relay passes on what arrives as it arrives: with Nagle's
// algorithm, the second small piece of a TLS handshake would wait for the peer's delayed
// acknowledgement (40 ms on Linux) on both of the proxy's sockets.
void no_delay(int fd) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// A socket connected to one of `addresses`, tried in order; invalid with `why` set when none answers.
os::UniqueFd connect_upstream(const State& st, const std::vector<EgressAddress>& addresses, Clock::time_point deadline,
                              std::string& why) {
  for (const EgressAddress& a : addresses) {
    os::UniqueFd fd(::socket(a.address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) {
      why = std::strerror(errno);
      continue;
    }
    no_delay(fd.get());
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&a.address), a.size) == 0) return fd;
    if (errno != EINPROGRESS) {
      why = std::strerror(errno);
      continue;
    }
    if (!wait_for(st.stop.get(), fd.get(), POLLOUT, deadline)) {
      why = "no answer in time";
      continue;
    }
    int err = 0;
    socklen_t size = sizeof err;
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &size);
    if (err == 0) return fd;
    why = std::strerror(err);
  }
  return {};
}

// Copies bytes both ways until both sides have ended or the proxy stops. `to_upstream`:
// bytes the client already sent past its request.
void relay(const State& st, int client, int upstream, std::string to_upstream) {
  struct Direction {
    int from, to;
    std::string pending;
    bool ended = false;
  };
  Direction up{client, upstream, std::move(to_upstream)}, down{upstream, client, {}};
  while (!(up.ended && up.pending.empty() && down.ended && down.pending.empty())) {
    pollfd p[3] = {{client, 0, 0}, {upstream, 0, 0}, {st.stop.get(), POLLIN, 0}};
    for (Direction* d : {&up, &down}) {
      pollfd& from = d->from == client ? p[0] : p[1];
      pollfd& to = d->to == client ? p[0] : p[1];
      if (!d->ended && d->pending.empty()) from.events |= POLLIN;
      if (!d->pending.empty()) to.events |= POLLOUT;
    }
    if (::poll(p, 3, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (p[2].revents) return;
    for (Direction* d : {&up, &down}) {
      if (!d->pending.empty()) {
        const ssize_t n = ::send(d->to, d->pending.data(), d->pending.size(), MSG_NOSIGNAL);
        if (n > 0) d->pending.erase(0, static_cast<size_t>(n));
        else if (n < 0 && errno != EAGAIN && errno != EINTR) return;  // the receiving side is gone
        if (d->pending.empty() && d->ended) ::shutdown(d->to, SHUT_WR);
      } else if (!d->ended) {
        char chunk[65536];
        const ssize_t n = ::recv(d->from, chunk, sizeof chunk, 0);
        if (n > 0) d->pending.assign(chunk, static_cast<size_t>(n));
        else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
          d->ended = true;
          ::shutdown(d->to, SHUT_WR);
        }
      }
    }
  }
}

// "host:port" or "[v6]:port" as host and port; false when it is neither.
bool split_authority(std::string_view authority, int default_port, std::string& host, int& port) {
  std::string_view port_text;
  if (authority.rfind('[', 0) == 0) {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return false;
    host = std::string(authority.substr(1, close - 1));
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return false;
    if (!rest.empty()) port_text = rest.substr(1);
  } else {
    const size_t colon = authority.rfind(':');
    host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  port = default_port;
  if (!port_text.empty()) {
    if (port_text.size() > 5 || !std::all_of(port_text.begin(), port_text.end(), ::isdigit)) return false;
    port = std::stoi(std::string(port_text));
  }
  return !host.empty() && host.size() <= 253 && port >= 1 && port <= 65535;
}

// What a refusal tells the command, in the proxy's reply.
std::string refusal_text(const std::string& host, int port, const std::string& reason) {
  return "corral: " + host + ":" + std::to_string(port) + " is refused: " + reason +
         " (this sandbox's --network allow: list decides what it may reach)";
}

// Where a parsed request goes, and what its client sent past the request.
struct Request {
  std::string host;
  int port = 0;
  std::string ahead;  // bytes for the upstream before the client's next ones
  bool tunnel = true;  // CONNECT or SOCKS5: the client's bytes are its own protocol's
};

// Decides and connects; the upstream socket, or invalid with `status`/`message` set for
// the reply (a refusal is counted here).
os::UniqueFd open_upstream(State& st, const Request& r, Clock::time_point deadline, int& status, std::string& message) {
  const EgressDecision d = st.policy.decide(r.host, r.port);
  if (!d.allowed) {
    st.count_refused(r.host, r.port, d.reason);
    status = 403;
    message = refusal_text(r.host, r.port, d.reason);
    return {};
  }
  std::string why;
  os::UniqueFd upstream = connect_upstream(st, d.addresses, deadline, why);
  if (!upstream.valid()) {
    st.count_allowed(r.host, r.port);  // the list allowed it; the host did not answer
    status = 502;
    message = "corral: cannot connect to " + r.host + ":" + std::to_string(r.port) + ": " + why;
  }
  return upstream;
}

// Reads the client's first bytes of a tunnel into `buffer` when the client speaks first,
// and, when they start a TLS handshake, the whole first record. False when the client
// goes away or the proxy stops; true, with what arrived, when the upstream speaks first
// or the deadline passes with nothing said.
bool read_opening(const State& st, int client, int upstream, std::string& buffer, Clock::time_point deadline) {
  while (buffer.empty()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return true;
    pollfd p[3] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}, {st.stop.get(), POLLIN, 0}};
    const int n = ::poll(p, 3, static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || p[2].revents) return false;
    if (p[1].revents && !p[0].revents) return true;  // a server-first protocol
    if (p[0].revents && !receive_some(st.stop.get(), client, buffer, deadline)) return false;
  }
  if (buffer[0] != 0x16) return true;
  if (!receive_exactly(st.stop.get(), client, buffer, 5, deadline)) return false;
  const size_t length = (static_cast<unsigned char>(buffer[3]) << 8) | static_cast<unsigned char>(buffer[4]);
  return receive_exactly(st.stop.get(), client, buffer, 5 + length, deadline);
}

// Why a tunnel to `host` must not go on with the client's `opening` bytes, or empty: a
// TLS client naming another server than the one it asked the proxy for (domain fronting:
// a listed front on a shared address carrying a request for an unlisted name).
std::string fronting(const std::string& host, std::string_view opening) {
  if (is_ip_or_cidr(host)) return {};  // an address names no server; the connection is to it alone
  const std::optional<std::string> name = tls_server_name(opening);
  if (!name) return {};
  std::string wanted = host, said = *name;
  for (std::string* s : {&wanted, &said}) {
    std::transform(s->begin(), s->end(), s->begin(), [](unsigned char c) { return std::tolower(c); });
    if (!s->empty() && s->back() == '.') s->pop_back();
  }
  if (wanted == said) return {};
  return "its TLS handshake names another server ('" + said.substr(0, 253) + "')";
}

// True when `connection` may go on relaying (it was not evicted while handshaking); it
// can no longer be.
bool start_relaying(State& st, State::Connection& connection) {
  std::lock_guard lock(st.mutex);
  if (connection.evicted) return false;
  connection.handshaking = false;
  return true;
}

// A tunnel to a secret's host: the server verified first (a failure is told through
// `failed`), then the client told the tunnel is open and served by egress_intercept.
void carry_intercepted(State& st, State::Connection& connection, int client, int upstream, Request r,
                       const std::function<bool()>& opened,
                       const std::function<void(int, const std::string&)>& failed, Clock::time_point deadline) {
  std::string why;
  EgressInterceptor::Upstream tls = st.secrets->connect(r.host, upstream, st.stop.get(), deadline, why);
  if (!tls) {
    st.count_refused(r.host, r.port, "the server's TLS failed: " + why);
    return failed(502, "corral: " + r.host + ":" + std::to_string(r.port) + " is refused: its TLS failed (" + why +
                           "); it is a secret's host, so corral verifies it itself, trusting this machine's store "
                           "and CORRAL_EGRESS_CA_FILE");
  }
  if (!opened() || !start_relaying(st, connection)) return;
  std::string refused;
  const bool sent = st.secrets->serve(tls, r.host, client, r.ahead, upstream, st.stop.get(), refused);
  if (!refused.empty()) st.count_refused(r.host, r.port, refused);
  else if (sent) st.count_allowed(r.host, r.port);
}

// Relays `r` once the client has been told the tunnel is open (`opened`, false when that
// fails; `failed` tells it why not, where that is known only later); for a tunnel,
// refuses a TLS handshake naming another server first, and intercepts one to a secret's host.
void carry(State& st, State::Connection& connection, int client, int upstream, Request r,
           const std::function<bool()>& opened, const std::function<void(int, const std::string&)>& failed,
           Clock::time_point deadline) {
  if (r.tunnel && st.secrets && st.secrets->binds(r.host))
    return carry_intercepted(st, connection, client, upstream, std::move(r), opened, failed, deadline);
  if (!opened()) return;
  if (r.tunnel) {
    if (r.ahead.empty() && !read_opening(st, client, upstream, r.ahead, deadline)) return;
    if (const std::string why = fronting(r.host, r.ahead); !why.empty()) return st.count_refused(r.host, r.port, why);
  }
  st.count_allowed(r.host, r.port);
  if (start_relaying(st, connection)) relay(st, client, upstream, std::move(r.ahead));
}

void serve_socks5(State& st, State::Connection& connection, int client, std::string buffer,
                  Clock::time_point deadline) {
  auto refuse = [&](const char* reason) { st.count_refused("(unparsed)", 0, reason); };
  // Greeting: version, method count, methods. Only "no authentication" is spoken.
  if (!receive_exactly(st.stop.get(), client, buffer, 2, deadline)) return;
  const size_t methods = static_cast<unsigned char>(buffer[1]);
  if (!receive_exactly(st.stop.get(), client, buffer, 2 + methods, deadline)) return;
  if (buffer.find('\0', 2) == std::string::npos || buffer.find('\0', 2) >= 2 + methods) {
    send_all(st.stop.get(), client, std::string("\x05\xff", 2), deadline);
    return refuse("SOCKS5 without its no-authentication method");
  }
  buffer.erase(0, 2 + methods);
  if (!send_all(st.stop.get(), client, std::string("\x05\x00", 2), deadline)) return;
  // Request: version, command, reserved, address type, address, port.
  if (!receive_exactly(st.stop.get(), client, buffer, 5, deadline)) return;
  const auto reply = [&](char code) {
    return send_all(st.stop.get(), client, std::string("\x05", 1) + code + std::string("\x00\x01\x00\x00\x00\x00\x00\x00", 8),
                    deadline);
  };
  if (buffer[0] != 5) return refuse("not a SOCKS5 request");
  if (buffer[1] != 1) {
    reply(7);
    return refuse("a SOCKS5 command other than CONNECT");
  }
  size_t length = 0;
  switch (buffer[3]) {
    case 1: length = 4 + 4; break;
    case 4: length = 4 + 16; break;
    case 3: length = 4 + 1 + static_cast<unsigned char>(buffer[4]); break;
    default: reply(8); return refuse("a SOCKS5 address of an unknown type");
  }
  if (!receive_exactly(st.stop.get(), client, buffer, length + 2, deadline)) return;
  char text[INET6_ADDRSTRLEN] = {};
  if (buffer[3] == 1) ::inet_ntop(AF_INET, buffer.data() + 4, text, sizeof text);
  if (buffer[3] == 4) ::inet_ntop(AF_INET6, buffer.data() + 4, text, sizeof text);
  Request r;
  r.host = buffer[3] == 3 ? buffer.substr(5, length - 5) : std::string(text);
  r.port = (static_cast<unsigned char>(buffer[length]) << 8) | static_cast<unsigned char>(buffer[length + 1]);
  r.ahead = buffer.substr(length + 2);
  if (r.host.empty() || r.host.find('\0') != std::string::npos) {
    reply(1);
    return refuse("a SOCKS5 host name that is empty or holds a NUL");
  }
  int status = 0;
  std::string message;
  os::UniqueFd upstream = open_upstream(st, r, deadline, status, message);
  if (!upstream.valid()) return (void)reply(status == 403 ? 2 : 5);
  carry(
      st, connection, client, upstream.get(), std::move(r), [&] { return reply(0); },
      [&](int, const std::string&) { reply(5); }, deadline);
}

void serve_http(State& st, State::Connection& connection, int client, std::string buffer,
                Clock::time_point deadline) {
  size_t end;
  while ((end = buffer.find("\r\n\r\n")) == std::string::npos && buffer.size() <= EgressProxy::kMaxHeaderBytes)
    if (!receive_some(st.stop.get(), client, buffer, deadline)) return;
  if (end == std::string::npos || end > EgressProxy::kMaxHeaderBytes) {
    st.count_refused("(unparsed)", 0, "a request header over 64 KiB");
    send_all(st.stop.get(), client, http_reply(431, "Request Header Fields Too Large", "corral: the request's header is too large"),
             deadline);
    return;
  }
  const std::string head = buffer.substr(0, end + 2);  // lines, each ending in CRLF
  const size_t line_end = head.find("\r\n");
  const std::string line = head.substr(0, line_end);
  const size_t s1 = line.find(' '), s2 = line.rfind(' ');
  auto bad = [&](const char* why) {
    st.count_refused("(unparsed)", 0, why);
    send_all(st.stop.get(), client, http_reply(400, "Bad Request", std::string("corral: ") + why), deadline);
  };
  if (s1 == std::string::npos || s2 == s1 || line.compare(s2 + 1, 7, "HTTP/1.") != 0)
    return bad("not an HTTP/1 proxy request");
  const std::string method = line.substr(0, s1), target = line.substr(s1 + 1, s2 - s1 - 1),
                    version = line.substr(s2 + 1);
  Request r;
  if (method == "CONNECT") {
    if (!split_authority(target, 0, r.host, r.port)) return bad("a CONNECT target that is not HOST:PORT");
    r.ahead = buffer.substr(end + 4);
  } else {
    constexpr std::string_view kHttp = "http://";
    if (target.size() < kHttp.size() || !std::equal(kHttp.begin(), kHttp.end(), target.begin(), [](char a, char b) {
          return a == std::tolower(static_cast<unsigned char>(b));
        }))
      return bad("not a proxy request: an absolute http:// URL or CONNECT is needed (https goes through CONNECT)");
    const size_t path = target.find_first_of("/?#", kHttp.size());
    const std::string authority = target.substr(kHttp.size(), path - kHttp.size());
    if (authority.find('@') != std::string::npos) return bad("a URL with credentials in its host part");
    if (!split_authority(authority, 80, r.host, r.port)) return bad("a URL without a host this proxy can reach");
    // The request as the server expects it: origin-form, its Host the URL's (never one
    // the client chose apart from the URL the list was asked about), no proxy headers,
    // one exchange.
    r.tunnel = false;
    r.ahead = method + " " + (path == std::string::npos ? "/" : target.substr(path)) + " " + version +
              "\r\nHost: " + authority + "\r\n";
    for (size_t at = line_end + 2; at < head.size();) {
      const size_t next = head.find("\r\n", at);
      const std::string header = head.substr(at, next - at);
      at = next + 2;
      std::string name = header.substr(0, header.find(':'));
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      if (name == "host" || name == "proxy-connection" || name == "proxy-authorization" || name == "connection" ||
          name == "keep-alive")
        continue;
      r.ahead += header + "\r\n";
    }
    r.ahead += "Connection: close\r\n\r\n" + buffer.substr(end + 4);
  }
  const auto failed = [&](int status, const std::string& message) {
    send_all(st.stop.get(), client, http_reply(status, status == 403 ? "Forbidden" : "Bad Gateway", message), deadline);
  };
  if (!r.tunnel && st.secrets && st.secrets->binds(r.host)) {
    const std::string why = "plain HTTP to a secret's host: its value never crosses in the clear (use https://)";
    st.count_refused(r.host, r.port, why);
    return failed(403, "corral: " + r.host + ":" + std::to_string(r.port) + " is refused: " + why);
  }
  int status = 0;
  std::string message;
  os::UniqueFd upstream = open_upstream(st, r, deadline, status, message);
  if (!upstream.valid()) return failed(status, message);
  const bool is_connect = method == "CONNECT";
  carry(
      st, connection, client, upstream.get(), std::move(r),
      [&] { return !is_connect || send_all(st.stop.get(), client, "HTTP/1.1 200 Connection established\r\n\r\n", deadline); },
      failed, deadline);
}

void serve(State& st, State::Connection& connection, int client) {
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(EgressProxy::kHandshakeSeconds);
  std::string buffer;
  if (!receive_some(st.stop.get(), client, buffer, deadline, 1)) return;
  if (buffer[0] == 5) serve_socks5(st, connection, client, std::move(buffer), deadline);
  else serve_http(st, connection, client, std::move(buffer), deadline);
}

// The listening socket the jail's starter sends; invalid when the jail ends first.
os::UniqueFd receive_listener(const State& st, int channel) {
  if (!wait_for(st.stop.get(), channel, POLLIN, std::nullopt)) return {};
  char byte = 0;
  iovec data{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  if (::recvmsg(channel, &message, MSG_CMSG_CLOEXEC) != 1) return {};
  const cmsghdr* rights = CMSG_FIRSTHDR(&message);
  if (!rights || rights->cmsg_level != SOL_SOCKET || rights->cmsg_type != SCM_RIGHTS ||
      rights->cmsg_len != CMSG_LEN(sizeof(int)))
    return {};
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(rights), sizeof fd);
  os::UniqueFd listener(fd);
  int listening = 0;
  socklen_t size = sizeof listening;
  if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) != 0 || !listening) return {};
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  return listener;
}

// Admits `client` unless the proxy is full. At the cap the oldest connection still
// handshaking is shut down for it, so a flood of idle connections cannot lock the jail's
// programs out; with every slot relaying, `client` is refused. The admitted entry, or none.
std::optional<std::list<State::Connection>::iterator> admit(State& st, int client, bool& evicted) {
  std::lock_guard lock(st.mutex);
  const auto live = std::count_if(st.connections.begin(), st.connections.end(),
                                  [](const State::Connection& c) { return !c.evicted; });
  if (live >= EgressProxy::kMaxConnections) {
    auto oldest = std::find_if(st.connections.begin(), st.connections.end(),
                               [](const State::Connection& c) { return c.handshaking && !c.evicted; });
    if (oldest == st.connections.end()) return std::nullopt;
    oldest->evicted = evicted = true;
    ::shutdown(oldest->fd, SHUT_RDWR);  // its thread wakes and ends
  }
  return st.connections.insert(st.connections.end(), State::Connection{client});
}

void accept_connections(const std::shared_ptr<State>& st, os::UniqueFd channel) {
  const os::UniqueFd listener = receive_listener(*st, channel.get());
  channel.reset();
  if (!listener.valid()) return;
  while (wait_for(st->stop.get(), listener.get(), POLLIN, std::nullopt)) {
    os::UniqueFd client(::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!client.valid()) continue;
    no_delay(client.get());
    bool evicted = false;
    const auto entry = admit(*st, client.get(), evicted);
    if (evicted) st->count_refused("(unparsed)", 0, "closed while handshaking, for a newer connection");
    if (!entry) {
      st->count_refused("(unparsed)", 0, "too many connections at once");
      continue;  // closed unheard
    }
    std::thread([st, it = *entry, fd = client.release()] {
      os::UniqueFd socket(fd);
      serve(*st, *it, socket.get());
      std::lock_guard lock(st->mutex);
      st->connections.erase(it);
      st->idle.notify_all();
    }).detach();
  }
}

}  // namespace

std::optional<std::string> tls_server_name(std::string_view bytes) {
  // A cursor over big-endian fields; every read is bounded by what is there.
  struct Cursor {
    std::string_view rest;
    bool ok = true;
    size_t number(size_t width) {
      if (rest.size() < width) ok = false;
      if (!ok) return 0;
      size_t n = 0;
      for (size_t i = 0; i < width; ++i) n = (n << 8) | static_cast<unsigned char>(rest[i]);
      rest.remove_prefix(width);
      return n;
    }
    std::string_view take(size_t n) {
      if (rest.size() < n) ok = false;
      if (!ok) return {};
      const std::string_view out = rest.substr(0, n);
      rest.remove_prefix(n);
      return out;
    }
  };
  Cursor record{bytes};
  if (record.number(1) != 0x16) return std::nullopt;  // a handshake record
  record.number(2);                                   // its version
  Cursor handshake{record.take(record.number(2))};
  if (handshake.number(1) != 1) return std::nullopt;  // ClientHello
  Cursor hello{handshake.take(handshake.number(3))};
  hello.take(2 + 32);                        // version, random
  hello.take(hello.number(1));               // session id
  hello.take(hello.number(2));               // cipher suites
  hello.take(hello.number(1));               // compression methods
  Cursor extensions{hello.take(hello.number(2))};
  if (!record.ok || !handshake.ok || !hello.ok) return std::nullopt;
  while (extensions.ok && !extensions.rest.empty()) {
    const size_t type = extensions.number(2);
    Cursor data{extensions.take(extensions.number(2))};
    if (type != 0) continue;  // server_name
    Cursor names{data.take(data.number(2))};
    while (names.ok && !names.rest.empty()) {
      const size_t kind = names.number(1);
      const std::string_view name = names.take(names.number(2));
      if (names.ok && kind == 0) return std::string(name);  // host_name
    }
    return std::nullopt;
  }
  return std::nullopt;
}

EgressProxy::EgressProxy(EgressPolicy policy, os::UniqueFd channel, std::shared_ptr<EgressInterceptor> secrets)
    : state_(std::make_shared<State>(std::move(policy), std::move(secrets))) {
  if (!state_->stop.valid()) throw os::errno_error(ErrorCode::internal, "cannot make the egress proxy's stop event", errno);
  acceptor_ = std::thread([st = state_, ch = channel.release()] { accept_connections(st, os::UniqueFd(ch)); });
}

EgressProxy::~EgressProxy() {
  const std::uint64_t one = 1;
  (void)!::write(state_->stop.get(), &one, sizeof one);
  acceptor_.join();
  // Each connection's thread wakes on the stop event; one resolving a name ends when the
  // resolver gives up.
  std::unique_lock lock(state_->mutex);
  state_->idle.wait(lock, [&] { return state_->connections.empty(); });
}

EgressReport EgressProxy::report() const {
  std::lock_guard lock(state_->mutex);
  EgressReport r;
  for (const auto& [key, count] : state_->allowed) r.allowed.push_back({key.first, key.second, count, {}});
  for (const auto& [key, count] : state_->refused)
    r.refused.push_back({std::get<0>(key), std::get<1>(key), count, std::get<2>(key)});
  return r;
}

}  // namespace corral::local
