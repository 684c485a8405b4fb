#include "corral/sdk/websocket.hpp"

#include <curl/curl.h>
#include <openssl/ssl.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>

#include "corral/sdk/http.hpp"

namespace corral::sdk::websocket {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace ws = boost::beast::websocket;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

// The most a read hands to on_message at once.
constexpr std::size_t kPieceBytes = 64 * 1024;
// The largest message whole_messages collects.
constexpr std::size_t kMaxWholeMessage = 16 * 1024 * 1024;
// How long a server that sent a close frame gets to close the TCP connection after it.
// RFC 6455 7.1.1: the client should wait for the server to, and may close it itself once
// Close went both ways and the server did not in a reasonable time.
constexpr std::chrono::seconds kCloseWait{1};

// Where a ws(s) URL points.
struct Target {
  bool tls = false;
  std::string host;  // without brackets for IPv6 literals
  std::string port;
  std::string host_header;  // host[:port] as the Host header carries it
  std::string path;         // path and query
  std::string http_url;     // the same URL with an http(s) scheme, for the URL rules
};

std::string part(CURLU* u, CURLUPart which, unsigned flags = 0) {
  char* value = nullptr;
  std::string out;
  if (curl_url_get(u, which, &value, flags) == CURLUE_OK && value) out = value;
  curl_free(value);
  return out;
}

// Parses and checks `url`; throws invalid-argument for anything but an absolute
// http(s)/ws(s) URL, and for plain ws to a host that is not loopback.
Target target_of(const std::string& url, const std::string& what) {
  std::string http_url = url;
  if (url.rfind("ws://", 0) == 0) http_url = "http://" + url.substr(5);
  else if (url.rfind("wss://", 0) == 0) http_url = "https://" + url.substr(6);
  http::check_url(http_url, what + " URL");
  CURLU* u = curl_url();
  if (!u) throw Error(ErrorCode::internal, "out of memory parsing a URL");
  Target t;
  if (curl_url_set(u, CURLUPART_URL, http_url.c_str(), 0) == CURLUE_OK) {
    t.tls = part(u, CURLUPART_SCHEME) == "https";
    t.host = part(u, CURLUPART_HOST);
    t.port = part(u, CURLUPART_PORT, CURLU_DEFAULT_PORT);
    const std::string explicit_port = part(u, CURLUPART_PORT);
    t.host_header = t.host + (explicit_port.empty() ? "" : ":" + explicit_port);
    t.path = part(u, CURLUPART_PATH);
    const std::string query = part(u, CURLUPART_QUERY);
    if (!query.empty()) t.path += "?" + query;
  }
  curl_url_cleanup(u);
  if (t.host.empty() || t.port.empty()) throw Error(ErrorCode::invalid_argument, what + ": cannot parse its URL");
  if (t.path.empty()) t.path = "/";
  if (t.host.size() > 2 && t.host.front() == '[' && t.host.back() == ']') t.host = t.host.substr(1, t.host.size() - 2);
  t.http_url = http_url;
  return t;
}

// Runs asynchronous operations in slices of 100 ms so that cancellation and deadlines are
// noticed promptly; `stop` closes the socket, which completes any pending operation.
class Driver {
 public:
  Driver(net::io_context& ioc, const Request& request, std::function<void()> stop)
      : ioc_(ioc), request_(request), stop_(std::move(stop)) {}

  using Deadline = std::function<std::optional<Clock::time_point>()>;

  // Runs until `done` is true. Returns normally; sets cancelled()/expired() when the
  // socket had to be closed because of them. `deadline` is asked again each slice, so it
  // may move (an idle deadline moves with every message).
  void until(const bool& done, const Deadline& deadline) {
    Clock::time_point next_check = Clock::now() + kSlice;
    while (!done) {
      if (ioc_.stopped()) ioc_.restart();
      // One handler at a time, not a whole slice: other work may stay pending (a write of
      // stdin, a ping), and run_for would sit out the rest of the slice after `done`.
      ioc_.run_one_until(next_check);
      if (done) break;
      if (Clock::now() < next_check) continue;
      next_check = Clock::now() + kSlice;
      std::optional<Clock::time_point> due = deadline ? deadline() : std::nullopt;
      if (!cancelled_ && request_.cancelled && request_.cancelled()) {
        cancelled_ = true;
        stop_();
      } else if (!expired_ && due && Clock::now() >= *due) {
        expired_ = true;
        stop_();
      }
    }
  }
  bool cancelled() const { return cancelled_; }
  bool expired() const { return expired_; }

