#include "corral/sdk/http.hpp"

#include "corral/sdk/printable.hpp"


#include <arpa/inet.h>
#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <exception>

namespace corral::sdk::http {
namespace {

using Clock = std::chrono::steady_clock;

// Error bodies are for messages, not payloads: keep the first 64 KiB only.
constexpr size_t kErrorBodyCap = 64 * 1024;
constexpr int kMaxRedirects = 5;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// The parts of an absolute URL we reason about, via libcurl's own parser.
struct UrlParts {
  std::string scheme, host, port;
};

std::optional<UrlParts> parse_url(const std::string& url) {
  CURLU* u = curl_url();
  if (!u) return std::nullopt;
  std::optional<UrlParts> out;
  if (curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK) {
    char* scheme = nullptr;
    char* host = nullptr;
    char* port = nullptr;
    if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK)
      out = UrlParts{lower(scheme), lower(host), port};
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
  }
  curl_url_cleanup(u);
  return out;
}

// Loopback by name or by address literal; "127.evil.example" is a name, not 127/8.
bool is_loopback(const std::string& host) {
  if (host == "localhost" || host == "[::1]" || host == "::1") return true;
  in_addr v4{};
  return inet_pton(AF_INET, host.c_str(), &v4) == 1 && (ntohl(v4.s_addr) >> 24) == 127;
}

// The path part of a URL for naming a call in errors (never the query).
std::string path_of(const std::string& url) {
  CURLU* u = curl_url();
  std::string out;
  char* path = nullptr;
  if (u && curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK &&
      curl_url_get(u, CURLUPART_PATH, &path, 0) == CURLUE_OK)
    out = path;
  curl_free(path);
  curl_url_cleanup(u);
  return out;
}

// Per-transfer state shared with libcurl's callbacks.
struct Transfer {
  CURL* easy = nullptr;
  const Request* request = nullptr;
  Response* response = nullptr;
  std::exception_ptr failure;  // thrown by on_body; rethrown after the transfer
  Clock::time_point last_activity = Clock::now();
  curl_off_t moved = 0;        // bytes sent + received so far, to notice upload progress
  bool head_seen = false;      // on_headers was called
  bool streaming = false;      // a 2xx body chunk reached on_body: the answer has begun
  bool too_large = false;      // a 2xx body outgrew request->max_body_bytes
  curl_off_t reported = -1;    // the transfer bytes last reported to the call's host
  Clock::time_point reported_at{};
};

// Reports a streamed upload's sent bytes (a file part) or a streamed download's received
// ones to the call's host: when they grew by 1 MiB, 100 ms passed, or the transfer is complete.
void report_transfer(Transfer& t, curl_off_t now, curl_off_t total) {
  if (now == t.reported) return;
  const Clock::time_point at = Clock::now();
  if (now != total && now - t.reported < (1 << 20) && at - t.reported_at < std::chrono::milliseconds(100)) return;
  t.reported = now;
  t.reported_at = at;
  t.request->on_transfer(static_cast<std::uint64_t>(now), static_cast<std::uint64_t>(std::max<curl_off_t>(total, 0)));
}

// Counts bytes moving in either direction as activity, so a long upload is not "idle".
int on_progress(void* user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
  auto* t = static_cast<Transfer*>(user);
  if (dlnow + ulnow != t->moved) {
    t->moved = dlnow + ulnow;
    t->last_activity = Clock::now();
  }
  if (t->request->on_transfer) {
    if (t->request->file) report_transfer(*t, ulnow, ultotal);
    else if (t->streaming) report_transfer(*t, dlnow, dltotal);
  }
  return 0;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  t->last_activity = Clock::now();
  std::string_view line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) {
    t->response->headers.clear();  // a new response (after 1xx or a redirect) starts
  } else if (auto colon = line.find(':'); colon != std::string_view::npos) {
    t->response->headers[lower(trim(line.substr(0, colon)))] = trim(line.substr(colon + 1));
  }
  return size * n;
}

