#include "telemetry/otlp_exporter.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "corral/os/unique_fd.hpp"

namespace corral::telemetry {
namespace {

using Clock = std::chrono::steady_clock;

// The first of `names` that is set and not empty.
std::optional<std::string> first_set(const EnvLookup& env, std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (std::optional<std::string> v = env(name); v && !v->empty()) return v;
  return std::nullopt;
}

std::string trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

// %XX decoded; nullopt for a broken escape.
std::optional<std::string> percent_decoded(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size() || !std::isxdigit(static_cast<unsigned char>(s[i + 1])) ||
        !std::isxdigit(static_cast<unsigned char>(s[i + 2])))
      return std::nullopt;
    out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
    i += 2;
  }
  return out;
}

// "k1=v1,k2=v2" (OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS); a malformed pair
// is skipped and named in `bad`.
std::vector<std::pair<std::string, std::string>> key_values(const std::string& text, std::vector<std::string>& bad) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    std::size_t comma = text.find(',', at);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = trimmed(std::string_view(text).substr(at, comma - at));
    at = comma + 1;
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    std::optional<std::string> key = eq == std::string::npos ? std::nullopt : percent_decoded(trimmed(item.substr(0, eq)));
    std::optional<std::string> value = eq == std::string::npos ? std::nullopt : percent_decoded(trimmed(item.substr(eq + 1)));
    if (!key || key->empty() || !value) {
      bad.push_back(eq == std::string::npos ? item : item.substr(0, eq));
      continue;
    }
    out.emplace_back(std::move(*key), std::move(*value));
  }
  return out;
}

// A header line must not be split or forged by a value.
bool header_safe(const std::string& s) {
  return std::none_of(s.begin(), s.end(), [](char c) { return c == '\r' || c == '\n' || c == '\0'; });
}

struct Url {
  std::string host;  // without brackets
  std::string port;
  std::string path;
};

std::optional<Url> parse_http_url(const std::string& url) {
  constexpr std::string_view kScheme = "http://";
  if (url.compare(0, kScheme.size(), kScheme) != 0) return std::nullopt;
  std::string_view rest = std::string_view(url).substr(kScheme.size());
  const std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  Url u;
  u.path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (authority.find('@') != std::string_view::npos || authority.empty()) return std::nullopt;
  if (authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    u.host = std::string(authority.substr(1, close - 1));
    authority.remove_prefix(close + 1);
    if (!authority.empty() && authority.front() != ':') return std::nullopt;
    u.port = authority.empty() ? "80" : std::string(authority.substr(1));
  } else {
    const std::size_t colon = authority.rfind(':');
    u.host = std::string(authority.substr(0, colon));
    u.port = colon == std::string_view::npos ? "80" : std::string(authority.substr(colon + 1));
  }
  if (u.host.empty() || u.port.empty() || u.port.size() > 5 ||
      u.port.find_first_not_of("0123456789") != std::string::npos || !header_safe(u.path) ||
      u.path.find(' ') != std::string::npos)
    return std::nullopt;
  return u;
}

// `url` as it may be shown: without a user:password part.
std::string shown_url(const std::string& url) {
  const std::size_t scheme = url.find("://");
  const std::size_t start = scheme == std::string::npos ? 0 : scheme + 3;
  const std::size_t end = url.find_first_of("/?#", start);
  const std::size_t at = url.rfind('@', end == std::string::npos ? url.size() : end);
  if (at == std::string::npos || at < start) return url;
  return url.substr(0, start) + "***@" + url.substr(at + 1);
}

// Milliseconds left until `deadline`, at least 0.
int left_ms(Clock::time_point deadline) {
  return static_cast<int>(
      std::max<long long>(0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count()));
}

}  // namespace

