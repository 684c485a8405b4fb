// The stand-in's toolbox: one thread per connection, HTTP routes under
// /toolbox/{sandboxId}/ and the WebSocket follow of a command's log.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "state.hpp"

namespace corral::daytona::standin {

class ToolboxServer {
 public:
  // Listens on 127.0.0.1:`port` (0 = any free port).
  ToolboxServer(State& state, int port);
  ~ToolboxServer();
  int port() const { return port_; }

 private:
  void accept_loop();
  void serve(std::shared_ptr<boost::asio::ip::tcp::socket> socket);

  State& state_;
  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread accept_thread_;
  std::mutex connections_mutex_;
  std::vector<std::shared_ptr<boost::asio::ip::tcp::socket>> sockets_;
  std::vector<std::thread> connections_;
};

}  // namespace corral::daytona::standin
