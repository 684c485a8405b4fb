#include "egress_tls.hpp"

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cctype>
#include <utility>

#include "corral/errors.hpp"

namespace corral::local {
namespace {

struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;

// OpenSSL's queued errors, as one line, and the queue cleared.
std::string openssl_errors() {
  std::string out;
  for (unsigned long e; (e = ERR_get_error()) != 0;) {
    char text[256];
    ERR_error_string_n(e, text, sizeof text);
    if (!out.empty()) out += "; ";
    out += text;
  }
  return out.empty() ? "unknown TLS error" : out;
}

[[noreturn]] void fail(const std::string& what) {
  throw Error(ErrorCode::internal, "the egress proxy cannot " + what + ": " + openssl_errors());
}

PkeyPtr new_key() {
  PkeyPtr key(EVP_EC_gen("P-256"));
  if (!key) fail("make a key");
  return key;
}

void add_extension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (!ext || !X509_add_ext(cert, ext, -1)) fail("write a certificate extension");
  X509_EXTENSION_free(ext);
}

// A certificate for `key` named `common_name`, signed by `signer` (issued by `issuer`;
// null for a self-signed one), valid from an hour ago (clocks differ) for a week: it
// lives as long as one command.
X509Ptr new_certificate(EVP_PKEY* key, const std::string& common_name, EVP_PKEY* signer, X509* issuer) {
  X509Ptr cert(X509_new());
  if (!cert) fail("make a certificate");
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof serial) != 1) fail("draw a serial number");
  serial[0] &= 0x7f;  // positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  const bool serial_set = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_NAME* name = X509_get_subject_name(cert.get());
  if (!serial_set || !X509_set_version(cert.get(), 2) || !X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) ||
      !X509_gmtime_adj(X509_getm_notAfter(cert.get()), 7 * 24 * 3600) || !X509_set_pubkey(cert.get(), key) ||
      !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                  reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1, 0) ||
      !X509_set_issuer_name(cert.get(), issuer ? X509_get_subject_name(issuer) : name))
    fail("fill in a certificate");
  X509* authority = issuer ? issuer : cert.get();
  add_extension(cert.get(), authority, NID_subject_key_identifier, "hash");
  add_extension(cert.get(), authority, NID_authority_key_identifier, "keyid:always");
  if (!issuer) {
    add_extension(cert.get(), authority, NID_basic_constraints, "critical,CA:TRUE,pathlen:0");
    add_extension(cert.get(), authority, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    add_extension(cert.get(), authority, NID_basic_constraints, "critical,CA:FALSE");
    add_extension(cert.get(), authority, NID_key_usage, "critical,digitalSignature");
    add_extension(cert.get(), authority, NID_ext_key_usage, "serverAuth");
    add_extension(cert.get(), authority, NID_subject_alt_name, ("DNS:" + common_name).c_str());
  }
  if (!X509_sign(cert.get(), signer, EVP_sha256())) fail("sign a certificate");
  return cert;
}

// Chooses HTTP/1.1 when the client offers it, and no protocol otherwise: the proxy reads
// requests as HTTP/1 text.
int choose_http1(SSL*, const unsigned char** out, unsigned char* out_length, const unsigned char* offered,
                 unsigned int offered_length, void*) {
  static const unsigned char kHttp1[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  unsigned char* chosen = nullptr;
  if (SSL_select_next_proto(&chosen, out_length, kHttp1, sizeof kHttp1, offered, offered_length) !=
      OPENSSL_NPN_NEGOTIATED)
    return SSL_TLSEXT_ERR_NOACK;
  *out = chosen;
  return SSL_TLSEXT_ERR_OK;
}

}  // namespace

struct EgressCa::Keys {
  PkeyPtr ca_key = new_key();
  PkeyPtr server_key = new_key();  // one for every host's certificate: they live as long
  X509Ptr ca;
};

EgressCa::EgressCa() : keys_(std::make_unique<Keys>()) {
  keys_->ca = new_certificate(keys_->ca_key.get(), "corral egress (one sandbox command)", keys_->ca_key.get(), nullptr);
  BIO* pem = BIO_new(BIO_s_mem());
  if (!pem || !PEM_write_bio_X509(pem, keys_->ca.get())) {
    BIO_free(pem);
    fail("write its certificate");
  }
  char* data = nullptr;
  const long size = BIO_get_mem_data(pem, &data);
  certificate_pem_.assign(data, static_cast<size_t>(size));
  BIO_free(pem);
}

EgressCa::~EgressCa() = default;

SslCtxPtr EgressCa::server_context(const std::string& name) {
  std::string host = name;
  for (char& c : host) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::lock_guard lock(mutex_);
  const auto shared = [](SSL_CTX* ctx) {
    SSL_CTX_up_ref(ctx);
    return SslCtxPtr(ctx);
  };
  if (auto it = servers_.find(host); it != servers_.end()) return shared(it->second.get());
  // A *.domain secret admits names without end: the cache is bounded. Emptying it frees no
  // context in use: each holder has a reference of its own.
  if (servers_.size() >= kMaxServers) servers_.clear();
  X509Ptr cert = new_certificate(keys_->server_key.get(), host, keys_->ca_key.get(), keys_->ca.get());
  SslCtxPtr ctx(SSL_CTX_new(TLS_server_method()));
  if (!ctx || !SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION) ||
      SSL_CTX_use_certificate(ctx.get(), cert.get()) != 1 ||
      SSL_CTX_use_PrivateKey(ctx.get(), keys_->server_key.get()) != 1)
    fail("serve " + host);
  SSL_CTX_set_options(ctx.get(), SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_set_alpn_select_cb(ctx.get(), choose_http1, nullptr);
  return shared(servers_.emplace(host, std::move(ctx)).first->second.get());
}

