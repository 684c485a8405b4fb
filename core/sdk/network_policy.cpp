#include "corral/types.hpp"

#include <algorithm>
#include <cctype>

#include <arpa/inet.h>

namespace corral {

namespace {

// True for a DNS name of letters, digits and hyphens, optionally "*." in front.
bool is_domain(std::string_view name) {
  if (name.rfind("*.", 0) == 0) name.remove_prefix(2);
  if (name.empty() || name.size() > 253) return false;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('.', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view label = name.substr(start, end - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') return false;
    for (char c : label)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

bool is_ip_or_cidr(std::string_view entry) {
  std::string address(entry.substr(0, entry.find('/')));
  unsigned char buf[16];
  int max_prefix = 0;
  if (inet_pton(AF_INET, address.c_str(), buf) == 1) max_prefix = 32;
  else if (inet_pton(AF_INET6, address.c_str(), buf) == 1) max_prefix = 128;
  else return false;
  if (address.size() == entry.size()) return true;
  std::string_view prefix = entry.substr(address.size() + 1);
  if (prefix.empty() || prefix.size() > 3) return false;
  int bits = 0;
  for (char c : prefix) {
    if (c < '0' || c > '9') return false;
    bits = bits * 10 + (c - '0');
  }
  return bits <= max_prefix;
}

AllowEntry split_allow_entry(std::string_view entry) {
  AllowEntry out;
  std::string_view port;
  if (entry.rfind('[', 0) == 0) {
    const size_t close = entry.find(']');
    if (close == std::string_view::npos) return {std::string(entry), 0};
    out.host = std::string(entry.substr(1, close - 1));
    std::string_view rest = entry.substr(close + 1);
    if (rest.empty()) return out;
    if (rest.front() != ':') return {std::string(entry), 0};
    port = rest.substr(1);
  } else if (const size_t colon = entry.find(':');
             colon != std::string_view::npos && entry.find(':', colon + 1) == std::string_view::npos) {
    out.host = std::string(entry.substr(0, colon));
    port = entry.substr(colon + 1);
  } else {
    return {std::string(entry), 0};  // no port, or a bare IPv6 address
  }
  // Not digits: no port but part of a malformed host ("http://a.com"), which the host's
  // own check then names; digits out of range: a port, refused as one.
  if (!std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return {std::string(entry), 0};
  int value = 0;
  for (char c : port) value = std::min(value * 10 + (c - '0'), 65536);
  out.port = port.empty() || value < 1 || value > 65535 ? -1 : value;
  return out;
}

std::optional<Cidr> parse_cidr(std::string_view entry) {
  if (!is_ip_or_cidr(entry)) return std::nullopt;
  const size_t slash = entry.find('/');
  const std::string address(entry.substr(0, slash));
  Cidr c;
  if (inet_pton(AF_INET, address.c_str(), c.bytes.data()) == 1) {
    c.family = AF_INET;
    c.prefix = 32;
  } else if (inet_pton(AF_INET6, address.c_str(), c.bytes.data()) == 1) {
    c.family = AF_INET6;
    c.prefix = 128;
  } else {
    return std::nullopt;
  }
  if (slash != std::string_view::npos) c.prefix = std::stoi(std::string(entry.substr(slash + 1)));
  return c;
}

bool cidr_within(const Cidr& inner, const Cidr& outer) {
  if (inner.family != outer.family || inner.prefix < outer.prefix) return false;
  for (int bit = 0; bit < outer.prefix; ++bit) {
    const int mask = 0x80 >> (bit % 8);
    if ((inner.bytes[bit / 8] & mask) != (outer.bytes[bit / 8] & mask)) return false;
  }
  return true;
}

NetworkPolicy parse_network_policy(std::string_view text) {
  const char* hint = "use --network open, --network none or --network allow:example.com,10.0.0.0/8";
  NetworkPolicy policy;
  if (text == "open") return policy;
  if (text == "none") {
    policy.mode = NetworkPolicy::Mode::none;
    return policy;
  }
  if (text.rfind("allow:", 0) != 0)
    throw Error(ErrorCode::invalid_argument, "unknown network policy '" + std::string(text) + "'", hint);
  policy.mode = NetworkPolicy::Mode::allow;
  std::string_view list = text.substr(6);
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string_view::npos) end = list.size();
    std::string_view entry = list.substr(start, end - start);
    if (entry.empty())
      throw Error(ErrorCode::invalid_argument, "the network allow list has an empty entry", hint);
    const AllowEntry split = split_allow_entry(entry);
    if (split.port < 0)
      throw Error(ErrorCode::invalid_argument,
                  "'" + std::string(entry) + "' in the network allow list has a port that is not 1-65535",
                  "write HOST:PORT with a port of 1-65535 ([IPV6]:PORT for an IPv6 address), e.g. --network "
                  "allow:host.corral.internal:5432");
    if (!is_domain(split.host) && !is_ip_or_cidr(split.host))
      throw Error(ErrorCode::invalid_argument,
                  "'" + std::string(entry) + "' in the network allow list is neither a domain nor an IP address or CIDR",
                  hint);
    if (std::find(policy.allow.begin(), policy.allow.end(), entry) == policy.allow.end())
      policy.allow.emplace_back(entry);
    start = end + 1;
  }
  if (policy.allow.size() > 64)
    throw Error(ErrorCode::invalid_argument, "the network allow list has more than 64 entries",
                "allow a wider CIDR or a parent domain (*.example.com) instead");
  return policy;
}

std::string to_string(const NetworkPolicy& policy) {
  switch (policy.mode) {
    case NetworkPolicy::Mode::open: return "open";
    case NetworkPolicy::Mode::none: return "none";
    case NetworkPolicy::Mode::allow: break;
  }
  std::string out = "allow:";
  for (size_t i = 0; i < policy.allow.size(); ++i) out += (i ? "," : "") + policy.allow[i];
  return out;
}

}  // namespace corral
