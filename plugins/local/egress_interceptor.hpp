// The local plugin's side of libcorral-egress-tls.so (egress_tls_module.h): loads the
// module the first time a command has secrets, and wraps its C interface.
//
// Thread rules: load() from any thread (the module is loaded once per process); an
// interceptor's methods from any thread at once.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "corral/types.hpp"
#include "egress_io.hpp"
#include "egress_tls_module.h"

namespace corral::local {

class EgressInterceptor {
 public:
  // An interceptor for `secrets`, verifying their hosts against the system's CAs and
  // those in `extra_ca_file` ("" = none), through the module at `module`, which must be
  // trusted (os::check_trusted_path) and speak this plugin's ABI. Throws unavailable
  // ("reinstall corral") for a module that is missing, untrusted or foreign, and
  // invalid-argument for a CA file it cannot read.
  static std::shared_ptr<EgressInterceptor> load(const std::filesystem::path& module,
                                                 const std::vector<Secret>& secrets,
                                                 const std::string& extra_ca_file);
  ~EgressInterceptor();
  EgressInterceptor(const EgressInterceptor&) = delete;
  EgressInterceptor& operator=(const EgressInterceptor&) = delete;

  // The jail's CA certificate, PEM.
  const std::string& ca_pem() const { return ca_pem_; }
  // True when a secret is bound to `host`: its tunnels are intercepted.
  bool binds(const std::string& host) const;

  // The verified TLS client side of connected socket `upstream`; null with `why` set.
  using Upstream = std::unique_ptr<corral_egress_upstream, void (*)(corral_egress_upstream*)>;
  Upstream connect(const std::string& host, int upstream, int stop, EgressClock::time_point deadline,
                   std::string& why) const;
  // Serves `client` through `up` (see egress_intercept.hpp); true when a request went to
  // the server; `refused` set when one was refused.
  bool serve(Upstream& up, const std::string& host, int client, const std::string& ahead, int upstream, int stop,
             std::string& refused) const;

 private:
  EgressInterceptor(const corral_egress_tls_api* api, corral_egress_tls* tls);
  std::string take(char* text) const;
  const corral_egress_tls_api* api_;
  corral_egress_tls* tls_;
  std::string ca_pem_;
};

}  // namespace corral::local
