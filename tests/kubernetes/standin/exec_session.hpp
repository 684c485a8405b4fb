// One exec, over the WebSocket the request upgraded to, as the API server and kubelet
// speak it (SOURCES.md, "Exec over WebSocket"): subprotocol v5.channel.k8s.io or
// v4.channel.k8s.io; an empty first message on the lowest output channel; every message
// one channel byte then data (0 stdin, 1 stdout, 2 stderr, 3 status, 4 resize, 255 close);
// under v5 the client half-closes stdin with [255, 0]; the exit as a metav1.Status on
// channel 3 (Success, or NonZeroExitCode with an ExitCode cause, or InternalError when the
// command could not run), then a normal close. The command runs in the pod for real.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "http_types.hpp"
#include "state.hpp"

namespace corral::kubernetes::standin {

using TlsStream = boost::beast::ssl_stream<boost::asio::ip::tcp::socket>;

// Accepts the upgrade `request` on `stream` and runs the exec to its end, on `ioc` (the
// connection's own, run on the calling thread).
void run_exec(State& state, const ExecPlan& plan, TlsStream& stream, boost::asio::io_context& ioc,
              const boost::beast::http::request<boost::beast::http::string_body>& request);

}  // namespace corral::kubernetes::standin
