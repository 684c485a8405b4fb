#include "pki.hpp"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <stdexcept>

namespace corral::kubernetes::standin {
namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(X509_STORE* p) const { X509_STORE_free(p); }
  void operator()(X509_STORE_CTX* p) const { X509_STORE_CTX_free(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Free>;
using Cert = std::unique_ptr<X509, Free>;

void require(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("stand-in PKI: ") + what + " failed");
}

Key new_key() {
  Key key(EVP_EC_gen("P-256"));
  require(key != nullptr, "EC key generation");
  return key;
}

void add_extension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  require(ext != nullptr, value);
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// What a new certificate says; signed by `issuer` (itself when null) with `issuer_key`.
struct Subject {
  std::string common_name;
  std::vector<std::string> organizations;
  long not_before_offset = -3600;
  long valid_seconds = 86400;
};

Cert make_cert(const Subject& subject, EVP_PKEY* key, X509* issuer, EVP_PKEY* issuer_key,
               const std::vector<std::pair<int, std::string>>& extensions) {
  Cert cert(X509_new());
  require(cert != nullptr, "X509_new");
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  require(RAND_bytes(serial, sizeof serial) == 1, "RAND_bytes");
  serial[0] &= 0x7f;  // a positive serial number
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), subject.not_before_offset);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), subject.valid_seconds);
  X509_NAME* name = X509_get_subject_name(cert.get());
  for (const auto& o : subject.organizations)
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(o.c_str()), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(subject.common_name.c_str()), -1, -1, 0);
  X509* signer = issuer ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  X509_set_pubkey(cert.get(), key);
  for (const auto& [nid, value] : extensions) add_extension(cert.get(), signer, nid, value.c_str());
  require(X509_sign(cert.get(), issuer_key ? issuer_key : key, EVP_sha256()) > 0, "X509_sign");
  return cert;
}

std::string pem_of(X509* cert) {
  std::unique_ptr<BIO, Free> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string pem_of(EVP_PKEY* key) {
  std::unique_ptr<BIO, Free> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

const std::vector<std::pair<int, std::string>> kCaExtensions = {
    {NID_basic_constraints, "critical,CA:TRUE"},
    {NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature"},
    {NID_subject_key_identifier, "hash"}};

CertAndKey client_cert(const std::string& user, const std::vector<std::string>& groups, long valid_seconds,
                       X509* ca, EVP_PKEY* ca_key) {
  Key key = new_key();
  Subject subject{user, groups};
  subject.valid_seconds = valid_seconds;
  if (valid_seconds < 0) subject.not_before_offset = valid_seconds - 3600;
  Cert cert = make_cert(subject, key.get(), ca, ca_key,
                        {{NID_basic_constraints, "critical,CA:FALSE"},
                         {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
                         {NID_ext_key_usage, "clientAuth"},
                         {NID_authority_key_identifier, "keyid:always"}});
  return {pem_of(cert.get()), pem_of(key.get())};
}

}  // namespace

struct Pki::Impl {
  Key ca_key;
  Cert ca_cert;
};

Pki::Pki() : impl_(std::make_unique<Impl>()) {
  impl_->ca_key = new_key();
  impl_->ca_cert = make_cert({"corral-standin-ca", {}, -3600, 10L * 365 * 86400}, impl_->ca_key.get(), nullptr,
                             nullptr, kCaExtensions);
  ca_pem_ = pem_of(impl_->ca_cert.get());
  Key server_key = new_key();
  Cert server_cert = make_cert({"kube-apiserver", {}}, server_key.get(), impl_->ca_cert.get(), impl_->ca_key.get(),
                               {{NID_basic_constraints, "critical,CA:FALSE"},
                                {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
                                {NID_ext_key_usage, "serverAuth"},
                                {NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc"},
                                {NID_authority_key_identifier, "keyid:always"}});
  server_ = {pem_of(server_cert.get()), pem_of(server_key.get())};
}

Pki::~Pki() = default;

CertAndKey Pki::issue_client(const std::string& user, const std::vector<std::string>& groups,
                             long valid_seconds) const {
  return client_cert(user, groups, valid_seconds, impl_->ca_cert.get(), impl_->ca_key.get());
}

CertAndKey Pki::foreign_client(const std::string& user) {
  Key other_key = new_key();
  Cert other = make_cert({"someone-elses-ca", {}}, other_key.get(), nullptr, nullptr, kCaExtensions);
  return client_cert(user, {}, 86400, other.get(), other_key.get());
}

std::optional<Identity> Pki::identify(X509* cert) const {
  if (!cert) return std::nullopt;
  std::unique_ptr<X509_STORE, Free> store(X509_STORE_new());
  X509_STORE_add_cert(store.get(), impl_->ca_cert.get());
  std::unique_ptr<X509_STORE_CTX, Free> ctx(X509_STORE_CTX_new());
  if (X509_STORE_CTX_init(ctx.get(), store.get(), cert, nullptr) != 1) return std::nullopt;
  // As the API server's x509 authenticator: a client-auth certificate chaining to its CA.
  X509_STORE_CTX_set_purpose(ctx.get(), X509_PURPOSE_SSL_CLIENT);
  if (X509_verify_cert(ctx.get()) != 1) return std::nullopt;
  Identity who;
  X509_NAME* name = X509_get_subject_name(cert);
  for (int i = 0; i < X509_NAME_entry_count(name); ++i) {
    X509_NAME_ENTRY* entry = X509_NAME_get_entry(name, i);
    const int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(entry));
    const ASN1_STRING* data = X509_NAME_ENTRY_get_data(entry);
    std::string text(reinterpret_cast<const char*>(ASN1_STRING_get0_data(data)),
                     static_cast<size_t>(ASN1_STRING_length(data)));
    if (nid == NID_commonName) who.user = text;
    if (nid == NID_organizationName) who.groups.push_back(text);
  }
  if (who.user.empty()) return std::nullopt;
  who.groups.push_back("system:authenticated");
  return who;
}

}  // namespace corral::kubernetes::standin
