#include "https_upstream.hpp"

#include <arpa/inet.h>
#include <csignal>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <fstream>

#include "egress_tls.hpp"

namespace corral::test {

struct HttpsUpstream::Tls {
  local::EgressCa ca;
  local::SslCtxPtr server;
};

HttpsUpstream::HttpsUpstream(const std::string& name) : tls_(std::make_unique<Tls>()) {
  // OpenSSL writes to the socket with write(): a client gone mid-answer must not kill the test.
  ::signal(SIGPIPE, SIG_IGN);
  listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(listener_ >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof a;
  REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(listener_, 64) == 0);
  REQUIRE(::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &size) == 0);
  port_ = ntohs(a.sin_port);
  ca_file_ = std::filesystem::temp_directory_path() /
             ("corral-upstream-ca-" + std::to_string(::getpid()) + "-" + std::to_string(port_) + ".pem");
  std::ofstream(ca_file_) << tls_->ca.certificate_pem();
  tls_->server = tls_->ca.server_context(name);
  SSL_CTX* ctx = tls_->server.get();
  thread_ = std::thread([this, ctx] {
    for (;;) {
      const int c = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) return;  // shut down
      timeval limit{10, 0};
      ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
      SSL* ssl = SSL_new(ctx);
      SSL_set_fd(ssl, c);
      if (SSL_accept(ssl) == 1) {
        std::string head;
        char chunk[4096];
        for (int n; head.find("\r\n\r\n") == std::string::npos && head.size() < 65536 &&
                    (n = SSL_read(ssl, chunk, sizeof chunk)) > 0;)
          head.append(chunk, static_cast<size_t>(n));
        std::string auth = "(none)";
        if (const size_t at = head.find("\r\nAuthorization: "); at != std::string::npos)
          auth = head.substr(at + 17, head.find("\r\n", at + 2) - at - 17);
        if (head.empty()) {  // a connection that sent nothing (a proxy that gave up) is no request
          SSL_free(ssl);
          ::close(c);
          continue;
        }
        {
          std::lock_guard lock(mutex_);
          heads_.push_back(head);
        }
        const std::string body = "you sent " + auth;
        // GET /gzip: an answer that says it is compressed (it is not), whatever was asked.
        const std::string encoding = head.rfind("GET /gzip ", 0) == 0 ? "Content-Encoding: gzip\r\n" : "";
        const std::string reply = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n" + encoding +
                                  "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
                                  body;
        SSL_write(ssl, reply.data(), static_cast<int>(reply.size()));
        SSL_shutdown(ssl);
      }
      SSL_free(ssl);
      ::close(c);
    }
  });
}

HttpsUpstream::~HttpsUpstream() {
  ::shutdown(listener_, SHUT_RDWR);
  thread_.join();
  ::close(listener_);
  std::error_code ec;
  std::filesystem::remove(ca_file_, ec);
}

std::vector<std::string> HttpsUpstream::heads() const {
  std::lock_guard lock(mutex_);
  return heads_;
}

}  // namespace corral::test
