// The stand-in's own certificate authority, made fresh at every start (OpenSSL): the
// server certificate (127.0.0.1 and localhost) it serves TLS with, the client
// certificates it issues to tests (CN is the user, O the groups, as the API server reads
// them), and the check of a certificate a client presented.
#pragma once

#include <openssl/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "identity.hpp"

namespace corral::kubernetes::standin {

// A certificate and its private key, PEM.
struct CertAndKey {
  std::string cert_pem;
  std::string key_pem;
};

class Pki {
 public:
  Pki();
  ~Pki();
  Pki(const Pki&) = delete;
  Pki& operator=(const Pki&) = delete;

  const std::string& ca_pem() const { return ca_pem_; }
  const CertAndKey& server() const { return server_; }

  // A client certificate for `user` in `groups` signed by this CA, valid from an hour ago
  // for `valid_seconds` more (negative: one that has already expired).
  CertAndKey issue_client(const std::string& user, const std::vector<std::string>& groups,
                          long valid_seconds = 86400) const;
  // A client certificate for `user` signed by a throwaway CA the server does not trust.
  static CertAndKey foreign_client(const std::string& user);

  // Who a client certificate names, when this CA signed it and it is valid now.
  std::optional<Identity> identify(X509* cert) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string ca_pem_;
  CertAndKey server_;
};

}  // namespace corral::kubernetes::standin