 private:
  static constexpr std::chrono::milliseconds kSlice{100};
  net::io_context& ioc_;
  const Request& request_;
  std::function<void()> stop_;
  bool cancelled_ = false;
  bool expired_ = false;
};

Error stream_error(const std::string& what, const std::string& detail) {
  return Error(ErrorCode::unavailable, what + ": " + detail, "check the network and the provider's URL setting");
}

// The upgrade request carries the caller's headers; Beast adds the WebSocket ones.
template <class Stream>
void decorate(Stream& stream, const Request& request) {
  stream.set_option(ws::stream_base::decorator([&request](ws::request_type& req) {
    for (const auto& [name, value] : request.headers) req.set(name, value);
    req.set(beast::http::field::user_agent, "corral");
    std::string offered;
    for (const std::string& p : request.subprotocols) offered += (offered.empty() ? "" : ", ") + p;
    if (!offered.empty()) req.set(beast::http::field::sec_websocket_protocol, offered);
  }));
}

// Writes the caller's messages one after another while the stream is followed, and the
// keep-alive pings between them (Beast takes one write at a time); a write that fails
// stops the writing (the read side reports how the stream ended). `written` is told of
// each message that went out: the connection is alive while they do.
template <class Stream>
class Writer {
 public:
  Writer(Stream& stream, const Request& request, std::function<void()> written)
      : stream_(stream), request_(request), written_(std::move(written)) {}
  void start() {
    if (request_.next_message) next();
  }
  bool busy() const { return busy_; }
  // Sends a ping, unless a message is on its way (its being written is sign of life too).
  void ping() {
    if (busy_) return;
    busy_ = true;
    stream_.async_ping({}, [this](beast::error_code) {
      busy_ = false;
      if (woken_) next();  // a wake that came while the ping went out
    });
  }
  // Asks next_message again (on_wake): at once when nothing is being written, else once it is.
  void wake() {
    woken_ = true;
    if (!busy_ && !failed_) next();
  }

