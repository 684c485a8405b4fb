#include "exec_client.hpp"

#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include "corral/sdk/http.hpp"

namespace corral::kubernetes::test {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

}  // namespace

struct ExecClient::Impl {
  asio::io_context ioc;
  asio::ssl::context tls{asio::ssl::context::tls_client};
  std::unique_ptr<websocket::stream<beast::ssl_stream<tcp::socket>>> ws;
  std::string protocol;
  ExecOutcome outcome;
  bool ended = false;
};

std::string exec_target(const std::string& ns, const std::string& pod, const std::vector<std::string>& command,
                        bool stdin_, bool tty) {
  std::string t = "/api/v1/namespaces/" + ns + "/pods/" + pod + "/exec?";
  for (const auto& c : command) t += "command=" + sdk::http::url_encode(c) + "&";
  return t + "stdin=" + (stdin_ ? "true" : "false") + "&stdout=true&stderr=true&tty=" + (tty ? "true" : "false");
}

ExecClient::ExecClient(const std::string& server, const std::string& ca_pem, const std::string& token,
                       const std::string& target, const std::vector<std::string>& protocols)
    : impl_(std::make_unique<Impl>()) {
  const std::string hostport = server.substr(server.find("//") + 2);
  const std::string host = hostport.substr(0, hostport.rfind(':'));
  const std::string port = hostport.substr(hostport.rfind(':') + 1);
  impl_->tls.add_certificate_authority(asio::buffer(ca_pem));
  impl_->tls.set_verify_mode(asio::ssl::verify_peer);
  impl_->ws = std::make_unique<websocket::stream<beast::ssl_stream<tcp::socket>>>(impl_->ioc, impl_->tls);
  auto& socket = beast::get_lowest_layer(*impl_->ws);
  socket.connect(tcp::endpoint(asio::ip::make_address(host), static_cast<unsigned short>(std::stoi(port))));
  timeval limit{30, 0};  // a stream that stalls fails the test instead of hanging it
  setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  impl_->ws->next_layer().handshake(asio::ssl::stream_base::client);
  std::string offered;
  for (const auto& p : protocols) offered += (offered.empty() ? "" : ", ") + p;
  impl_->ws->set_option(websocket::stream_base::decorator([token, offered](websocket::request_type& req) {
    if (!token.empty()) req.set(beast::http::field::authorization, "Bearer " + token);
    if (!offered.empty()) req.set(beast::http::field::sec_websocket_protocol, offered);
  }));
  impl_->ws->binary(true);
  websocket::response_type res;
  beast::error_code ec;
  impl_->ws->handshake(res, hostport, target, ec);
  if (ec) throw UpgradeRefused(static_cast<int>(res.result_int()), res.body());
  impl_->protocol = std::string(res[beast::http::field::sec_websocket_protocol]);
}

ExecClient::~ExecClient() = default;

const std::string& ExecClient::protocol() const { return impl_->protocol; }

void ExecClient::send(int channel, const std::string& data) {
  std::string message(1, static_cast<char>(channel));
  message += data;
  impl_->ws->write(asio::buffer(message));
}

void ExecClient::close_stdin() { send(255, std::string(1, '\0')); }

void ExecClient::close() {
  beast::error_code ec;
  impl_->ws->close(websocket::close_code::normal, ec);
}

std::optional<Message> ExecClient::read() {
  if (impl_->ended) return std::nullopt;
  beast::flat_buffer buffer;
  beast::error_code ec;
  impl_->ws->read(buffer, ec);
  if (ec) {
    impl_->ended = true;
    impl_->outcome.close_frame = ec == websocket::error::closed;
    impl_->outcome.close_code = impl_->ws->reason().code;
    return std::nullopt;
  }
  const std::string data = beast::buffers_to_string(buffer.data());
  Message m;
  if (!data.empty()) {
    m.channel = static_cast<unsigned char>(data[0]);
    m.data = data.substr(1);
  }
  impl_->outcome.messages.push_back(m);
  if (m.channel == 1) impl_->outcome.out += m.data;
  if (m.channel == 2) impl_->outcome.err += m.data;
  if (m.channel == 3) impl_->outcome.status = impl_->outcome.status.value_or("") + m.data;
  return m;
}

const ExecOutcome& ExecClient::outcome_so_far() const { return impl_->outcome; }

ExecOutcome ExecClient::finish() {
  while (read()) {
  }
  return impl_->outcome;
}

}  // namespace corral::kubernetes::test
