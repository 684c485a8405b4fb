// Secrets at the local egress (--secret), in-process over real sockets and real TLS: the
// proxy loads the built libcorral-egress-tls.so, the upstream is an HTTPS stand-in on
// 127.0.0.1 with a CA of its own (trusted through the extra CA file only), and the client
// is libcurl trusting the jail's CA. The upstream receives the value; the client sees the
// placeholder, also where the server echoes the value back.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "corral/os/unique_fd.hpp"
#include "egress_proxy.hpp"
#include "egress_secrets.hpp"
#include "cli.hpp"
#include "https_upstream.hpp"
#include "proxy_harness.hpp"

using corral::Secret;
using corral::local::EgressAddress;
using corral::local::EgressInterceptor;
using corral::local::EgressPolicy;
using corral::local::EgressProxy;
using corral::local::ResponseMask;
using corral::local::rewrite_request_head;
using corral::os::UniqueFd;
using corral::test::HttpsUpstream;
namespace fs = std::filesystem;

namespace {

constexpr const char* kValue = "sk-live-Real0Value1Never2Seen3";
constexpr const char* kPlaceholder = "sk-live-Fake9Stand8Inxxx7Here6";  // as long as the value

Secret secret(std::vector<std::string> hosts = {"api.example"}) {
  Secret s;
  s.name = "API_KEY";
  s.hosts = std::move(hosts);
  s.value = kValue;
  s.placeholder = kPlaceholder;
  return s;
}

std::vector<EgressAddress> resolve(const std::string& name) {
  if (name != "api.example" && name != "other.example") return {};
  EgressAddress a;
  auto* in = reinterpret_cast<sockaddr_in*>(&a.address);
  in->sin_family = AF_INET;
  in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.size = sizeof *in;
  return {a};
}

// A proxy with the secret of these tests, as it serves a jail's.
struct Harness : corral::test::ProxyHarness {
  Harness(const std::vector<std::string>& allow, const std::string& extra_ca_file)
      : Harness(allow, EgressInterceptor::load(CORRAL_EGRESS_TLS_MODULE, {secret()}, extra_ca_file)) {}
  Harness(const std::vector<std::string>& allow, const std::shared_ptr<EgressInterceptor>& loaded)
      : ProxyHarness(allow, resolve, loaded), interceptor(loaded) {}
  std::shared_ptr<EgressInterceptor> interceptor;
};

struct Reply {
  CURLcode code = CURLE_OK;
  long status = 0;
  std::string body;
  std::string error;
};

size_t collect(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// `url` through the proxy, trusting `ca_pem` (none: curl's default store), with `headers`.
Reply fetch(int proxy_port, const std::string& url, const std::string& ca_pem, std::vector<std::string> headers) {
  Reply r;
  CURL* curl = curl_easy_init();
  REQUIRE(curl);
  char error[CURL_ERROR_SIZE] = {};
  curl_slist* list = nullptr;
  for (const std::string& h : headers) list = curl_slist_append(list, h.c_str());
  const std::string proxy = "http://127.0.0.1:" + std::to_string(proxy_port);
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_PROXY, proxy.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &r.body);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 20L);
  curl_blob blob{const_cast<char*>(ca_pem.data()), ca_pem.size(), CURL_BLOB_COPY};
  if (!ca_pem.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO_BLOB, &blob);
  r.code = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r.status);
  r.error = error;
  curl_slist_free_all(list);
  curl_easy_cleanup(curl);
  return r;
}

const corral::EgressDestination* find(const std::vector<corral::EgressDestination>& list, const std::string& host,
                                      const std::string& reason = "") {
  for (const auto& d : list)
    if (d.host == host && d.reason.find(reason) != std::string::npos) return &d;
  return nullptr;
}

// True when `report` counts a refusal of `host` whose reason says `reason`.
bool refused(const corral::EgressReport& report, const std::string& host, const std::string& reason) {
  return find(report.refused, host, reason) != nullptr;
}

std::string reasons(const corral::EgressReport& report) {
  std::string out;
  for (const auto& d : report.refused) out += d.host + ": " + d.reason + "\n";
  return out;
}

}  // namespace

