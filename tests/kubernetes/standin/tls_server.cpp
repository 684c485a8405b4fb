#include "tls_server.hpp"

#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>

#include "exec_session.hpp"
#include "watch_stream.hpp"

namespace corral::kubernetes::standin {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// The handshake accepts any client certificate; the authenticator judges it afterwards
// (an unknown one is a 401, as with the API server's RequestClientCert).
int accept_any(int, X509_STORE_CTX*) { return 1; }

HttpRequest to_request(const http::request<http::string_body>& req) {
  HttpRequest r;
  r.method = std::string(req.method_string());
  r.target = std::string(req.target());
  for (const auto& field : req) {
    std::string name(field.name_string());
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto& slot = r.headers[name];
    slot = slot.empty() ? std::string(field.value()) : slot + ", " + std::string(field.value());
  }
  r.body = req.body();
  parse_target(r);
  return r;
}

}  // namespace

struct TlsServer::Connection {
  asio::io_context ioc;
  TlsStream stream;
  std::thread thread;
  std::atomic<bool> done{false};
  explicit Connection(asio::ssl::context& tls) : stream(ioc, tls) {}
};

TlsServer::TlsServer(State& state, const Pki& pki, int port)
    : state_(state), api_(state, pki), tls_(asio::ssl::context::tls_server),
      acceptor_(ioc_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port))) {
  tls_.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 | asio::ssl::context::no_sslv3 |
                   asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
  tls_.use_certificate_chain(asio::buffer(pki.server().cert_pem));
  tls_.use_private_key(asio::buffer(pki.server().key_pem), asio::ssl::context::pem);
  SSL_CTX* ctx = tls_.native_handle();
  BIO* bio = BIO_new_mem_buf(pki.ca_pem().data(), static_cast<int>(pki.ca_pem().size()));
  X509* ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  SSL_CTX_add_client_CA(ctx, ca);
  X509_free(ca);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, accept_any);
  // A client that resumes a TLS session (libcurl does) on a server that asks for client
  // certificates needs a session id context, or OpenSSL answers with an internal error.
  static const unsigned char kSessionContext[] = "kubernetes-standin";
  SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof kSessionContext - 1);
  port_ = acceptor_.local_endpoint().port();
  accept_thread_ = std::thread([this] { accept_loop(); });
}

TlsServer::~TlsServer() {
  stopping_ = true;
  {
    beast::error_code ec;
    tcp::socket waker(ioc_);
    waker.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port_)), ec);
  }
  accept_thread_.join();
  std::list<std::shared_ptr<Connection>> connections;
  {
    std::lock_guard lock(connections_mutex_);
    connections.swap(connections_);
  }
  // shutdown(2) on the descriptor, not through asio: another thread is using the socket,
  // and its blocked read (or its session's pending operations) then fail and end.
  for (auto& c : connections) ::shutdown(beast::get_lowest_layer(c->stream).native_handle(), SHUT_RDWR);
  for (auto& c : connections) c->thread.join();
}

void TlsServer::accept_loop() {
  // A client that gave up may be gone when an answer is written, and a command's stdin
  // may be closed when it is written to: neither may kill the process.
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  while (!stopping_) {
    auto connection = std::make_shared<Connection>(tls_);
    beast::error_code ec;
    acceptor_.accept(beast::get_lowest_layer(connection->stream), ec);
    if (stopping_) return;
    if (ec) continue;
    // As the Go API server does on every connection: no Nagle delay on an answer in parts.
    beast::get_lowest_layer(connection->stream).set_option(asio::ip::tcp::no_delay(true), ec);
    std::lock_guard lock(connections_mutex_);
    for (auto it = connections_.begin(); it != connections_.end();) {
      if ((*it)->done) {
        (*it)->thread.join();
        it = connections_.erase(it);
      } else {
        ++it;
      }
    }
    connections_.push_back(connection);
    connection->thread = std::thread([this, connection] {
      serve(connection);
      connection->done = true;
    });
  }
}

void TlsServer::serve(const std::shared_ptr<Connection>& connection) {
  TlsStream& stream = connection->stream;
  beast::error_code ec;
  stream.handshake(asio::ssl::stream_base::server, ec);
  if (ec) return;
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(512ull * 1024 * 1024);
    http::read(stream, buffer, parser, ec);
    if (ec || stopping_) break;
    http::request<http::string_body> req = parser.release();
    HttpRequest request = to_request(req);
    Outcome outcome = api_.handle(request, SSL_get0_peer_certificate(stream.native_handle()));
    if (auto* plan = std::get_if<ExecPlan>(&outcome)) {
      run_exec(state_, *plan, stream, connection->ioc, req);
      return;
    }
    if (auto* watch = std::get_if<WatchPlan>(&outcome)) {
      http::response<http::empty_body> res{http::status::ok, req.version()};
      res.set(http::field::content_type, "application/json");
      res.set("Audit-Id", new_uid());
      res.set(http::field::cache_control, "no-cache, private");
      res.chunked(true);
      res.keep_alive(req.keep_alive());
      http::response_serializer<http::empty_body> header{res};
      http::write_header(stream, header, ec);
      if (ec) break;
      stream_watch(state_, *watch, [&](std::string_view line) {
        asio::write(stream, http::make_chunk(asio::buffer(line.data(), line.size())), ec);
        return !ec && !stopping_;
      });
      if (ec) break;
      asio::write(stream, http::make_chunk_last(), ec);
      if (ec || !req.keep_alive()) break;
      continue;
    }
    const HttpResponse& answer = std::get<HttpResponse>(outcome);
    http::response<http::string_body> res{static_cast<http::status>(answer.status), req.version()};
    res.set(http::field::content_type, answer.content_type);
    res.set("Audit-Id", new_uid());
    res.set(http::field::cache_control, "no-cache, private");
    for (const auto& [name, value] : answer.headers) res.insert(name, value);
    res.body() = answer.body;
    res.keep_alive(req.keep_alive());
    res.prepare_payload();
    http::write(stream, res, ec);
    if (ec || !req.keep_alive()) break;
  }
  stream.shutdown(ec);
}

}  // namespace corral::kubernetes::standin
