// libcorral-egress-tls.so: egress_tls_module.h over egress_intercept. No exception leaves
// it: each becomes the error text of the call that met it.
#include "egress_tls_module.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "egress_intercept.hpp"

namespace {

using corral::local::EgressSecrets;
using corral::local::TlsStream;

char* copy_text(const std::string& text) {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out) std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

}  // namespace

struct corral_egress_tls {
  EgressSecrets secrets;
};

struct corral_egress_upstream {
  TlsStream tls;
};

namespace {

corral_egress_tls* open(const corral_egress_secret* secrets, size_t count, const char* extra_ca_file, int* error_kind,
                        char** error) {
  try {
    std::vector<corral::Secret> list;
    for (size_t i = 0; i < count; ++i) {
      corral::Secret s;
      s.name = secrets[i].name;
      for (size_t h = 0; h < secrets[i].host_count; ++h) s.hosts.emplace_back(secrets[i].hosts[h]);
      s.placeholder = secrets[i].placeholder;
      s.value = secrets[i].value;
      list.push_back(std::move(s));
    }
    return new corral_egress_tls{EgressSecrets(std::move(list), extra_ca_file ? extra_ca_file : "")};
  } catch (const corral::Error& e) {
    *error_kind = e.code() == corral::ErrorCode::invalid_argument ? 1 : 2;
    *error = copy_text(e.what());
  } catch (const std::exception& e) {
    *error_kind = 2;
    *error = copy_text(e.what());
  } catch (...) {
    *error_kind = 2;
    *error = copy_text("unknown failure");
  }
  return nullptr;
}

void close(corral_egress_tls* tls) { delete tls; }  // nothing in it throws

char* ca_pem(corral_egress_tls* tls) {
  try {
    return copy_text(tls->secrets.ca().certificate_pem());
  } catch (...) {
    return nullptr;  // the plugin's side reads none as no CA: the jail trusts nothing new
  }
}

int binds(corral_egress_tls* tls, const char* host) {
  try {
    return tls->secrets.for_host(host).empty() ? 0 : 1;
  } catch (...) {
    return 0;  // tunnelled untouched: the value is never put in
  }
}

corral_egress_upstream* connect(corral_egress_tls* tls, const char* host, int upstream_fd, int stop_fd,
                                long long deadline_ms, char** why) {
  try {
    std::string reason;
    const auto deadline = corral::local::EgressClock::now() + std::chrono::milliseconds(deadline_ms);
    std::optional<TlsStream> stream =
        corral::local::open_tls_upstream(tls->secrets, upstream_fd, host, stop_fd, deadline, reason);
    if (stream) return new corral_egress_upstream{std::move(*stream)};
    *why = copy_text(reason);
  } catch (const std::exception& e) {
    *why = copy_text(e.what());
  } catch (...) {
    *why = copy_text("the proxy failed");
  }
  return nullptr;
}

int serve(corral_egress_tls* tls, corral_egress_upstream* up, const char* host, int client_fd, const char* ahead,
          size_t ahead_size, int upstream_fd, int stop_fd, char** refused) {
  try {
    const std::vector<const corral::Secret*> bound = tls->secrets.for_host(host);
    const corral::local::InterceptOutcome out = corral::local::intercept(
        tls->secrets, bound, host, client_fd, std::string(ahead, ahead_size), upstream_fd, up->tls, stop_fd);
    if (!out.refused.empty()) *refused = copy_text(out.refused);
    return out.sent ? 1 : 0;
  } catch (const std::exception& e) {
    *refused = copy_text(std::string("the proxy failed: ") + e.what());
  } catch (...) {
    *refused = copy_text("the proxy failed");
  }
  return 0;
}

void free_upstream(corral_egress_upstream* up) { delete up; }

void free_text(char* text) { std::free(text); }

constexpr corral_egress_tls_api kApi = {CORRAL_EGRESS_TLS_ABI, open, close, ca_pem, binds, connect, serve,
                                        free_upstream, free_text};

}  // namespace

extern "C" __attribute__((visibility("default"))) const corral_egress_tls_api* corral_egress_tls_v1(void) {
  return &kApi;
}
