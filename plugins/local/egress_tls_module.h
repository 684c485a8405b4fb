/* The C interface of libcorral-egress-tls.so: the TLS half of the local jail's egress
 * proxy (egress_intercept.hpp), in a module of its own beside corral-jail-exec, which
 * only a command with secrets loads, so OpenSSL costs every other local run nothing.
 * Only C types cross it: the module has a C++ runtime of its own. Text it returns is
 * the module's, freed with free_text.
 *
 * Thread rules: open and close on one thread; the rest from any thread at once. */
#ifndef CORRAL_EGRESS_TLS_MODULE_H
#define CORRAL_EGRESS_TLS_MODULE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CORRAL_EGRESS_TLS_ABI 1

typedef struct corral_egress_tls corral_egress_tls;
typedef struct corral_egress_upstream corral_egress_upstream;

typedef struct {
  const char* name;
  const char* const* hosts; /* domains or *.domains */
  size_t host_count;
  const char* placeholder;
  const char* value;
} corral_egress_secret;

typedef struct {
  int abi; /* CORRAL_EGRESS_TLS_ABI */
  /* A fresh CA and the upstream trust (the system's, plus extra_ca_file unless empty);
   * null with *error set when it cannot be made. *error_kind: 1 = the CA file, 2 = internal. */
  corral_egress_tls* (*open)(const corral_egress_secret* secrets, size_t count, const char* extra_ca_file,
                             int* error_kind, char** error);
  void (*close)(corral_egress_tls* tls);
  /* The CA's certificate, PEM (the module's text). */
  char* (*ca_pem)(corral_egress_tls* tls);
  /* 1 when a secret is bound to host. */
  int (*binds)(corral_egress_tls* tls, const char* host);
  /* The verified TLS client side of connected socket upstream_fd to host, within
   * deadline_ms; null with *why set. */
  corral_egress_upstream* (*connect)(corral_egress_tls* tls, const char* host, int upstream_fd, int stop_fd,
                                     long long deadline_ms, char** why);
  /* Serves client_fd (told the tunnel is open; `ahead` it sent already) as host through
   * up; returns 1 when a request went to the server; *refused set when one was refused. */
  int (*serve)(corral_egress_tls* tls, corral_egress_upstream* up, const char* host, int client_fd, const char* ahead,
               size_t ahead_size, int upstream_fd, int stop_fd, char** refused);
  void (*free_upstream)(corral_egress_upstream* up);
  void (*free_text)(char* text);
} corral_egress_tls_api;

/* The module's one exported symbol. */
const corral_egress_tls_api* corral_egress_tls_v1(void);

#ifdef __cplusplus
}
#endif

#endif
