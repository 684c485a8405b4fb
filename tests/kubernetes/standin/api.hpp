// The stand-in API server's request handling, as the real one orders it: authentication
// (client certificate, bearer token, else anonymous), authorization, the fault switches
// (429 before the handler, as priority and fairness does; then 500), and the REST verbs
// on the resources it serves, discovery, /version and the health checks.
#pragma once

#include <openssl/types.h>

#include "http_types.hpp"
#include "pki.hpp"
#include "state.hpp"

namespace corral::kubernetes::standin {

class Api {
 public:
  Api(State& state, const Pki& pki) : state_(state), pki_(pki) {}
  // Answers `request`; `peer` is the client certificate the connection presented, if any.
  Outcome handle(HttpRequest& request, X509* peer);

 private:
  State& state_;
  const Pki& pki_;
};

}  // namespace corral::kubernetes::standin