TEST_CASE("the secret's own header gets the value, never another or the request line; Connection: close, no compression") {
  Secret s = secret();
  std::string refused;
  const std::string head = rewrite_request_head(
      std::string("GET /v1/models?key=") + kPlaceholder + " HTTP/1.1\r\nHost: API.example:443\r\nauthorization: Bearer " +
          kPlaceholder + "\r\nConnection: keep-alive\r\nAccept-Encoding: gzip, br\r\nX-Echo: " + kPlaceholder +
          "\r\n\r\n",
      "api.example", {&s}, refused);
  CHECK(refused.empty());
  CHECK(head == std::string("GET /v1/models?key=") + kPlaceholder + " HTTP/1.1\r\nHost: API.example:443\r\nauthorization: Bearer " +
                    kValue + "\r\nX-Echo: " + kPlaceholder + "\r\nAccept-Encoding: identity\r\nConnection: close\r\n\r\n");
  // A secret declared for another header goes there alone.
  s.header = "X-Api-Key";
  const std::string keyed = rewrite_request_head(std::string("POST / HTTP/1.1\r\nHost: api.example\r\nx-api-key: ") +
                                                     kPlaceholder + "\r\nAuthorization: " + kPlaceholder + "\r\n\r\n",
                                                 "api.example", {&s}, refused);
  CHECK(keyed.find(std::string("x-api-key: ") + kValue + "\r\n") != std::string::npos);
  CHECK(keyed.find(std::string("Authorization: ") + kPlaceholder + "\r\n") != std::string::npos);
}

TEST_CASE("a request head that would carry the value elsewhere is refused, naming why") {
  const Secret s = secret();
  const auto refusal = [&](const std::string& head) {
    std::string refused;
    CHECK(rewrite_request_head(head, "api.example", {&s}, refused).empty());
    return refused;
  };
  const std::string auth = std::string("Authorization: Bearer ") + kPlaceholder + "\r\n\r\n";
  CHECK(refusal("GET / HTTP/1.1\r\nHost: other.example\r\n" + auth).find("Host header names another server") !=
        std::string::npos);
  CHECK(refusal("GET / HTTP/1.1\r\nHost: api.example\r\nHost: other.example\r\n" + auth).find("another server") !=
        std::string::npos);
  CHECK(refusal("GET / HTTP/1.1\r\nHost: api.example\r\nhost: api.example\r\n" + auth).find("more than one Host") !=
        std::string::npos);
  CHECK(refusal("GET / HTTP/1.1\r\n" + auth).find("a request without a Host header") != std::string::npos);
  CHECK(refusal("GET / HTTP/1.1\r\nHost: api.example:1@other.example\r\n" + auth).find("another server") !=
        std::string::npos);
  CHECK(refusal("GET http://other.example/ HTTP/1.1\r\nHost: api.example\r\n" + auth).find("not a path") !=
        std::string::npos);
  CHECK(refusal("PRI * HTTP/2.0\r\n\r\n").find("not an HTTP/1 request") != std::string::npos);
  CHECK(refusal("GET / HTTP/1.1\r\nno colon here\r\n" + auth).find("malformed header") != std::string::npos);
  CHECK(refusal("GET / HTTP/1.1\r\nHost : other.example\r\nHost: api.example\r\n" + auth).find("malformed header") !=
        std::string::npos);
  // What a server may read as a line's end, and this check would not: a Host hidden in another header.
  CHECK(refusal("GET / HTTP/1.1\r\nX: a\nHost: other.example\r\nHost: api.example\r\n" + auth)
            .find("a line feed without its carriage return") != std::string::npos);
  CHECK(refusal("GET / HTTP/1.1\r\nX: a\rHost: other.example\r\nHost: api.example\r\n" + auth)
            .find("a carriage return alone") != std::string::npos);
  CHECK(refusal("GET / HTTP/1.1\r\nHost: api.example\r\nX: a\r\n Host: other.example\r\n" + auth)
            .find("a folded header line") != std::string::npos);
  CHECK(refusal(std::string("GET / HTTP/1.1\r\nHost: api.example") + '\0' + ".other\r\n" + auth).find("a NUL") !=
        std::string::npos);
}