SslCtxPtr upstream_context(const std::string& extra_ca_file) {
  SslCtxPtr ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx || !SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION) || !SSL_CTX_set_default_verify_paths(ctx.get()))
    fail("set up its upstream connections");
  if (!extra_ca_file.empty() && SSL_CTX_load_verify_locations(ctx.get(), extra_ca_file.c_str(), nullptr) != 1)
    throw Error(ErrorCode::invalid_argument,
                "the egress CA file '" + extra_ca_file + "' holds no certificate corral can read: " + openssl_errors(),
                "point CORRAL_EGRESS_CA_FILE (or the local provider's egress-ca-file) at a PEM bundle");
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  SSL_CTX_set_options(ctx.get(), SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
  static const unsigned char kHttp1[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  SSL_CTX_set_alpn_protos(ctx.get(), kHttp1, sizeof kHttp1);
  return ctx;
}

TlsStream::TlsStream(SSL* ssl) : ssl_(ssl) {
  if (!ssl_) fail("start a TLS connection");
  in_ = BIO_new(BIO_s_mem());
  out_ = BIO_new(BIO_s_mem());
  if (!in_ || !out_) {
    BIO_free(in_);
    BIO_free(out_);
    SSL_free(ssl_);
    fail("start a TLS connection");
  }
  SSL_set_bio(ssl_, in_, out_);
  SSL_set_mode(ssl_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
}

TlsStream TlsStream::server(SSL_CTX* context) {
  TlsStream s(SSL_new(context));
  SSL_set_accept_state(s.ssl_);
  return s;
}

TlsStream TlsStream::client(SSL_CTX* context, const std::string& host) {
  TlsStream s(SSL_new(context));
  if (SSL_set_tlsext_host_name(s.ssl_, host.c_str()) != 1 || SSL_set1_host(s.ssl_, host.c_str()) != 1)
    fail("name " + host);
  SSL_set_connect_state(s.ssl_);
  return s;
}

TlsStream::TlsStream(TlsStream&& o) noexcept
    : ssl_(std::exchange(o.ssl_, nullptr)), in_(o.in_), out_(o.out_), input_ended_(o.input_ended_),
      closed_(o.closed_), failure_(std::move(o.failure_)) {}

TlsStream::~TlsStream() { SSL_free(ssl_); }

void TlsStream::received(std::string_view bytes) {
  if (!bytes.empty()) BIO_write(in_, bytes.data(), static_cast<int>(bytes.size()));
}

void TlsStream::received_end() {
  input_ended_ = true;
  BIO_set_mem_eof_return(in_, 0);  // an empty buffer now reads as the end, not "retry"
}

std::string TlsStream::take_outgoing() {
  std::string out;
  char chunk[16384];
  for (int n; (n = BIO_read(out_, chunk, sizeof chunk)) > 0;) out.append(chunk, static_cast<size_t>(n));
  return out;
}

TlsStream::Io TlsStream::result(int r) {
  if (r > 0) return Io::progress;
  switch (SSL_get_error(ssl_, r)) {
    case SSL_ERROR_WANT_READ: return input_ended_ ? Io::ended : Io::want_input;
    case SSL_ERROR_WANT_WRITE: return Io::progress;  // a memory BIO takes everything
    case SSL_ERROR_ZERO_RETURN: ERR_clear_error(); return Io::ended;
    default: break;
  }
  const long verify = SSL_get_verify_result(ssl_);
  failure_ = verify != X509_V_OK ? std::string("its certificate does not verify: ") +
                                       X509_verify_cert_error_string(verify)
                                 : openssl_errors();
  ERR_clear_error();
  if (input_ended_ && verify == X509_V_OK && SSL_is_init_finished(ssl_)) return Io::ended;
  return Io::failed;
}

TlsStream::Io TlsStream::handshake() { return result(SSL_do_handshake(ssl_)); }

TlsStream::Io TlsStream::read(std::string& into) {
  char chunk[16384];
  const int n = SSL_read(ssl_, chunk, sizeof chunk);
  if (n > 0) into.append(chunk, static_cast<size_t>(n));
  return result(n);
}

TlsStream::Io TlsStream::write(std::string& data) {
  if (data.empty()) return Io::progress;
  const int n = SSL_write(ssl_, data.data(), static_cast<int>(std::min<size_t>(data.size(), 1 << 20)));
  if (n > 0) data.erase(0, static_cast<size_t>(n));
  return result(n);
}

void TlsStream::close() {
  if (closed_) return;
  closed_ = true;
  if (SSL_is_init_finished(ssl_)) SSL_shutdown(ssl_);
  ERR_clear_error();
}

std::string TlsStream::failure() const { return failure_; }

std::optional<std::string> TlsStream::server_name() const {
  const char* name = SSL_get_servername(ssl_, TLSEXT_NAMETYPE_host_name);
  if (!name) return std::nullopt;
  return std::string(name);
}

}  // namespace corral::local