OtlpChoice otlp_settings(const EnvLookup& env) {
  OtlpChoice choice;
  const std::string disabled = env("OTEL_SDK_DISABLED").value_or("");
  if (disabled == "true" || disabled == "TRUE" || disabled == "True") return choice;
  if (env("OTEL_TRACES_EXPORTER").value_or("otlp") == "none") return choice;
  OtlpSettings s;
  if (std::optional<std::string> traces = first_set(env, {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"})) {
    s.url = *traces;  // used as it is, with "/" for no path
    const std::size_t scheme = s.url.find("://");
    if (scheme != std::string::npos && s.url.find('/', scheme + 3) == std::string::npos) s.url += "/";
  } else if (std::optional<std::string> base = first_set(env, {"OTEL_EXPORTER_OTLP_ENDPOINT"})) {
    s.url = *base;
    if (s.url.back() != '/') s.url += '/';
    s.url += "v1/traces";
  } else {
    return choice;  // nobody asked for traces
  }
  const std::string protocol =
      first_set(env, {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"}).value_or("http/protobuf");
  if (protocol == "http/json") {
    s.json = true;
  } else if (protocol != "http/protobuf") {
    choice.warnings.push_back("OTEL_EXPORTER_OTLP_PROTOCOL=" + protocol +
                              ": corral sends traces over OTLP/HTTP only (http/protobuf or http/json); no trace is sent");
    return choice;
  }
  if (s.url.rfind("https://", 0) == 0) {
    choice.warnings.push_back("the OTLP endpoint " + shown_url(s.url) +
                              " is https: corral sends traces over plain HTTP only, to a collector on this machine or "
                              "your network (http://localhost:4318); no trace is sent");
    return choice;
  }
  if (!parse_http_url(s.url)) {
    choice.warnings.push_back("the OTLP endpoint '" + shown_url(s.url) +
                              "' is not an http://HOST[:PORT][/PATH] URL; no trace is sent");
    return choice;
  }
  if (std::optional<std::string> headers =
          first_set(env, {"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS"})) {
    std::vector<std::string> bad;
    for (auto& [key, value] : key_values(*headers, bad)) {
      if (header_safe(key) && header_safe(value) && key.find_first_of(" :") == std::string::npos)
        s.headers.emplace_back(std::move(key), std::move(value));
      else
        bad.push_back(key);
    }
    for (const std::string& b : bad)
      choice.warnings.push_back("OTEL_EXPORTER_OTLP_HEADERS: '" + b.substr(0, 64) +
                                "' is not a header=value pair corral can send; it is left out");
  }
  if (std::optional<std::string> timeout =
          first_set(env, {"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"})) {
    if (timeout->size() <= 9 && timeout->find_first_not_of("0123456789") == std::string::npos)
      s.timeout = std::chrono::milliseconds(std::stol(*timeout));
    else
      choice.warnings.push_back("OTEL_EXPORTER_OTLP_TIMEOUT=" + timeout->substr(0, 32) +
                                " is not a number of milliseconds; 10000 is used");
  }
  choice.settings = std::move(s);
  return choice;
}

Resource resource_of(const EnvLookup& env, const std::string& version) {
  Resource r;
  r.scope_version = version;
  std::vector<std::string> bad;
  std::vector<std::pair<std::string, std::string>> given =
      key_values(env("OTEL_RESOURCE_ATTRIBUTES").value_or(""), bad);
  std::string service = "corral";
  for (const auto& [key, value] : given)
    if (key == "service.name") service = value;
  if (std::optional<std::string> name = first_set(env, {"OTEL_SERVICE_NAME"})) service = *name;
  r.attributes.emplace_back("service.name", service);
  r.attributes.emplace_back("service.version", version);
  r.attributes.emplace_back("telemetry.sdk.name", std::string("corral"));
  r.attributes.emplace_back("telemetry.sdk.language", std::string("cpp"));
  for (const auto& [key, value] : given)
    if (key != "service.name") r.attributes.emplace_back(key, value);
  return r;
}

std::optional<std::string> post_otlp(const OtlpSettings& settings, const std::string& body) {
  const Clock::time_point deadline = Clock::now() + settings.timeout;
  const std::optional<Url> url = parse_http_url(settings.url);
  if (!url) return "not an http:// URL";
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(url->host.c_str(), url->port.c_str(), &hints, &found); rc != 0)
    return std::string("cannot resolve ") + url->host + ": " + ::gai_strerror(rc);
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> addresses(found, ::freeaddrinfo);
  os::UniqueFd fd;
  std::string why = "no address";
  for (addrinfo* a = found; a && !fd.valid(); a = a->ai_next) {
    os::UniqueFd s(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol));
    if (!s.valid()) continue;
    if (::connect(s.get(), a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      why = std::strerror(errno);
      continue;
    }
    pollfd p{s.get(), POLLOUT, 0};
    if (::poll(&p, 1, left_ms(deadline)) != 1) {
      why = "no connection within the timeout";
      continue;
    }
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      why = std::strerror(err);
      continue;
    }
    fd = std::move(s);
  }
  if (!fd.valid()) return "cannot connect: " + why;
  std::string request = "POST " + url->path + " HTTP/1.1\r\nHost: " +
                        (url->host.find(':') != std::string::npos ? "[" + url->host + "]" : url->host) + ":" +
                        url->port + "\r\nContent-Type: " + (settings.json ? "application/json" : "application/x-protobuf") +
                        "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n";
  for (const auto& [key, value] : settings.headers) request += key + ": " + value + "\r\n";
  request += "\r\n";
  request += body;
  for (std::size_t sent = 0; sent < request.size();) {
    pollfd p{fd.get(), POLLOUT, 0};
    if (::poll(&p, 1, left_ms(deadline)) != 1) return "the collector took no more within the timeout";
    const ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR) return std::string("sending: ") + std::strerror(errno);
    if (n > 0) sent += static_cast<std::size_t>(n);
  }
  std::string answer;
  while (answer.find("\r\n") == std::string::npos && answer.size() < 4096) {
    pollfd p{fd.get(), POLLIN, 0};
    if (::poll(&p, 1, left_ms(deadline)) != 1) return "no answer within the timeout";
    char buf[1024];
    const ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
    if (n == 0) return "the collector closed the connection without an answer";
    if (n < 0 && errno != EAGAIN && errno != EINTR) return std::string("reading: ") + std::strerror(errno);
    if (n > 0) answer.append(buf, static_cast<std::size_t>(n));
  }
  // "HTTP/1.1 200 OK"
  const std::string line = answer.substr(0, answer.find("\r\n"));
  if (line.size() >= 12 && line.compare(0, 5, "HTTP/") == 0 && line[9] == '2') return std::nullopt;
  std::string shown;
  for (char c : line.substr(0, 80)) shown += (c >= 0x20 && c < 0x7f) ? c : '?';
  return "the collector answered " + shown;
}

struct TraceExport::State {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  std::optional<std::string> problem;
};

TraceExport::TraceExport(const OtlpSettings& settings, std::string body) : state_(std::make_shared<State>()) {
  // Detached: a collector that never answers keeps only this thread, which corral's exit ends.
  std::thread([state = state_, settings, body = std::move(body)] {
    std::optional<std::string> problem = post_otlp(settings, body);
    std::lock_guard lock(state->mutex);
    state->problem = std::move(problem);
    state->done = true;
    state->done_cv.notify_all();
  }).detach();
}

TraceExport::~TraceExport() = default;

bool TraceExport::wait(std::chrono::milliseconds bound) {
  std::unique_lock lock(state_->mutex);
  return state_->done_cv.wait_for(lock, bound, [&] { return state_->done; });
}

std::optional<std::string> TraceExport::problem() const {
  std::lock_guard lock(state_->mutex);
  return state_->problem;
}

}  // namespace corral::telemetry