TEST_CASE("an answer's head says its status, and a body encoded against the request's word cannot be masked") {
  CHECK(corral::local::read_answer_head("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n").status == 200);
  CHECK(corral::local::read_answer_head("HTTP/1.1 200 OK\r\nContent-Encoding: identity\r\n\r\n").unmaskable.empty());
  CHECK(corral::local::read_answer_head("HTTP/1.1 200 OK\r\ncontent-encoding: GZIP\r\n\r\n").unmaskable.find(
            "encoded its answer (gzip)") != std::string::npos);
  CHECK(corral::local::read_answer_head("HTTP/1.1 100 Continue\r\n\r\n").status == 100);
  CHECK(corral::local::read_answer_head("SSH-2.0-x\r\n\r\n").status == 0);
}

TEST_CASE("an answer that cannot hold the value's start is passed on at once, not held back") {
  const Secret s = secret();
  ResponseMask mask({&s});
  CHECK(mask.feed("HTTP/1.1 100 Continue\r\n\r\n") == "HTTP/1.1 100 Continue\r\n\r\n");
  CHECK(mask.feed("data: {\"token\": \"hi\"}\n\n") == "data: {\"token\": \"hi\"}\n\n");
  CHECK(mask.feed("ends with sk-li") == "ends with ");  // could begin the value: held
  CHECK(mask.finish() == "sk-li");
}

TEST_CASE("the value is masked in an answer, also across the pieces it arrives in") {
  const Secret s = secret();
  const std::string text = std::string("echo: ") + kValue + " and again " + kValue + ".";
  for (size_t piece : {1u, 3u, 7u, 1000u}) {
    CAPTURE(piece);
    ResponseMask mask({&s});
    std::string out;
    for (size_t at = 0; at < text.size(); at += piece) out += mask.feed(std::string_view(text).substr(at, piece));
    out += mask.finish();
    CHECK(out == std::string("echo: ") + kPlaceholder + " and again " + kPlaceholder + ".");
  }
}

TEST_CASE("through the proxy, the upstream gets the value and the client sees only the placeholder") {
  HttpsUpstream upstream("api.example");
  const std::string port = std::to_string(upstream.port());
  Harness h({"api.example:" + port, "127.0.0.1:" + port}, upstream.ca_file());
  const Reply r = fetch(h.port, "https://api.example:" + port + "/v1/chat", h.interceptor->ca_pem(),
                        {std::string("Authorization: Bearer ") + kPlaceholder});
  REQUIRE_MESSAGE(r.code == CURLE_OK, r.error);
  CHECK(r.status == 200);
  CHECK(r.body == std::string("you sent Bearer ") + kPlaceholder);  // the echo, masked
  REQUIRE(upstream.heads().size() == 1);
  const std::string head = upstream.heads()[0];
  CHECK(head.find(std::string("Authorization: Bearer ") + kValue + "\r\n") != std::string::npos);
  CHECK(head.find(kPlaceholder) == std::string::npos);
  CHECK(head.find("Connection: close\r\n") != std::string::npos);
  // Counted once the proxy's thread is done with the connection, which may be after curl is.
  CHECK(corral::test::eventually([&] {
    const corral::EgressReport report = h.proxy->report();  // held: find() points into it
    const corral::EgressDestination* allowed = find(report.allowed, "api.example");
    return allowed && allowed->count == 1;
  }));
  CHECK_MESSAGE(h.proxy->report().refused.empty(), reasons(h.proxy->report()));

  SUBCASE("plain HTTP to a secret's host is refused before anything is sent") {
    const Reply plain = fetch(h.port, "http://api.example:" + port + "/", "", {});
    CHECK(plain.status == 403);
    CHECK(plain.body.find("plain HTTP to a secret's host") != std::string::npos);
    CHECK(upstream.heads().size() == 1);
    CHECK_MESSAGE(refused(h.proxy->report(), "api.example", "plain HTTP to a secret's host"),
                  reasons(h.proxy->report()));
  }
  SUBCASE("a Host naming another server is answered by the proxy; nothing reaches the upstream") {
    const Reply other = fetch(h.port, "https://api.example:" + port + "/", h.interceptor->ca_pem(),
                              {"Host: other.example", std::string("Authorization: Bearer ") + kPlaceholder});
    CHECK(other.status == 403);
    CHECK(other.body.find("Host header names another server") != std::string::npos);
    CHECK(upstream.heads().size() == 1);
  }
  SUBCASE("an answer encoded against the request's word is not passed on") {
    const Reply gz = fetch(h.port, "https://api.example:" + port + "/gzip", h.interceptor->ca_pem(),
                           {std::string("Authorization: Bearer ") + kPlaceholder});
    CHECK(gz.status == 502);
    CHECK(gz.body.find("the server encoded its answer (gzip)") != std::string::npos);
    CHECK(gz.body.find(kValue) == std::string::npos);
    // Counted once the proxy's thread is done with the connection, which may be after curl is.
    CHECK_MESSAGE(corral::test::eventually([&] { return refused(h.proxy->report(), "api.example", "encoded its answer"); }),
                  reasons(h.proxy->report()));
  }
  SUBCASE("a client that does not trust the jail's CA fails its handshake, and the report says so") {
    const Reply untrusting = fetch(h.port, "https://api.example:" + port + "/", "", {});
    CHECK(untrusting.code != CURLE_OK);
    CHECK(upstream.heads().size() == 1);
    CHECK_MESSAGE(corral::test::eventually([&] {
                    return refused(h.proxy->report(), "api.example", "the client's TLS handshake with the proxy failed");
                  }),
                  reasons(h.proxy->report()));
  }
}

