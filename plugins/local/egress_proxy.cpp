#include "egress_proxy.hpp"

#include <arpa/inet.h>
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
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "corral/os/errno_error.hpp"

namespace corral::local {

using Clock = std::chrono::steady_clock;

struct EgressProxy::State {
  explicit State(EgressPolicy p) : policy(std::move(p)) {}
  EgressPolicy policy;
  os::UniqueFd stop{::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)};

  mutable std::mutex mutex;
  std::condition_variable idle;
  int active = 0;  // connection threads running
  std::map<std::pair<std::string, int>, std::int64_t> allowed;
  std::map<std::tuple<std::string, int, std::string>, std::int64_t> refused;

  bool stopping() const {
    pollfd p{stop.get(), POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
  }
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

// Waits until `fd` is ready for `events`, the proxy stops, or `deadline` passes (none:
// no deadline). True when `fd` is ready.
bool wait_for(const State& st, int fd, short events, std::optional<Clock::time_point> deadline) {
  for (;;) {
    int ms = -1;
    if (deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      if (left <= 0) return false;
      ms = static_cast<int>(std::min<long long>(left, 60'000));
    }
    pollfd p[2] = {{fd, events, 0}, {st.stop.get(), POLLIN, 0}};
    const int n = ::poll(p, 2, ms);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || p[1].revents) return false;
    if (p[0].revents) return true;
  }
}

// Writes all of `data`; false when the peer is gone, the proxy stops or the deadline passes.
bool send_all(const State& st, int fd, std::string_view data, std::optional<Clock::time_point> deadline) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
    if (!wait_for(st, fd, POLLOUT, deadline)) return false;
  }
  return true;
}

// Reads at least one byte into `buffer` (appended); false at the end, on an error, a stop
// or the deadline.
bool receive_some(const State& st, int fd, std::string& buffer, Clock::time_point deadline, size_t max = 16384) {
  for (;;) {
    char chunk[16384];
    const ssize_t n = ::recv(fd, chunk, std::min(max, sizeof chunk), 0);
    if (n > 0) {
      buffer.append(chunk, static_cast<size_t>(n));
      return true;
    }
    if (n == 0 || (errno != EAGAIN && errno != EINTR)) return false;
    if (!wait_for(st, fd, POLLIN, deadline)) return false;
  }
}

// Exactly `n` more bytes at the front of `buffer` (reading as needed).
bool receive_exactly(const State& st, int fd, std::string& buffer, size_t n, Clock::time_point deadline) {
  while (buffer.size() < n)
    if (!receive_some(st, fd, buffer, deadline, n - buffer.size())) return false;
  return true;
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
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&a.address), a.size) == 0) return fd;
    if (errno != EINPROGRESS) {
      why = std::strerror(errno);
      continue;
    }
    if (!wait_for(st, fd.get(), POLLOUT, deadline)) {
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

std::string http_reply(int status, const char* phrase, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(status) + " " + phrase +
         "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: " +
         std::to_string(body.size() + 1) + "\r\n\r\n" + body + "\n";
}

// What a refusal tells the command, in the proxy's reply.
std::string refusal_text(const std::string& host, int port, const std::string& reason) {
  return "corral: " + host + ":" + std::to_string(port) + " is refused: " + reason +
         " (this sandbox's --network allow: list decides what it may reach)";
}

// Decides, connects and counts; the upstream socket, or invalid with `status`/`message`
// set for the reply.
os::UniqueFd open_upstream(State& st, const std::string& host, int port, Clock::time_point deadline, int& status,
                           std::string& message) {
  const EgressDecision d = st.policy.decide(host, port);
  if (!d.allowed) {
    st.count_refused(host, port, d.reason);
    status = 403;
    message = refusal_text(host, port, d.reason);
    return {};
  }
  st.count_allowed(host, port);
  std::string why;
  os::UniqueFd upstream = connect_upstream(st, d.addresses, deadline, why);
  if (!upstream.valid()) {
    status = 502;
    message = "corral: cannot connect to " + host + ":" + std::to_string(port) + ": " + why;
  }
  return upstream;
}

void serve_socks5(State& st, int client, std::string buffer, Clock::time_point deadline) {
  auto refuse = [&](const char* reason) { st.count_refused("(unparsed)", 0, reason); };
  // Greeting: version, method count, methods. Only "no authentication" is spoken.
  if (!receive_exactly(st, client, buffer, 2, deadline)) return;
  const size_t methods = static_cast<unsigned char>(buffer[1]);
  if (!receive_exactly(st, client, buffer, 2 + methods, deadline)) return;
  if (buffer.find('\0', 2) == std::string::npos || buffer.find('\0', 2) >= 2 + methods) {
    send_all(st, client, std::string("\x05\xff", 2), deadline);
    return refuse("SOCKS5 without its no-authentication method");
  }
  buffer.erase(0, 2 + methods);
  if (!send_all(st, client, std::string("\x05\x00", 2), deadline)) return;
  // Request: version, command, reserved, address type, address, port.
  if (!receive_exactly(st, client, buffer, 5, deadline)) return;
  const auto reply = [&](char code) {
    send_all(st, client, std::string("\x05", 1) + code + std::string("\x00\x01\x00\x00\x00\x00\x00\x00", 8), deadline);
  };
  if (buffer[0] != 5) return refuse("not a SOCKS5 request");
  if (buffer[1] != 1) {
    reply(7);
    return refuse("a SOCKS5 command other than CONNECT");
  }
  std::string host;
  size_t length = 0;
  switch (buffer[3]) {
    case 1: length = 4 + 4; break;
    case 4: length = 4 + 16; break;
    case 3: length = 4 + 1 + static_cast<unsigned char>(buffer[4]); break;
    default: reply(8); return refuse("a SOCKS5 address of an unknown type");
  }
  if (!receive_exactly(st, client, buffer, length + 2, deadline)) return;
  char text[INET6_ADDRSTRLEN] = {};
  if (buffer[3] == 1) ::inet_ntop(AF_INET, buffer.data() + 4, text, sizeof text);
  if (buffer[3] == 4) ::inet_ntop(AF_INET6, buffer.data() + 4, text, sizeof text);
  host = buffer[3] == 3 ? buffer.substr(5, length - 5) : std::string(text);
  const int port = (static_cast<unsigned char>(buffer[length]) << 8) | static_cast<unsigned char>(buffer[length + 1]);
  buffer.erase(0, length + 2);
  int status = 0;
  std::string message;
  os::UniqueFd upstream = open_upstream(st, host, port, deadline, status, message);
  if (!upstream.valid()) return reply(status == 403 ? 2 : 5);
  reply(0);
  relay(st, client, upstream.get(), std::move(buffer));
}

void serve_http(State& st, int client, std::string buffer, Clock::time_point deadline) {
  size_t end;
  while ((end = buffer.find("\r\n\r\n")) == std::string::npos) {
    if (buffer.size() > EgressProxy::kMaxHeaderBytes) {
      st.count_refused("(unparsed)", 0, "a request header over 64 KiB");
      send_all(st, client, http_reply(431, "Request Header Fields Too Large", "corral: the request's header is too large"),
               deadline);
      return;
    }
    if (!receive_some(st, client, buffer, deadline)) return;
  }
  if (end > EgressProxy::kMaxHeaderBytes) {
    st.count_refused("(unparsed)", 0, "a request header over 64 KiB");
    send_all(st, client, http_reply(431, "Request Header Fields Too Large", "corral: the request's header is too large"),
             deadline);
    return;
  }
  const std::string head = buffer.substr(0, end + 2);  // lines, each ending in CRLF
  std::string rest = buffer.substr(end + 4);
  const size_t line_end = head.find("\r\n");
  const std::string line = head.substr(0, line_end);
  const size_t s1 = line.find(' '), s2 = line.rfind(' ');
  auto bad = [&](const char* why) {
    st.count_refused("(unparsed)", 0, why);
    send_all(st, client, http_reply(400, "Bad Request", std::string("corral: ") + why), deadline);
  };
  if (s1 == std::string::npos || s2 == s1 || line.compare(s2 + 1, 7, "HTTP/1.") != 0)
    return bad("not an HTTP/1 proxy request");
  const std::string method = line.substr(0, s1), target = line.substr(s1 + 1, s2 - s1 - 1),
                    version = line.substr(s2 + 1);
  std::string host;
  int port = 0;
  std::string request;
  if (method == "CONNECT") {
    if (!split_authority(target, 0, host, port)) return bad("a CONNECT target that is not HOST:PORT");
  } else {
    constexpr std::string_view kHttp = "http://";
    if (target.size() < kHttp.size() || !std::equal(kHttp.begin(), kHttp.end(), target.begin(), [](char a, char b) {
          return a == std::tolower(static_cast<unsigned char>(b));
        }))
      return bad("not a proxy request: an absolute http:// URL or CONNECT is needed (https goes through CONNECT)");
    const size_t path = target.find_first_of("/?#", kHttp.size());
    const std::string authority = target.substr(kHttp.size(), path - kHttp.size());
    if (!split_authority(authority, 80, host, port)) return bad("a URL without a host this proxy can reach");
    // The request as the server expects it: origin-form, no proxy headers, one exchange.
    request = method + " " + (path == std::string::npos ? "/" : target.substr(path)) + " " + version + "\r\n";
    for (size_t at = line_end + 2; at < head.size();) {
      const size_t next = head.find("\r\n", at);
      const std::string header = head.substr(at, next - at);
      at = next + 2;
      std::string name = header.substr(0, header.find(':'));
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      if (name == "proxy-connection" || name == "proxy-authorization" || name == "connection" || name == "keep-alive")
        continue;
      request += header + "\r\n";
    }
    request += "Connection: close\r\n\r\n";
  }
  int status = 0;
  std::string message;
  os::UniqueFd upstream = open_upstream(st, host, port, deadline, status, message);
  if (!upstream.valid()) {
    send_all(st, client, http_reply(status, status == 403 ? "Forbidden" : "Bad Gateway", message), deadline);
    return;
  }
  if (method == "CONNECT") {
    if (!send_all(st, client, "HTTP/1.1 200 Connection established\r\n\r\n", deadline)) return;
    return relay(st, client, upstream.get(), std::move(rest));
  }
  relay(st, client, upstream.get(), request + rest);
}

void serve(State& st, os::UniqueFd client) {
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(EgressProxy::kHandshakeSeconds);
  std::string buffer;
  if (!receive_some(st, client.get(), buffer, deadline, 1)) return;
  if (buffer[0] == 5) serve_socks5(st, client.get(), std::move(buffer), deadline);
  else serve_http(st, client.get(), std::move(buffer), deadline);
}

// The listening socket the jail's starter sends; invalid when the jail ends first.
os::UniqueFd receive_listener(const State& st, int channel) {
  if (!wait_for(st, channel, POLLIN, std::nullopt)) return {};
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

void accept_connections(const std::shared_ptr<State>& st, os::UniqueFd channel) {
  const os::UniqueFd listener = receive_listener(*st, channel.get());
  channel.reset();
  if (!listener.valid()) return;
  while (wait_for(*st, listener.get(), POLLIN, std::nullopt)) {
    os::UniqueFd client(::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!client.valid()) continue;
    {
      std::lock_guard lock(st->mutex);
      if (st->active >= EgressProxy::kMaxConnections) {
        client.reset();  // closed unheard: a flood of idle connections holds no more than the cap
      } else {
        ++st->active;
      }
    }
    if (!client.valid()) {
      st->count_refused("(unparsed)", 0, "too many connections at once");
      continue;
    }
    std::thread([st, fd = client.release()] {
      serve(*st, os::UniqueFd(fd));
      std::lock_guard lock(st->mutex);
      --st->active;
      st->idle.notify_all();
    }).detach();
  }
}

}  // namespace

EgressProxy::EgressProxy(EgressPolicy policy, os::UniqueFd channel)
    : state_(std::make_shared<State>(std::move(policy))) {
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
  state_->idle.wait(lock, [&] { return state_->active == 0; });
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
