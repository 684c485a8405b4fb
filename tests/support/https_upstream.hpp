// An HTTPS server on 127.0.0.1 for one name, its certificate from a CA of its own (the
// local plugin's EgressCa) whose PEM is in ca_file(): a stand-in for a secret's host,
// trusted by a client or proxy only when told so. Each request's head is kept; the answer
// echoes its Authorization header ("you sent Bearer ..."); GET /gzip's answer says it is
// gzip-encoded.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace corral::test {

class HttpsUpstream {
 public:
  explicit HttpsUpstream(const std::string& name);
  ~HttpsUpstream();
  int port() const { return port_; }
  std::string ca_file() const { return ca_file_.string(); }
  std::vector<std::string> heads() const;

 private:
  struct Tls;
  std::unique_ptr<Tls> tls_;
  int port_ = 0;
  int listener_ = -1;
  std::filesystem::path ca_file_;
  mutable std::mutex mutex_;
  std::vector<std::string> heads_;
  std::thread thread_;
};

}  // namespace corral::test