TEST_CASE("an upstream whose certificate does not verify is refused before the tunnel opens") {
  HttpsUpstream upstream("api.example");
  const std::string port = std::to_string(upstream.port());
  Harness h({"api.example:" + port, "127.0.0.1:" + port}, "");  // its CA not trusted
  const Reply r = fetch(h.port, "https://api.example:" + port + "/", h.interceptor->ca_pem(),
                        {std::string("Authorization: Bearer ") + kPlaceholder});
  CHECK(r.code != CURLE_OK);
  CHECK(upstream.heads().empty());
  CHECK_MESSAGE(refused(h.proxy->report(), "api.example", "its certificate does not verify"),
                reasons(h.proxy->report()));
}

TEST_CASE("a CA file that holds no certificate is refused, naming it") {
  const fs::path bad = fs::temp_directory_path() / ("corral-bad-ca-" + std::to_string(::getpid()) + ".pem");
  std::ofstream(bad) << "not a certificate\n";
  try {
    EgressInterceptor::load(CORRAL_EGRESS_TLS_MODULE, {secret()}, bad.string());
    FAIL("a CA file without a certificate");
  } catch (const corral::Error& e) {
    CHECK(e.code() == corral::ErrorCode::invalid_argument);
    CHECK(std::string(e.what()).find(bad.string()) != std::string::npos);
  }
  fs::remove(bad);
}

TEST_CASE("a module that is not the TLS module is refused, not run") {
  try {
    EgressInterceptor::load("/nonexistent/libcorral-egress-tls.so", {secret()}, "");
    FAIL("a missing module");
  } catch (const corral::Error& e) {
    CHECK(e.code() == corral::ErrorCode::unavailable);
    CHECK(std::string(e.hint()).find("reinstall corral") != std::string::npos);
  }
}

TEST_CASE("a host's certificate names it, any case, and one held stays valid while the bounded cache turns over") {
  corral::local::EgressCa ca;
  const corral::local::SslCtxPtr first = ca.server_context("API.Example");
  for (size_t i = 0; i <= corral::local::EgressCa::kMaxServers; ++i) ca.server_context("h" + std::to_string(i) + ".example");
  X509* cert = SSL_CTX_get0_certificate(first.get());  // still alive: the cache let go of it only
  REQUIRE(cert);
  CHECK(X509_check_host(cert, "api.example", 0, 0, nullptr) == 1);
  CHECK(X509_check_host(cert, "other.example", 0, 0, nullptr) != 1);
  // Signed by the authority whose certificate the jail trusts.
  BIO* pem = BIO_new_mem_buf(ca.certificate_pem().data(), static_cast<int>(ca.certificate_pem().size()));
  X509* authority = PEM_read_bio_X509(pem, nullptr, nullptr, nullptr);
  BIO_free(pem);
  REQUIRE(authority);
  CHECK(X509_verify(cert, X509_get0_pubkey(authority)) == 1);
  X509_free(authority);
}
