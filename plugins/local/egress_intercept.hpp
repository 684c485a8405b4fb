// A tunnel to a secret's host, intercepted: the proxy verifies the real server over TLS,
// answers the jail's client as that host with a certificate of the jail's own authority,
// puts the secret's value in the request head where the placeholder was, and masks it
// again in the answer. One request per connection: its head says "Connection: close".
//
// Thread rules: functions of their arguments, on the connection's own thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "egress_io.hpp"
#include "egress_secrets.hpp"

namespace corral::local {

// The TLS client side of `upstream` (a connected socket) to `host`, its handshake done
// and the server's certificate verified for `host`; nullopt with `why` set when it fails.
std::optional<TlsStream> open_tls_upstream(EgressSecrets& secrets, int upstream, const std::string& host, int stop,
                                           EgressClock::time_point deadline, std::string& why);

// What became of an intercepted tunnel.
struct InterceptOutcome {
  bool sent = false;    // a request went to the server
  std::string refused;  // why a request was not sent ("" when none was refused)
};

// Serves the jail's `client`, which has been told the tunnel is open and may have sent
// `ahead` already, as `host`, carrying its request to `upstream`/`upstream_tls` with
// `bound` (the secrets of `host`) put in; returns when the answer is delivered, either
// side goes away or `stop` fires.
InterceptOutcome intercept(EgressSecrets& secrets, const std::vector<const Secret*>& bound, const std::string& host,
                           int client, std::string ahead, int upstream, TlsStream& upstream_tls, int stop);

}  // namespace corral::local
