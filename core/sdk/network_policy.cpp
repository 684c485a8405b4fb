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
    if (!is_domain(entry) && !is_ip_or_cidr(entry))
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
