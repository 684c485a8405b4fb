// TLS for the egress proxy's interception of a secret's hosts: a certificate authority
// made for one command's jail, the server certificates it signs, the client side that
// verifies the real upstream, and TLS connections driven over memory, so the proxy keeps
// its own socket loop (a stop event, deadlines, no blocking call on a socket).
#pragma once

#include <openssl/ssl.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace corral::local {

struct SslCtxFree {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};
using SslCtxPtr = std::unique_ptr<SSL_CTX, SslCtxFree>;

// A certificate authority of one jail: an EC P-256 key that never leaves this process and
// dies with the object, and its certificate, which the jail trusts. It signs one server
// certificate per host, on first use.
//
// Thread rules: construct and destroy on one thread; the rest from any thread.
class EgressCa {
 public:
  // A fresh authority; throws Error(internal) when OpenSSL cannot make one.
  EgressCa();
  ~EgressCa();
  EgressCa(const EgressCa&) = delete;
  EgressCa& operator=(const EgressCa&) = delete;

  // The authority's certificate, PEM.
  const std::string& certificate_pem() const { return certificate_pem_; }
  static constexpr size_t kMaxServers = 256;  // hosts whose contexts are kept at once

  // A server context presenting a certificate for `host` this authority signed (made once
  // per host, any case, then shared: the caller holds a reference of its own); throws
  // Error(internal) when it cannot be made.
  SslCtxPtr server_context(const std::string& host);

 private:
  struct Keys;
  std::unique_ptr<Keys> keys_;
  std::string certificate_pem_;
  std::mutex mutex_;
  std::map<std::string, SslCtxPtr> servers_;
};

// A client context that verifies upstream servers against this machine's trust store
// and, when `extra_ca_file` is not empty, the PEM certificates in it (a corporate proxy's
// CA); throws Error(invalid_argument) naming the file when it holds none it can read.
SslCtxPtr upstream_context(const std::string& extra_ca_file);

// One TLS connection driven over memory: bytes from its socket go in through received(),
// bytes for its socket come out of take_outgoing().
//
// Thread rules: one thread at a time.
class TlsStream {
 public:
  enum class Io {
    progress,    // done, or bytes moved
    want_input,  // needs more bytes from the peer
    ended,       // the peer ended the stream (close_notify, or its socket closed)
    failed,      // a TLS error: failure() says which
  };

  // A server stream (the jail's client) or a client stream to `host` (SNI, and the name
  // its certificate must carry).
  static TlsStream server(SSL_CTX* context);
  static TlsStream client(SSL_CTX* context, const std::string& host);
  TlsStream(TlsStream&&) noexcept;
  ~TlsStream();

  void received(std::string_view bytes);
  void received_end();  // the peer's socket reached its end
  // What is to be sent to the peer, taken.
  std::string take_outgoing();

  Io handshake();
  // Appends decrypted bytes to `into`.
  Io read(std::string& into);
  // Encrypts from the front of `data`, erasing what it took.
  Io write(std::string& data);
  // Sends close_notify (once).
  void close();

  // Why the last call failed, in words: the certificate's problem, or OpenSSL's error.
  std::string failure() const;
  // The server name the client asked for (a server stream, after its handshake).
  std::optional<std::string> server_name() const;

 private:
  explicit TlsStream(SSL* ssl);
  Io result(int r);
  SSL* ssl_;
  BIO* in_;   // owned by ssl_
  BIO* out_;  // owned by ssl_
  bool input_ended_ = false;
  bool closed_ = false;
  std::string failure_;
};

}  // namespace corral::local