 private:
  void next() {
    woken_ = false;
    if (failed_ || !request_.next_message) return;
    std::optional<std::string> message = request_.next_message();
    if (!message) return;
    pending_ = std::move(*message);
    busy_ = true;
    stream_.binary(true);
    stream_.async_write(net::buffer(pending_), [this](beast::error_code ec, std::size_t) {
      busy_ = false;
      if (ec) {
        failed_ = true;
        return;
      }
      written_();
      next();
    });
  }
  Stream& stream_;
  const Request& request_;
  std::function<void()> written_;
  std::string pending_;
  bool busy_ = false;
  bool woken_ = false;   // next_message is to be asked again
  bool failed_ = false;  // a write failed: nothing more is written
};

// What on_wake's function reaches: the stream's io_context and writer while follow() runs,
// nothing after (posting to a destroyed io_context would be undefined).
template <class Stream>
struct Waker {
  std::mutex mutex;
  net::io_context* ioc = nullptr;
  Writer<Stream>* writer = nullptr;
  void wake() {
    std::lock_guard lock(mutex);
    if (ioc) net::post(*ioc, [w = writer] { w->wake(); });
  }
  void disarm() {
    std::lock_guard lock(mutex);
    ioc = nullptr;
  }
};

// Upgrades and follows the stream; `stream`'s transport is already connected.
template <class Stream>
Ending handshake_and_follow(Stream& stream, net::io_context& ioc, const Target& target, const Request& request,
                            const std::string& what, Clock::time_point connect_deadline, const MessageFn& on_message) {
  auto stop = [&stream] {
    beast::error_code ignored;
    beast::get_lowest_layer(stream).socket().close(ignored);
  };
  Driver driver(ioc, request, stop);
  decorate(stream, request);
  ws::response_type response;
  beast::error_code ec;
  bool done = false;
  stream.async_handshake(response, target.host_header, target.path, [&](beast::error_code e) {
    ec = e;
    done = true;
  });
  driver.until(done, [&] { return std::optional(connect_deadline); });
  if (driver.cancelled()) throw Error(ErrorCode::cancelled, what + ": cancelled");
  if (driver.expired())
    throw stream_error(what, "no WebSocket upgrade from " + http::origin_of(target.http_url) + " within " +
                                 std::to_string(request.connect_timeout_seconds) + " s");
  if (ec) {
    if (response.result_int() != 0 && response.result_int() != 101) {
      http::Response r;
      r.status = response.result_int();
      r.body = response.body();
      throw http::status_error(r, what);
    }
    throw stream_error(what, "WebSocket upgrade failed: " + ec.message());
  }

  if (request.on_open) request.on_open(std::string(response[beast::http::field::sec_websocket_protocol]));
  // Following: every message resets the idle clock, and so do control frames (a pong, or
  // a server's ping, which Beast answers) and each message of ours that went out.
  Clock::time_point last_activity = Clock::now();
  Clock::time_point last_ping = last_activity;
  // When the server's close frame came: the stream has ended then, whatever the TCP
  // connection does next (Beast answers the frame, then waits for the server to hang up).
  std::optional<Clock::time_point> close_seen;
  stream.control_callback([&](ws::frame_type kind, beast::string_view) {
    last_activity = Clock::now();
    if (kind == ws::frame_type::close && !close_seen) close_seen = last_activity;
  });
  auto closed = [&] {
    Ending end;
    end.closed = true;
    end.close_code = static_cast<int>(stream.reason().code);
    end.close_reason = std::string(stream.reason().reason.c_str());
    return end;
  };
  Writer<Stream> writer(stream, request, [&] { last_activity = Clock::now(); });
  auto waker = std::make_shared<Waker<Stream>>();
  waker->ioc = &ioc;
  waker->writer = &writer;
  struct Disarm {
    Waker<Stream>& waker;
    ~Disarm() { waker.disarm(); }
  } disarm{*waker};
  if (request.on_wake) request.on_wake([waker] { waker->wake(); });
  writer.start();
  // Closes the socket and lets a pending write finish (aborted) before the stream goes.
  struct Settle {
    Writer<Stream>& writer;
    net::io_context& ioc;
    std::function<void()> stop;
    ~Settle() {
      if (!writer.busy()) return;
      stop();
      ioc.restart();
      for (int i = 0; i < 50 && writer.busy(); ++i) ioc.run_for(std::chrono::milliseconds(20));
    }
  } settle{writer, ioc, stop};

  // Messages are read in pieces and handed on as they arrive: a message of any size (a
  // log sent whole) is neither refused at Beast's 16 MiB limit nor held in memory.
  stream.read_message_max(0);
  beast::flat_buffer buffer;
  std::string whole;  // the message so far, with whole_messages
  for (;;) {
    done = false;
    stream.async_read_some(buffer, kPieceBytes, [&](beast::error_code e, std::size_t) {
      ec = e;
      done = true;
    });
    driver.until(done, [&]() -> std::optional<Clock::time_point> {
      if (close_seen) return *close_seen + kCloseWait;
      if (request.idle_timeout_seconds <= 0) return std::nullopt;
      const std::chrono::seconds idle(request.idle_timeout_seconds);
      // Quiet for half the time: a ping (one each half), whose pong is a sign of life.
      if (request.keepalive_pings && Clock::now() - std::max(last_activity, last_ping) >= idle / 2) {
        last_ping = Clock::now();
        writer.ping();
      }
      return last_activity + idle;
    });
    if (driver.cancelled()) throw Error(ErrorCode::cancelled, what + ": cancelled");
    // Closed by the server's frame, even when the connection then ended otherwise (cut
    // short by us after kCloseWait, or dropped without TLS's own goodbye).
    if (close_seen || ec == ws::error::closed) return closed();
    if (driver.expired())
      throw Error(ErrorCode::unavailable,
                  what + ": no data from " + http::origin_of(target.http_url) + " for " +
                      std::to_string(request.idle_timeout_seconds) + " s" +
                      (request.keepalive_pings ? ", nor an answer to a ping" : "") + "; the connection looks stalled",
                  "check the network; the provider may be overloaded");
    if (ec) return Ending{};  // broken without a close frame
    last_activity = Clock::now();
    const auto data = buffer.data();
    const std::string_view piece(static_cast<const char*>(data.data()), data.size());
    if (!request.whole_messages) {
      on_message(piece, stream.got_binary());
    } else {
      if (whole.size() + piece.size() > kMaxWholeMessage)
        throw Error(ErrorCode::unavailable, what + ": a message of more than 16 MiB from " +
                                                http::origin_of(target.http_url));
      whole.append(piece);
      if (stream.is_message_done()) {
        on_message(whole, stream.got_binary());
        whole.clear();
      }
    }
    buffer.consume(buffer.size());
  }
}

// Trust and identity of `settings` in `tls`: the given CA or the system's, the client
// certificate if any, no verification only when asked.
void configure_tls(net::ssl::context& tls, const TlsSettings& settings, const std::string& what) {
  try {
    if (settings.ca_pem.empty()) tls.set_default_verify_paths();
    else tls.add_certificate_authority(net::buffer(settings.ca_pem));
    if (!settings.client_cert_pem.empty()) tls.use_certificate_chain(net::buffer(settings.client_cert_pem));
    if (!settings.client_key_pem.empty())
      tls.use_private_key(net::buffer(settings.client_key_pem), net::ssl::context::pem);
  } catch (const boost::system::system_error&) {
    // OpenSSL's words may quote the PEM: say which part, never its text.
    throw Error(ErrorCode::invalid_argument, what + ": the CA certificate or client certificate/key is not valid PEM",
                "check the certificate data the configuration gives");
  }
  tls.set_verify_mode(settings.insecure ? net::ssl::verify_none : net::ssl::verify_peer);
}

}  // namespace