size_t on_data(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  t->last_activity = Clock::now();
  const size_t len = size * n;
  long status = 0;
  curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
  const bool success = status >= 200 && status < 300;
  if (success && t->request->on_body) {
    try {
      if (!t->head_seen && t->request->on_headers) {
        t->head_seen = true;
        t->response->status = status;
        t->request->on_headers(*t->response);
      }
      t->streaming = true;
      t->request->on_body(std::string_view(data, len));
    } catch (...) {
      t->failure = std::current_exception();
      return 0;  // makes libcurl stop with CURLE_WRITE_ERROR
    }
    return len;
  }
  std::string& body = t->response->body;
  if (success) {
    if (t->request->max_body_bytes > 0 && body.size() + len > t->request->max_body_bytes) {
      t->too_large = true;
      return 0;  // makes libcurl stop with CURLE_WRITE_ERROR
    }
    body.append(data, len);
  } else if (body.size() < kErrorBodyCap) {
    body.append(data, std::min(len, kErrorBodyCap - body.size()));
  }
  return len;
}

struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
struct MimeDeleter {
  void operator()(curl_mime* m) const { curl_mime_free(m); }
};

// Whether `result` says an open connection broke (reset, closed mid-answer or before any
// answer), as opposed to never connecting, a TLS or name problem, or a timeout.
bool broke_after_connecting(CURLcode result) {
  return result == CURLE_RECV_ERROR || result == CURLE_SEND_ERROR || result == CURLE_GOT_NOTHING ||
         result == CURLE_PARTIAL_FILE;
}

// The setting behind a limit, appended to a timeout's message; in the message rather
// than the hint because callers that only warn show the message alone.
std::string limit_note(const Request& request) {
  if (request.timeout_setting.empty()) return "";
  return " (" + request.timeout_setting + ")";
}

// The tail of a timeout's hint, when the limit is a setting.
std::string raise_hint(const Request& request) {
  return request.timeout_setting.empty() ? "" : "; raise that limit if it is only slow";
}

// `bytes` in words: "16 MiB" when it is whole MiB, else "N bytes".
std::string size_text(std::size_t bytes) {
  constexpr std::size_t kMiB = 1024 * 1024;
  if (bytes >= kMiB && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  return std::to_string(bytes) + " bytes";
}

// Seconds libcurl allowed for connecting: the connect limit, or the whole request's
// when that is shorter (libcurl applies both).
long connect_limit(const Request& request) {
  if (request.timeout_seconds > 0) return std::min(request.connect_timeout_seconds, request.timeout_seconds);
  return request.connect_timeout_seconds;
}

}  // namespace

std::string Response::header(const std::string& name) const {
  auto it = headers.find(lower(name));
  return it == headers.end() ? std::string() : it->second;
}

ErrorCode code_for_status(long status) {
  if (status == 400 || status == 422) return ErrorCode::invalid_argument;
  if (status == 401 || status == 403) return ErrorCode::auth;
  if (status == 404 || status == 410) return ErrorCode::not_found;
  if (status == 429) return ErrorCode::quota;
  if (status == 408 || status >= 500) return ErrorCode::unavailable;
  return ErrorCode::internal;
}

std::string error_message(std::string_view body) {
  std::string_view trimmed = body;
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.front()))) trimmed.remove_prefix(1);
  if (!trimmed.empty() && trimmed.front() == '{') {
    json::Document doc;
    doc.Parse(trimmed.data(), trimmed.size());
    if (!doc.HasParseError() && doc.IsObject()) {
      auto str = [&](const json::Value& v, const char* key) -> std::string {
        auto it = v.FindMember(key);
        return it != v.MemberEnd() && it->value.IsString() ? it->value.GetString() : std::string();
      };
      if (std::string m = str(doc, "message"); !m.empty()) return printable(m);
      if (std::string m = str(doc, "error"); !m.empty()) return printable(m);
      if (auto it = doc.FindMember("error"); it != doc.MemberEnd() && it->value.IsObject())
        if (std::string m = str(it->value, "message"); !m.empty()) return printable(m);
      return {};
    }
  }
  // A text body (a proxy's error page): the first printable line, bounded.
  std::string out;
  for (char c : trimmed) {
    if (c == '\n' || c == '\r' || out.size() >= 200) break;
    if (std::isprint(static_cast<unsigned char>(c))) out += c;
  }
  if (out.find('<') != std::string::npos) return {};  // HTML says nothing useful here
  return trim(out);
}

