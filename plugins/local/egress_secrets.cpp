#include "egress_secrets.hpp"

#include <algorithm>
#include <cctype>

namespace corral::local {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  if (!out.empty() && out.back() == '.') out.pop_back();
  return out;
}

// True when secret host `pattern` (a name or *.domain) covers `host` (lower case).
bool covers(const std::string& pattern, const std::string& host) {
  if (pattern.rfind("*.", 0) != 0) return pattern == host;
  const std::string_view suffix = std::string_view(pattern).substr(1);
  return host.size() > suffix.size() && host.compare(host.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

// The host part of a Host header's value ("api.example.com:443", "[::1]:8443").
std::string host_of(std::string_view value) {
  if (value.rfind('[', 0) == 0) return std::string(value.substr(1, value.find(']') - 1));
  return std::string(value.substr(0, value.rfind(':')));
}

}  // namespace

EgressSecrets::EgressSecrets(std::vector<Secret> secrets, const std::string& extra_ca_file)
    : secrets_(std::move(secrets)), upstream_(upstream_context(extra_ca_file)) {}

std::vector<const Secret*> EgressSecrets::for_host(const std::string& host) const {
  const std::string name = lower(host);
  std::vector<const Secret*> out;
  for (const Secret& s : secrets_)
    if (std::any_of(s.hosts.begin(), s.hosts.end(), [&](const std::string& p) { return covers(lower(p), name); }))
      out.push_back(&s);
  return out;
}

std::string rewrite_request_head(std::string_view head, const std::string& host,
                                 const std::vector<const Secret*>& secrets, std::string& refused) {
  const size_t line_end = head.find("\r\n");
  const std::string_view line = head.substr(0, line_end);
  const size_t s1 = line.find(' '), s2 = line.rfind(' ');
  if (line_end == std::string_view::npos || s1 == std::string_view::npos || s2 == s1 ||
      line.substr(s2 + 1).rfind("HTTP/1.", 0) != 0) {
    refused = "not an HTTP/1 request inside the TLS connection to a secret's host";
    return {};
  }
  const std::string_view target = line.substr(s1 + 1, s2 - s1 - 1);
  if (target.empty() || (target.front() != '/' && target != "*")) {
    // An absolute URL inside the tunnel names its own server, which a server prefers to Host.
    refused = "a request target that is not a path, inside the TLS connection to a secret's host";
    return {};
  }
  std::string out(line);  // the request line as sent: a value goes in headers only
  out += "\r\n";
  int hosts_seen = 0;
  for (size_t at = line_end + 2; at < head.size();) {
    const size_t next = head.find("\r\n", at);
    if (next == std::string_view::npos || next == at) break;  // the blank line
    const std::string_view header = head.substr(at, next - at);
    at = next + 2;
    const size_t colon = header.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      refused = "a malformed header inside the TLS connection to a secret's host";
      return {};
    }
    const std::string name = lower(header.substr(0, colon));
    if (name == "host") {
      ++hosts_seen;
      if (lower(host_of(trim(header.substr(colon + 1)))) != lower(host)) {
        refused = "its Host header names another server than the secret's host ('" +
                  trim(header.substr(colon + 1)).substr(0, 253) + "')";
        return {};
      }
    }
    if (name == "connection" || name == "keep-alive" || name == "proxy-connection" || name == "accept-encoding" ||
        name == "upgrade" || name == "te")
      continue;
    std::string kept(header);
    for (const Secret* s : secrets) replace_all(kept, s->placeholder, s->value);
    out += kept;
    out += "\r\n";
  }
  if (hosts_seen > 1) {
    refused = "more than one Host header, inside the TLS connection to a secret's host";
    return {};
  }
  out += "Accept-Encoding: identity\r\nConnection: close\r\n\r\n";
  return out;
}

ResponseMask::ResponseMask(const std::vector<const Secret*>& secrets) {
  for (const Secret* s : secrets) {
    pairs_.emplace_back(s->value, s->placeholder);
    hold_ = std::max(hold_, s->value.size() - 1);
  }
}

void ResponseMask::mask(std::string& text) const {
  for (const auto& [value, placeholder] : pairs_) replace_all(text, value, placeholder);
}

std::string ResponseMask::feed(std::string_view piece) {
  held_.append(piece);
  mask(held_);
  if (held_.size() <= hold_) return {};
  std::string out = held_.substr(0, held_.size() - hold_);
  held_.erase(0, held_.size() - hold_);
  return out;
}

std::string ResponseMask::finish() {
  std::string out = std::move(held_);
  held_.clear();
  mask(out);
  return out;
}

}  // namespace corral::local
