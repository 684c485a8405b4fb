#include "egress_intercept.hpp"

#include <sys/socket.h>

#include <cctype>
#include <cerrno>
#include <functional>

#include "egress_proxy.hpp"

namespace corral::local {
namespace {

using Io = TlsStream::Io;

constexpr size_t kHighWater = 1 << 20;  // bytes buffered one way before its reading pauses

// Drives `tls`'s handshake over socket `fd`; false, with `why` set, when it fails.
bool handshake_over(TlsStream& tls, int fd, int stop, EgressClock::time_point deadline, std::string& why) {
  for (;;) {
    const Io io = tls.handshake();
    if (!send_all(stop, fd, tls.take_outgoing(), deadline)) {
      why = "the connection ended during the TLS handshake";
      return false;
    }
    if (io == Io::progress) return true;
    if (io == Io::failed) {
      why = tls.failure();
      return false;
    }
    std::string in;
    if (io == Io::ended || !receive_some(stop, fd, in, deadline)) {
      why = "no TLS handshake in time, or the connection ended during it";
      return false;
    }
    tls.received(in);
  }
}

// One side of the pump: a socket and the TLS stream over it.
struct Side {
  int fd;
  TlsStream& tls;
  std::string to_send;  // ciphertext for the socket
  bool eof = false;     // the socket reached its end

  // Sends what it can without waiting; false when the peer is gone.
  bool send_some(bool& moved) {
    to_send += tls.take_outgoing();
    while (!to_send.empty()) {
      const ssize_t n = ::send(fd, to_send.data(), to_send.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        to_send.erase(0, static_cast<size_t>(n));
        moved = true;
        continue;
      }
      return n < 0 && (errno == EAGAIN || errno == EINTR);
    }
    return true;
  }
  // Reads what the socket has into the TLS stream.
  void receive(bool& moved) {
    char chunk[65536];
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, MSG_DONTWAIT);
    if (n > 0) tls.received(std::string_view(chunk, static_cast<size_t>(n)));
    else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      eof = true;
      tls.received_end();
    } else return;
    moved = true;
  }
};

class Pump {
 public:
  Pump(const std::vector<const Secret*>& bound, const std::string& host, Side client, Side upstream, int stop)
      : bound_(bound), host_(host), client_(std::move(client)), upstream_(std::move(upstream)), stop_(stop),
        mask_(bound) {}

  InterceptOutcome run() {
    for (;;) {
      bool moved = false;
      if (!requests(moved) || !answers(moved)) return outcome_;
      if (!client_.send_some(moved) || !upstream_.send_some(moved)) return outcome_;
      if (answer_ended_ && to_client_.empty() && client_.to_send.empty()) return outcome_;
      if (!moved && !wait()) return outcome_;
    }
  }

 private:
  // The client's request: its head held until whole, then rewritten, the rest as it comes.
  bool requests(bool& moved) {
    if (!request_ended_ && to_upstream_.size() < kHighWater && upstream_.to_send.size() < kHighWater) {
      std::string got;
      const Io io = client_.tls.read(got);
      if (!got.empty()) {
        moved = true;
        if (head_done_) to_upstream_ += got;
        else if (!take_head(got)) return false;
      } else if (io == Io::ended || io == Io::failed) {
        request_ended_ = true;
        if (!head_done_) return false;  // gone before asking anything
      }
    }
    if (!to_upstream_.empty()) {
      const size_t before = to_upstream_.size();
      if (upstream_.tls.write(to_upstream_) == Io::failed) return false;
      moved |= to_upstream_.size() != before;
    }
    return true;
  }

  bool take_head(const std::string& got) {
    head_ += got;
    const size_t end = head_.find("\r\n\r\n");
    if (end == std::string::npos) {
      if (head_.size() <= EgressProxy::kMaxHeaderBytes) return true;
      return refuse(431, "Request Header Fields Too Large", "a request header over 64 KiB");
    }
    std::string refused;
    std::string head = rewrite_request_head(std::string_view(head_).substr(0, end + 4), host_, bound_, refused);
    if (head.empty()) return refuse(403, "Forbidden", refused);
    to_upstream_ = std::move(head) + head_.substr(end + 4);
    head_.clear();
    head_done_ = true;
    outcome_.sent = true;
    return true;
  }

  // Answers the client itself, closing: the request never reaches the server.
  bool refuse(int status, const char* phrase, const std::string& why) {
    outcome_.refused = why;
    std::string reply = http_reply(status, phrase, "corral: the request to " + host_ + " is refused: " + why);
    client_.tls.write(reply);
    client_.tls.close();
    bool moved = false;
    const EgressClock::time_point deadline = EgressClock::now() + std::chrono::seconds(2);
    while (client_.send_some(moved) && !client_.to_send.empty() && wait_for(stop_, client_.fd, POLLOUT, deadline)) {
    }
    return false;
  }