Error status_error(const Response& response, std::string_view what, std::string hint) {
  std::string message = std::string(what) + ": HTTP " + std::to_string(response.status);
  if (std::string detail = error_message(response.body); !detail.empty()) message += ": " + detail;
  return Error(code_for_status(response.status), std::move(message), std::move(hint));
}

// `url` without a "user:password@" part, for showing it in an error.
std::string without_userinfo(const std::string& url) {
  const size_t scheme = url.find("://");
  const size_t start = scheme == std::string::npos ? 0 : scheme + 3;
  const size_t end = url.find_first_of("/?#", start);
  const size_t at = url.rfind('@', end == std::string::npos ? url.size() : end);
  if (at == std::string::npos || at < start) return url;
  return url.substr(0, start) + "***@" + url.substr(at + 1);
}

void check_url(const std::string& url, std::string_view setting) {
  auto parts = parse_url(url);
  if (!parts || (parts->scheme != "http" && parts->scheme != "https") || parts->host.empty())
    throw Error(ErrorCode::invalid_argument,
                std::string(setting) + " must be an absolute http(s) URL, not '" + without_userinfo(url) + "'",
                "for example https://api.example.com");
  if (parts->scheme == "http" && !is_loopback(parts->host))
    throw Error(ErrorCode::invalid_argument,
                std::string(setting) + " uses plain http to '" + parts->host +
                    "': credentials would travel unencrypted",
                "use https; plain http is accepted only for loopback hosts (localhost, 127.0.0.1, ::1)");
}

std::string origin_of(const std::string& url) {
  auto parts = parse_url(url);
  if (!parts) return {};
  return parts->scheme + "://" + parts->host + ":" + parts->port;
}

std::string url_encode(std::string_view text) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

namespace {

// Points `easy` at the CA and client certificate of `tls`, from memory (libcurl copies them).
void apply_tls(CURL* easy, const TlsSettings& tls) {
  auto blob = [easy](CURLoption option, const std::string& pem) {
    if (pem.empty()) return;
    curl_blob b{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
    curl_easy_setopt(easy, option, &b);
  };
  blob(CURLOPT_CAINFO_BLOB, tls.ca_pem);
  blob(CURLOPT_SSLCERT_BLOB, tls.client_cert_pem);
  blob(CURLOPT_SSLKEY_BLOB, tls.client_key_pem);
  if (!tls.client_cert_pem.empty()) curl_easy_setopt(easy, CURLOPT_SSLCERTTYPE, "PEM");
  if (!tls.client_key_pem.empty()) curl_easy_setopt(easy, CURLOPT_SSLKEYTYPE, "PEM");
  if (tls.insecure) {
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
  }
}

}  // namespace

struct Client::Impl {
  CURL* easy = nullptr;
  CURLM* multi = nullptr;

