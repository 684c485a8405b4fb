// How a jail's egress puts secrets in (--secret): which hosts are intercepted, the
// request head made ready for the real server, and the value masked again in what comes
// back. The TLS and socket work is egress_intercept's; this is the HTTP part, pure.
//
// Thread rules: an EgressSecrets is immutable after construction but for its CA's cache,
// which locks: any thread. A ResponseMask belongs to one connection.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "corral/types.hpp"
#include "egress_tls.hpp"

namespace corral::local {

class EgressSecrets {
 public:
  // `extra_ca_file`: PEM certificates upstreams may also be verified against ("" = the
  // system's store alone); throws invalid-argument when it cannot be read.
  EgressSecrets(std::vector<Secret> secrets, const std::string& extra_ca_file);

  // The secrets bound to `host` (a name as the client asked for it, any case); empty:
  // the host is tunnelled untouched.
  std::vector<const Secret*> for_host(const std::string& host) const;
  EgressCa& ca() { return ca_; }
  SSL_CTX* upstream() const { return upstream_.get(); }

 private:
  std::vector<Secret> secrets_;
  EgressCa ca_;
  SslCtxPtr upstream_;
};

// The request head (request line and headers, through the blank line) a client sent
// through a tunnel to `host`, ready for the real server: each secret's placeholder in
// that secret's own header (Secret::header) replaced by its value (never elsewhere: not
// in the request line, which servers log and pass on, nor in a header a server may echo),
// "Connection: close" (so each request comes on a connection of its own and is rewritten
// too) and "Accept-Encoding: identity" (so the answer can be masked). Empty, with
// `refused` set, when the head must not be sent: no HTTP/1 request in origin form, text
// a server could read otherwise than this (a bare CR or LF, a NUL, a folded line, a
// header name that is no token), or not exactly one Host, naming `host` (a shared front
// would carry the value to another site).
std::string rewrite_request_head(std::string_view head, const std::string& host,
                                 const std::vector<const Secret*>& secrets, std::string& refused);

// What an answer's head (status line and headers, through the blank line) says of its
// body: its status code (0 when it is no HTTP/1 answer), and why the body cannot be
// masked, or empty: a Content-Encoding other than identity, which the request asked for.
struct AnswerHead {
  int status = 0;
  std::string unmaskable;
};
AnswerHead read_answer_head(std::string_view head);

// Replaces each secret's value with its placeholder in a stream of bytes (a server that
// echoes a request back), across the pieces it arrives in. A placeholder is as long as
// its value, so lengths and framing stay right. It sees the bytes as sent: a value split
// by a chunked body's framing, or echoed encoded, is not found.
class ResponseMask {
 public:
  explicit ResponseMask(const std::vector<const Secret*>& secrets);
  // The bytes of `piece` (after those held back before) that are safe to pass on.
  std::string feed(std::string_view piece);
  // What was held back, at the stream's end.
  std::string finish();

 private:
  void mask(std::string& text) const;
  std::vector<std::pair<std::string, std::string>> pairs_;  // value, placeholder
  std::string held_;                                         // an end that could begin a value
};

}  // namespace corral::local