  // The server's answer to the client: each head held until whole and checked (a body
  // encoded against the request's word cannot be masked), all of it masked; the client's
  // stream closed after the answer's end.
  bool answers(bool& moved) {
    if (!answer_ended_ && to_client_.size() < kHighWater && client_.to_send.size() < kHighWater) {
      std::string got;
      const Io io = upstream_.tls.read(got);
      if (!got.empty()) {
        moved = true;
        if (!take_answer(got)) return false;
      } else if (io == Io::ended || io == Io::failed) {
        moved = answer_ended_ = true;
        to_client_ += mask_.feed(answer_head_);  // an answer cut inside its head, as it came
        answer_head_.clear();
        to_client_ += mask_.finish();
      }
    }
    if (!to_client_.empty()) {
      const size_t before = to_client_.size();
      if (client_.tls.write(to_client_) == Io::failed) return false;
      moved |= to_client_.size() != before;
    }
    if (answer_ended_ && to_client_.empty()) client_.tls.close();
    return true;
  }

  // Passes `got` on, once the answer's heads before it are whole and checked; false when
  // the answer is refused.
  bool take_answer(const std::string& got) {
    if (in_body_) {
      to_client_ += mask_.feed(got);
      return true;
    }
    answer_head_ += got;
    for (;;) {
      const size_t end = answer_head_.find("\r\n\r\n");
      if (end == std::string::npos) {
        if (answer_head_.size() <= EgressProxy::kMaxHeaderBytes) return true;
        return refuse(502, "Bad Gateway", "the server's answer head is over 64 KiB");
      }
      const std::string head = answer_head_.substr(0, end + 4);
      const AnswerHead h = read_answer_head(head);
      if (!h.unmaskable.empty()) return refuse(502, "Bad Gateway", h.unmaskable);
      answer_head_.erase(0, end + 4);
      to_client_ += mask_.feed(head);
      if (h.status >= 100 && h.status < 200 && h.status != 101) continue;  // interim: the final head follows
      in_body_ = true;
      to_client_ += mask_.feed(answer_head_);
      answer_head_.clear();
      return true;
    }
  }

  // Waits for a socket to be ready for what the pump needs of it; false on a stop. A side
  // is read only while what it would add to the other's queues is under the high water,
  // and a side with nothing to wait for is left out (a reset socket would wake poll for
  // ever otherwise).
  bool wait() {
    pollfd p[3] = {{client_.fd, 0, 0}, {upstream_.fd, 0, 0}, {stop_, POLLIN, 0}};
    if (!client_.eof && !request_ended_ && to_upstream_.size() < kHighWater && upstream_.to_send.size() < kHighWater)
      p[0].events |= POLLIN;
    if (!client_.to_send.empty()) p[0].events |= POLLOUT;
    if (!upstream_.eof && !answer_ended_ && to_client_.size() < kHighWater && client_.to_send.size() < kHighWater)
      p[1].events |= POLLIN;
    if (!upstream_.to_send.empty()) p[1].events |= POLLOUT;
    for (pollfd& side : {std::ref(p[0]), std::ref(p[1])})
      if (side.events == 0) side.fd = -1;
    if (::poll(p, 3, -1) < 0) return errno == EINTR;
    if (p[2].revents) return false;
    bool moved = false;
    if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) client_.receive(moved);
    if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) upstream_.receive(moved);
    return true;
  }

  const std::vector<const Secret*>& bound_;
  const std::string& host_;
  Side client_, upstream_;
  int stop_;
  ResponseMask mask_;
  std::string head_;         // the request head until whole
  bool head_done_ = false;
  std::string to_upstream_;  // plaintext for the server
  std::string to_client_;    // masked plaintext for the client
  std::string answer_head_;  // the answer's head until whole
  bool in_body_ = false;     // past the answer's final head
  bool request_ended_ = false;
  bool answer_ended_ = false;
  InterceptOutcome outcome_;
};

}  // namespace

std::optional<TlsStream> open_tls_upstream(EgressSecrets& secrets, int upstream, const std::string& host, int stop,
                                           EgressClock::time_point deadline, std::string& why) {
  TlsStream tls = TlsStream::client(secrets.upstream(), host);
  if (!handshake_over(tls, upstream, stop, deadline, why)) return std::nullopt;
  return tls;
}

InterceptOutcome intercept(EgressSecrets& secrets, const std::vector<const Secret*>& bound, const std::string& host,
                           int client, std::string ahead, int upstream, TlsStream& upstream_tls, int stop) {
  InterceptOutcome outcome;
  TlsStream client_tls = TlsStream::server(secrets.ca().server_context(host).get());  // SSL_new holds it
  client_tls.received(ahead);
  std::string why;
  const auto deadline = EgressClock::now() + std::chrono::seconds(EgressProxy::kHandshakeSeconds);
  if (!handshake_over(client_tls, client, stop, deadline, why)) {
    // A client that pins its server's certificate, or trusts only its own store, ends here.
    outcome.refused = "the client's TLS handshake with the proxy failed: " + why;
    return outcome;
  }
  // The name the client's TLS asked for must be the host it asked the proxy for.
  if (const std::optional<std::string> name = client_tls.server_name()) {
    std::string said = *name, wanted = host;
    for (std::string* s : {&said, &wanted})
      for (char& c : *s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (said != wanted) {
      outcome.refused = "its TLS handshake names another server ('" + said.substr(0, 253) + "')";
      return outcome;
    }
  }
  return Pump(bound, host, Side{client, client_tls}, Side{upstream, upstream_tls}, stop).run();
}

}  // namespace corral::local