  // One transfer of `request` to `url`, without following redirects.
  Response perform(const Request& request, const std::string& url, const std::string& method,
                   bool with_body, const std::string& what);
};

Client::Client() : impl_(std::make_unique<Impl>()) {
  impl_->easy = curl_easy_init();
  impl_->multi = curl_multi_init();
  if (!impl_->easy || !impl_->multi) throw Error(ErrorCode::internal, "cannot initialise libcurl");
}

Client::~Client() {
  if (impl_->multi) curl_multi_cleanup(impl_->multi);
  if (impl_->easy) curl_easy_cleanup(impl_->easy);
}

Response Client::Impl::perform(const Request& request, const std::string& url, const std::string& method,
                               bool with_body, const std::string& what) {
  Response response;
  Transfer t;
  t.easy = easy;
  t.request = &request;
  t.response = &response;
  char errbuf[CURL_ERROR_SIZE] = {0};

  // reset keeps the connection cache, so consecutive calls reuse one TLS connection.
  curl_easy_reset(easy);
  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);  // redirects are checked by send()
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT, request.connect_timeout_seconds);
  curl_easy_setopt(easy, CURLOPT_TIMEOUT, request.timeout_seconds);
  // Large reads keep per-chunk overhead low on big streams; memory stays bounded.
  curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, 256L * 1024L);
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(easy, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
  apply_tls(easy, request.tls);

  std::unique_ptr<curl_slist, SlistDeleter> headers;
  auto add_header = [&](const std::string& line) {
    curl_slist* next = curl_slist_append(headers.get(), line.c_str());
    if (!next) throw Error(ErrorCode::internal, "out of memory building request headers");
    headers.release();
    headers.reset(next);
  };
  for (const auto& [name, value] : request.headers) add_header(name + ": " + value);
  add_header("Expect:");  // no 100-continue round trip before uploads
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers.get());

  std::unique_ptr<curl_mime, MimeDeleter> mime;
  if (with_body && request.file) {
    mime.reset(curl_mime_init(easy));
    curl_mimepart* part = curl_mime_addpart(mime.get());
    curl_mime_name(part, request.file->field.c_str());
    if (curl_mime_filedata(part, request.file->path.c_str()) != CURLE_OK)
      throw Error(ErrorCode::internal, what + ": cannot read upload file " + request.file->path);
    if (!request.file->filename.empty()) curl_mime_filename(part, request.file->filename.c_str());
    curl_mime_type(part, request.file->content_type.c_str());
    curl_easy_setopt(easy, CURLOPT_MIMEPOST, mime.get());
  } else if (with_body && !request.body.empty()) {
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, request.body.data());
  } else if (method == "POST" || method == "PUT" || method == "PATCH") {
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, 0L);
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, "");
  }
  if (method == "HEAD") curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
  else if (method != "GET" || (with_body && (request.file || !request.body.empty())))
    curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, method.c_str());

  // The multi interface lets us check for cancellation and idleness ten times a second,
  // which the progress callback (about once a second when idle) cannot promise.
  const auto started = Clock::now();
  t.last_activity = started;
  curl_multi_add_handle(multi, easy);
  bool cancelled = false, idle = false;
  CURLcode result = CURLE_OK;
  for (;;) {
    int running = 0;
    CURLMcode mc = curl_multi_perform(multi, &running);
    if (mc != CURLM_OK) {
      curl_multi_remove_handle(multi, easy);
      throw Error(ErrorCode::internal, what + ": " + curl_multi_strerror(mc));
    }
    if (running == 0) break;
    if (request.cancelled && request.cancelled()) {
      cancelled = true;
      break;
    }
    if (request.idle_timeout_seconds > 0 &&
        Clock::now() - t.last_activity > std::chrono::seconds(request.idle_timeout_seconds)) {
      idle = true;
      break;
    }
    curl_multi_poll(multi, nullptr, 0, 100, nullptr);
  }
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi, &left))
    if (msg->msg == CURLMSG_DONE && msg->easy_handle == easy) result = msg->data.result;
  curl_multi_remove_handle(multi, easy);
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &response.status);

  if (t.failure) std::rethrow_exception(t.failure);
  if (t.too_large) throw unexpected_answer(what, "the answer is larger than " + size_text(request.max_body_bytes) +
                                                     ", the most corral reads of one");
  if (cancelled) throw Error(ErrorCode::cancelled, what + ": cancelled");
  const std::string origin = origin_of(url);
  if (idle)
    throw Error(ErrorCode::unavailable,
                what + ": no data from " + origin + " for " + std::to_string(request.idle_timeout_seconds) +
                    " s" + limit_note(request) + "; the connection looks stalled",
                "check the network; the provider may be overloaded" + raise_hint(request));
  if (result == CURLE_OPERATION_TIMEDOUT) {
    // A reused connection has no connect time of its own; a request sent on it shows
    // that it was connected all the same.
    curl_off_t connected = 0;
    long sent = 0;
    curl_easy_getinfo(easy, CURLINFO_CONNECT_TIME_T, &connected);
    curl_easy_getinfo(easy, CURLINFO_REQUEST_SIZE, &sent);
    if (connected == 0 && sent == 0)
      throw Error(ErrorCode::unavailable,
                  what + ": cannot connect to " + origin + " within " +
                      std::to_string(connect_limit(request)) + " s",
                  "check the network and the provider's URL setting");
    throw Error(ErrorCode::unavailable,
                what + ": no complete answer from " + origin + " within " +
                    std::to_string(request.timeout_seconds) + " s" + limit_note(request),
                "the provider is slow or unreachable; retry later" + raise_hint(request));
  }
  if (result != CURLE_OK) {
    std::string detail = errbuf[0] ? errbuf : curl_easy_strerror(result);
    while (!detail.empty() && detail.back() == '\n') detail.pop_back();
    if (broke_after_connecting(result) && t.streaming && !request.sandbox_stream.empty()) {
      Error lost = connection_lost(what, request.sandbox_stream, detail);
      throw ConnectionBroken(lost.code(), lost.what(), lost.hint());
    }
    std::string message = what + ": request to " + origin + " failed: " + detail;
    std::string hint = "check the network and the provider's URL setting";
    if (broke_after_connecting(result)) throw ConnectionBroken(ErrorCode::unavailable, std::move(message), std::move(hint));
    throw Error(ErrorCode::unavailable, std::move(message), std::move(hint));
  }
  if (response.status >= 300 && response.status < 400) {
    char* location = nullptr;
    curl_easy_getinfo(easy, CURLINFO_REDIRECT_URL, &location);
    if (location) response.headers["location"] = location;  // absolute, resolved by libcurl
  }
  return response;
}

