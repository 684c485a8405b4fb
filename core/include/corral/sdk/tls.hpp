// Whom a client trusts and how it proves itself over TLS when the system's defaults do not
// serve: a server whose CA is its own (a Kubernetes cluster's), a server that asks for a
// client certificate, or a user who turned verification off. The PEM text stays in
// memory (libcurl and OpenSSL read it from there), so no key is ever in a file another
// process could read, nor in an argument list.
#pragma once

#include <string>

namespace corral::sdk {

struct TlsSettings {
  std::string ca_pem;           // trust only these CA certificates (PEM); empty: the system's store
  std::string client_cert_pem;  // the client's certificate chain (PEM); empty: none
  std::string client_key_pem;   // secret: the client certificate's private key (PEM)
  bool insecure = false;        // no verification of the server at all (the user asked for it)
};

}  // namespace corral::sdk
