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

// The host part of a Host header's value ("api.example.com:443", "[::1]:8443"); empty
// when its port is not digits alone.
std::string host_of(std::string_view value) {
  std::string_view host = value, port;
  if (value.rfind('[', 0) == 0) {
    const size_t close = value.find(']');
    if (close == std::string_view::npos) return {};
    host = value.substr(1, close - 1);
    const std::string_view rest = value.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return {};
    if (!rest.empty()) port = rest.substr(1);
  } else if (const size_t colon = value.rfind(':'); colon != std::string_view::npos) {
    host = value.substr(0, colon);
    port = value.substr(colon + 1);
  }
  if (port.find_first_not_of("0123456789") != std::string_view::npos) return {};
  return std::string(host);
}

// RFC 9110's token characters: what a header's name is made of.
bool is_token(std::string_view name) {
  static constexpr std::string_view kExtra = "!#$%&'*+-.^_`|~";
  return !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || kExtra.find(static_cast<char>(c)) != std::string_view::npos;
  });
}

// Why `head` is not plain HTTP/1 text a server reads as the proxy does, or empty: a NUL,
// a CR or LF alone (which some servers take as a line's end, hiding a header from this
// check), or a folded line.
std::string framing_problem(std::string_view head) {
  if (head.find('\0') != std::string_view::npos) return "a NUL in the request head";
  for (size_t i = 0; i < head.size(); ++i) {
    if (head[i] == '\n' && (i == 0 || head[i - 1] != '\r')) return "a line feed without its carriage return";
    if (head[i] == '\r' && (i + 1 >= head.size() || head[i + 1] != '\n')) return "a carriage return alone";
    if (head[i] == '\n' && i + 1 < head.size() && (head[i + 1] == ' ' || head[i + 1] == '\t'))
      return "a folded header line";
  }
  return {};
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
  const auto refuse = [&](const std::string& why) {
    refused = why + ", inside the TLS connection to a secret's host";
    return std::string();
  };
  if (const std::string problem = framing_problem(head); !problem.empty()) return refuse(problem);
  const size_t line_end = head.find("\r\n");
  const std::string_view line = head.substr(0, line_end);
  const size_t s1 = line.find(' '), s2 = line.rfind(' ');
  if (line_end == std::string_view::npos || s1 == std::string_view::npos || s2 == s1 ||
      line.substr(s2 + 1).rfind("HTTP/1.", 0) != 0)
    return refuse("not an HTTP/1 request");
  const std::string_view target = line.substr(s1 + 1, s2 - s1 - 1);
  // An absolute URL names its own server, which a server prefers to Host.
  if (target.empty() || (target.front() != '/' && target != "*")) return refuse("a request target that is not a path");
  std::string out(line);  // the request line as sent: a value goes in its header only
  out += "\r\n";
  int hosts_seen = 0;
  for (size_t at = line_end + 2; at < head.size();) {
    const size_t next = head.find("\r\n", at);
    if (next == std::string_view::npos || next == at) break;  // the blank line
    const std::string_view header = head.substr(at, next - at);
    at = next + 2;
    const size_t colon = header.find(':');
    if (colon == std::string_view::npos || !is_token(header.substr(0, colon))) return refuse("a malformed header");
    const std::string name = lower(header.substr(0, colon));
    const std::string value = trim(header.substr(colon + 1));
    if (name == "host") {
      ++hosts_seen;
      const std::string named = host_of(value);
      if (named.empty() || lower(named) != lower(host))
        return refuse("its Host header names another server than the secret's host ('" + value.substr(0, 253) + "')");
    }
    if (name == "connection" || name == "keep-alive" || name == "proxy-connection" || name == "accept-encoding" ||
        name == "upgrade" || name == "te")
      continue;
    std::string kept(header);
    // Only in the header the secret is for (Authorization unless declared otherwise): a
    // value put in wherever its placeholder was sent could come back in a header the
    // server echoes.
    for (const Secret* s : secrets)
      if (name == lower(s->header)) replace_all(kept, s->placeholder, s->value);
    out += kept;
    out += "\r\n";
  }
  if (hosts_seen != 1) return refuse(hosts_seen == 0 ? "a request without a Host header" : "more than one Host header");
  out += "Accept-Encoding: identity\r\nConnection: close\r\n\r\n";
  return out;
}

AnswerHead read_answer_head(std::string_view head) {
  AnswerHead out;
  if (head.rfind("HTTP/1.", 0) != 0 || head.size() < 12 || head[8] != ' ' ||
      head.substr(9, 3).find_first_not_of("0123456789") != std::string_view::npos)
    return out;
  out.status = (head[9] - '0') * 100 + (head[10] - '0') * 10 + (head[11] - '0');
  for (size_t at = head.find("\r\n"); at != std::string_view::npos && at + 2 < head.size();) {
    const size_t next = head.find("\r\n", at + 2);
    const std::string_view line = head.substr(at + 2, (next == std::string_view::npos ? head.size() : next) - at - 2);
    at = next;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || lower(line.substr(0, colon)) != "content-encoding") continue;
    const std::string coding = lower(trim(line.substr(colon + 1)));
    if (!coding.empty() && coding != "identity")
      out.unmaskable = "the server encoded its answer (" + coding.substr(0, 40) +
                       ") though asked not to: corral cannot check it for the secret's value";
  }
  return out;
}

ResponseMask::ResponseMask(const std::vector<const Secret*>& secrets) {
  for (const Secret* s : secrets) pairs_.emplace_back(s->value, s->placeholder);
}

void ResponseMask::mask(std::string& text) const {
  for (const auto& [value, placeholder] : pairs_) replace_all(text, value, placeholder);
}

std::string ResponseMask::feed(std::string_view piece) {
  held_.append(piece);
  mask(held_);
  // Held back: the longest end of what arrived that could begin a value, no more, so
  // an answer that cannot hold one (a 100 Continue, a streamed event) is passed on whole.
  size_t keep = 0;
  for (const auto& [value, placeholder] : pairs_) {
    const size_t longest = std::min(value.size() - 1, held_.size());
    for (size_t k = longest; k > keep; --k)
      if (held_.compare(held_.size() - k, k, value, 0, k) == 0) {
        keep = k;
        break;
      }
  }
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string ResponseMask::finish() {
  std::string out = std::move(held_);
  held_.clear();
  mask(out);
  return out;
}

}  // namespace corral::local
