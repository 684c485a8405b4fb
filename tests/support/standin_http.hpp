// How the stand-ins of HTTP APIs (E2B's, Daytona's) listen: on this machine's loopback
// only, answering without Nagle's delay as the Go servers they stand in for do.
//
// Threads: call before the server's listening thread starts.
#pragma once

#include <httplib.h>

namespace corral::test {

// Binds `server` to 127.0.0.1:`port` (0: a free one) with TCP_NODELAY, as net/http sets it
// on every connection: without it an answer written in two parts waits out the client's
// delayed ACK, 40 ms. Returns the port, or -1 when it cannot be bound.
inline int bind_loopback(httplib::Server& server, int port) {
  server.set_tcp_nodelay(true);
  if (port == 0) return server.bind_to_any_port("127.0.0.1");
  return server.bind_to_port("127.0.0.1", port) ? port : -1;
}

}  // namespace corral::test
