// bench-ws-follow: the baseline of the Daytona streaming row. Follows one WebSocket (a
// command's live log) to its close, discarding the messages, and prints the bytes received.
// It does what corral's Daytona plugin does on the wire and nothing else: no decoding, no
// output, no cancellation checks.
//
//   bench-ws-follow http://127.0.0.1:PORT/PATH?QUERY 'Authorization: Bearer KEY'

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <cstdio>
#include <exception>
#include <string>

namespace {

namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
using tcp = boost::asio::ip::tcp;

struct Url {
  std::string host, port, target;
};

// Splits a plain http://host:port/target URL; the benchmark only talks to loopback stand-ins.
Url split_url(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) throw std::runtime_error("expected an http:// URL, got " + url);
  const auto slash = url.find('/', scheme.size());
  const std::string authority = url.substr(scheme.size(), slash - scheme.size());
  const auto colon = authority.rfind(':');
  if (colon == std::string::npos) throw std::runtime_error("the URL needs an explicit port: " + url);
  return {authority.substr(0, colon), authority.substr(colon + 1), slash == std::string::npos ? "/" : url.substr(slash)};
}

// Reads every message until the server closes; returns the payload bytes received.
unsigned long long follow(const Url& url, const std::string& header) {
  boost::asio::io_context io;
  websocket::stream<tcp::socket> ws(io);
  tcp::resolver resolver(io);
  boost::asio::connect(ws.next_layer(), resolver.resolve(url.host, url.port));
  const auto colon = header.find(':');
  ws.set_option(websocket::stream_base::decorator([&](websocket::request_type& req) {
    if (colon != std::string::npos) req.set(header.substr(0, colon), header.substr(header.find_first_not_of(' ', colon + 1)));
  }));
  ws.read_message_max(0);  // like corral: no cap on one message's size
  ws.handshake(url.host + ":" + url.port, url.target);
  unsigned long long bytes = 0;
  beast::flat_buffer buffer;
  for (;;) {
    beast::error_code ec;
    bytes += ws.read(buffer, ec);
    buffer.consume(buffer.size());
    if (ec == websocket::error::closed) return bytes;
    if (ec) throw beast::system_error(ec);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: bench-ws-follow URL 'Header: value'\n");
    return 64;
  }
  try {
    std::printf("%llu\n", follow(split_url(argv[1]), argv[2]));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench-ws-follow: %s\n", e.what());
    return 1;
  }
}
