#include "https_client.hpp"

#include <curl/curl.h>
#include <doctest/doctest.h>

namespace corral::kubernetes::test {
namespace {

struct Transfer {
  Answer* answer;
  std::string pending;
  const std::function<bool(const std::string&)>* on_line = nullptr;
};

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string line(data, size * n);
  const size_t colon = line.find(':');
  if (line.rfind("HTTP/", 0) == 0) t->answer->headers.clear();
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n')) value.pop_back();
    auto& slot = t->answer->headers[name];
    slot = slot.empty() ? value : slot + "\n" + value;
  }
  return size * n;
}

size_t on_data(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  t->answer->body.append(data, size * n);
  if (!t->on_line) return size * n;
  t->pending.append(data, size * n);
  for (size_t nl; (nl = t->pending.find('\n')) != std::string::npos;) {
    const std::string line = t->pending.substr(0, nl);
    t->pending.erase(0, nl + 1);
    if (!(*t->on_line)(line)) return 0;  // ends the transfer
  }
  return size * n;
}

}  // namespace

json::Document parse(const std::string& text) {
  json::Document doc;
  doc.Parse(text.c_str());
  REQUIRE_MESSAGE(!doc.HasParseError(), "not JSON: " << text.substr(0, 500));
  return doc;
}

json::Document Answer::json() const { return parse(body); }

HttpsClient::HttpsClient(std::string server, std::string ca_pem) : server_(std::move(server)), ca_(std::move(ca_pem)) {}

Answer HttpsClient::get(const std::string& path, const std::vector<std::string>& headers) const {
  return request("GET", path, "", headers);
}
Answer HttpsClient::post(const std::string& path, const std::string& body) const {
  return request("POST", path, body, {"Content-Type: application/json"});
}
Answer HttpsClient::put(const std::string& path, const std::string& body) const {
  return request("PUT", path, body, {"Content-Type: application/json"});
}
Answer HttpsClient::patch(const std::string& path, const std::string& body, const std::string& content_type) const {
  return request("PATCH", path, body, {"Content-Type: " + content_type});
}
Answer HttpsClient::del(const std::string& path, const std::string& body) const {
  return request("DELETE", path, body, body.empty() ? std::vector<std::string>{} : std::vector<std::string>{"Content-Type: application/json"});
}

Answer HttpsClient::request(const std::string& method, const std::string& path, const std::string& body,
                            const std::vector<std::string>& headers) const {
  return stream_or_request(method, path, body, headers, nullptr, 30);
}

Answer HttpsClient::stream(const std::string& path, const std::function<bool(const std::string&)>& on_line,
                           long limit_seconds) const {
  return stream_or_request("GET", path, "", {}, &on_line, limit_seconds);
}

Answer HttpsClient::stream_or_request(const std::string& method, const std::string& path, const std::string& body,
                                      const std::vector<std::string>& headers,
                                      const std::function<bool(const std::string&)>* on_line, long limit_seconds) const {
  Answer answer;
  Transfer transfer{&answer, "", on_line};
  CURL* curl = curl_easy_init();
  REQUIRE(curl != nullptr);
  const std::string url = server_ + path;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_blob ca{const_cast<char*>(ca_.data()), ca_.size(), CURL_BLOB_COPY};
  curl_easy_setopt(curl, CURLOPT_CAINFO_BLOB, &ca);
  curl_blob cert{const_cast<char*>(cert_.data()), cert_.size(), CURL_BLOB_COPY};
  curl_blob key{const_cast<char*>(key_.data()), key_.size(), CURL_BLOB_COPY};
  if (!cert_.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLCERT_BLOB, &cert);
    curl_easy_setopt(curl, CURLOPT_SSLCERTTYPE, "PEM");
    curl_easy_setopt(curl, CURLOPT_SSLKEY_BLOB, &key);
    curl_easy_setopt(curl, CURLOPT_SSLKEYTYPE, "PEM");
  }
  curl_slist* list = nullptr;
  if (!token_.empty()) list = curl_slist_append(list, ("Authorization: Bearer " + token_).c_str());
  list = curl_slist_append(list, "Accept: application/json");
  for (const auto& h : headers) list = curl_slist_append(list, h.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, limit_seconds);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  const CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &answer.status);
  curl_slist_free_all(list);
  curl_easy_cleanup(curl);
  // A stream the callback ended is fine; anything else must have completed.
  if (!(on_line && rc == CURLE_WRITE_ERROR)) CHECK_MESSAGE(rc == CURLE_OK, method << " " << path << ": " << std::string(curl_easy_strerror(rc)));
  return answer;
}

}  // namespace corral::kubernetes::test