Response Client::send(const Request& request) {
  std::string url = request.url;
  std::string method = request.method.empty() ? "GET" : request.method;
  bool with_body = true;
  const std::string what = request.what.empty() ? method + " " + path_of(url) : request.what;
  check_url(url, what + " URL");
  const std::string origin = origin_of(url);
  for (int hop = 0;; ++hop) {
    Response response = impl_->perform(request, url, method, with_body, what);
    if (response.status < 300 || response.status >= 400 || response.header("location").empty())
      return response;
    const std::string next = response.header("location");
    if (origin_of(next) != origin)
      throw Error(ErrorCode::invalid_argument,
                  what + ": refused a redirect from " + origin + " to another origin (" + origin_of(next) + ")",
                  "credentials are never sent to another host; set the provider's URL to the final address");
    if (hop + 1 >= kMaxRedirects)
      throw Error(ErrorCode::unavailable, what + ": too many redirects", "check the provider's URL setting");
    if (response.status == 303) {
      method = "GET";
      with_body = false;
    }
    url = next;
  }
}

Response Client::send_json(Request request) {
  request.headers.emplace_back("Accept", "application/json");
  const bool typed = std::any_of(request.headers.begin(), request.headers.end(),
                                 [](const auto& h) { return lower(h.first) == "content-type"; });
  if (!request.body.empty() && !typed) request.headers.emplace_back("Content-Type", "application/json");
  return send(request);
}

Error unexpected_answer(std::string_view what, std::string_view detail) {
  return Error(ErrorCode::unavailable,
               std::string(what) + ": the provider sent an unexpected answer: " + std::string(detail),
               "retry in a moment; if it persists, a proxy may be answering in the provider's place or its API "
               "changed (check the provider's URL settings and corral's version)");
}

Error connection_lost(std::string_view what, std::string_view stream, std::string_view detail) {
  std::string message = std::string(what) + ": the connection to the sandbox was lost mid-" + std::string(stream);
  if (!detail.empty()) message += " (" + std::string(detail) + ")";
  return Error(ErrorCode::unavailable, std::move(message),
               "what arrived before the break was delivered, the rest is lost; check this machine's network (and, "
               "for a kept sandbox, that it still runs: `corral status --id LEASE`), then rerun");
}

json::Document parse_body(const Response& response, std::string_view what) {
  try {
    return json::parse(response.body, "the body");
  } catch (const Error& e) {
    throw unexpected_answer(what, e.what());
  }
}

}  // namespace corral::sdk::http