Ending follow(const Request& request, const MessageFn& on_message) {
  const std::string what = request.what.empty() ? "WebSocket stream" : request.what;
  const Target target = target_of(request.url, what);
  const std::string origin = http::origin_of(target.http_url);
  const auto connect_deadline = Clock::now() + std::chrono::seconds(request.connect_timeout_seconds);
  net::io_context ioc;

  // Name resolution and the TCP connection, bounded by the connect deadline.
  tcp::resolver resolver(ioc);
  tcp::resolver::results_type endpoints;
  beast::error_code ec;
  bool done = false;
  resolver.async_resolve(target.host, target.port, [&](beast::error_code e, tcp::resolver::results_type r) {
    ec = e;
    endpoints = std::move(r);
    done = true;
  });
  Driver resolving(ioc, request, [&resolver] { resolver.cancel(); });
  resolving.until(done, [&] { return std::optional(connect_deadline); });
  if (resolving.cancelled()) throw Error(ErrorCode::cancelled, what + ": cancelled");
  if (resolving.expired() || ec) throw stream_error(what, "cannot resolve " + origin);

  auto connect = [&](beast::tcp_stream& tcp_stream) {
    done = false;
    tcp_stream.async_connect(endpoints, [&](beast::error_code e, const tcp::endpoint&) {
      ec = e;
      done = true;
    });
    Driver connecting(ioc, request, [&tcp_stream] { tcp_stream.close(); });
    connecting.until(done, [&] { return std::optional(connect_deadline); });
    if (connecting.cancelled()) throw Error(ErrorCode::cancelled, what + ": cancelled");
    if (connecting.expired())
      throw stream_error(what, "cannot connect to " + origin + " within " +
                                   std::to_string(request.connect_timeout_seconds) + " s");
    if (ec) throw stream_error(what, "cannot connect to " + origin + ": " + ec.message());
  };

  if (!target.tls) {
    ws::stream<beast::tcp_stream> stream(ioc);
    connect(beast::get_lowest_layer(stream));
    return handshake_and_follow(stream, ioc, target, request, what, connect_deadline, on_message);
  }

  net::ssl::context tls(net::ssl::context::tls_client);
  configure_tls(tls, request.tls, what);
  ws::stream<beast::ssl_stream<beast::tcp_stream>> stream(ioc, tls);
  connect(beast::get_lowest_layer(stream));
  // SNI, and the certificate must name the host we meant to reach.
  if (!SSL_set_tlsext_host_name(stream.next_layer().native_handle(), target.host.c_str()))
    throw stream_error(what, "cannot set the TLS server name for " + origin);
  if (!request.tls.insecure)
    stream.next_layer().set_verify_callback(net::ssl::host_name_verification(target.host));
  done = false;
  stream.next_layer().async_handshake(net::ssl::stream_base::client, [&](beast::error_code e) {
    ec = e;
    done = true;
  });
  Driver securing(ioc, request, [&stream] { beast::get_lowest_layer(stream).close(); });
  securing.until(done, [&] { return std::optional(connect_deadline); });
  if (securing.cancelled()) throw Error(ErrorCode::cancelled, what + ": cancelled");
  if (securing.expired()) throw stream_error(what, "no TLS handshake with " + origin + " in time");
  if (ec) throw stream_error(what, "TLS handshake with " + origin + " failed: " + ec.message());
  return handshake_and_follow(stream, ioc, target, request, what, connect_deadline, on_message);
}

}  // namespace corral::sdk::websocket
