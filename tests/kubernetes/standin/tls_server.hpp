// The stand-in API server's listener: HTTPS on 127.0.0.1 with the stand-in CA's server
// certificate, asking for (not requiring) a client certificate, one thread per connection
// (each with its own io_context, for the exec WebSocket's asynchronous work), HTTP/1.1
// keep-alive, chunked watch streams, and the exec upgrade on the same port, as the real
// API server serves them.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <list>
#include <memory>
#include <mutex>
#include <thread>

#include "api.hpp"
#include "pki.hpp"
#include "state.hpp"

namespace corral::kubernetes::standin {

class TlsServer {
 public:
  // Listens on 127.0.0.1:`port` (0: any free port).
  TlsServer(State& state, const Pki& pki, int port);
  ~TlsServer();
  TlsServer(const TlsServer&) = delete;
  TlsServer& operator=(const TlsServer&) = delete;
  int port() const { return port_; }

 private:
  struct Connection;
  void accept_loop();
  void serve(const std::shared_ptr<Connection>& connection);

  State& state_;
  Api api_;
  boost::asio::ssl::context tls_;
  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread accept_thread_;
  std::mutex connections_mutex_;
  std::list<std::shared_ptr<Connection>> connections_;
};

}  // namespace corral::kubernetes::standin
