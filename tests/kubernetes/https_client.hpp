// The tests' HTTPS client for the stand-in API server: libcurl over TLS, trusting the
// stand-in's CA, with a bearer token or a client certificate. Apart from the SDK's HTTP
// client on purpose: the stand-in is checked by a client other than the one under test.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "corral/json.hpp"

namespace corral::kubernetes::test {

struct Answer {
  long status = 0;
  std::map<std::string, std::string> headers;  // lower-case names; repeated ones joined by "\n"
  std::string body;
  json::Document json() const;  // the body parsed (fails the test when it is not JSON)
};

class HttpsClient {
 public:
  // `server` is https://127.0.0.1:PORT; `ca_pem` the CA to trust.
  HttpsClient(std::string server, std::string ca_pem);
  HttpsClient& token(std::string t) {
    token_ = std::move(t);
    return *this;
  }
  HttpsClient& certificate(std::string cert_pem, std::string key_pem) {
    cert_ = std::move(cert_pem);
    key_ = std::move(key_pem);
    return *this;
  }

  Answer get(const std::string& path, const std::vector<std::string>& headers = {}) const;
  Answer post(const std::string& path, const std::string& body) const;
  Answer put(const std::string& path, const std::string& body) const;
  Answer patch(const std::string& path, const std::string& body,
               const std::string& content_type = "application/merge-patch+json") const;
  Answer del(const std::string& path, const std::string& body = {}) const;
  Answer request(const std::string& method, const std::string& path, const std::string& body,
                 const std::vector<std::string>& headers) const;

  // A streamed GET (a watch): `on_line` gets each line as it arrives; returning false
  // ends the transfer. Gives up after `limit_seconds` (the test then fails on what it saw).
  Answer stream(const std::string& path, const std::function<bool(const std::string&)>& on_line,
                long limit_seconds = 30) const;

 private:
  Answer stream_or_request(const std::string& method, const std::string& path, const std::string& body,
                           const std::vector<std::string>& headers,
                           const std::function<bool(const std::string&)>* on_line, long limit_seconds) const;
  std::string server_, ca_, token_, cert_, key_;
};

// A JSON document from `text` (fails the test when it is not JSON).
json::Document parse(const std::string& text);

}  // namespace corral::kubernetes::test
