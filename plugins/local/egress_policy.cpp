#include "egress_policy.hpp"

#include <arpa/inet.h>
#include <netdb.h>

#include <algorithm>
#include <cstring>

namespace corral::local {
namespace {

// An entry without a port means the web's two.
bool port_admits(int entry_port, int port) { return entry_port == 0 ? port == 80 || port == 443 : entry_port == port; }

bool name_matches(const std::string& pattern, const std::string& host) {
  if (pattern.rfind("*.", 0) == 0) {
    const std::string suffix = pattern.substr(1);  // ".example.com"
    return host.size() > suffix.size() && host.compare(host.size() - suffix.size(), suffix.size(), suffix) == 0;
  }
  return pattern == host;
}

// Lower case, without the trailing dot a fully qualified name may carry.
std::string canonical_name(std::string host) {
  std::transform(host.begin(), host.end(), host.begin(), [](unsigned char c) { return std::tolower(c); });
  if (!host.empty() && host.back() == '.') host.pop_back();
  return host;
}

EgressAddress loopback_v4() {
  EgressAddress a;
  auto* in = reinterpret_cast<sockaddr_in*>(&a.address);
  in->sin_family = AF_INET;
  in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.size = sizeof(sockaddr_in);
  return a;
}

std::optional<EgressAddress> literal_address(const std::string& host) {
  EgressAddress a;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&a.address);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&a.address);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    a.size = sizeof(sockaddr_in);
    return a;
  }
  if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    a.size = sizeof(sockaddr_in6);
    return a;
  }
  return std::nullopt;
}

void set_port(EgressAddress& a, int port) {
  if (a.address.ss_family == AF_INET) reinterpret_cast<sockaddr_in*>(&a.address)->sin_port = htons(port);
  else reinterpret_cast<sockaddr_in6*>(&a.address)->sin6_port = htons(port);
}

bool within(const Cidr& address, const char* cidr) { return cidr_within(address, *parse_cidr(cidr)); }

// True for a DNS name: letters, digits, '-', '_' and dots, at most 253 characters. Anything
// else is refused before it is matched: a NUL would end the name the resolver sees early
// ("pypi.org\0.example.com" matching *.example.com, then resolved as pypi.org).
bool is_host_name(const std::string& host) {
  return !host.empty() && host.size() <= 253 && std::all_of(host.begin(), host.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.';
  });
}

}  // namespace

Cidr address_cidr(const EgressAddress& a) {
  Cidr c;
  if (a.address.ss_family == AF_INET) {
    c.family = AF_INET;
    c.prefix = 32;
    std::memcpy(c.bytes.data(), &reinterpret_cast<const sockaddr_in*>(&a.address)->sin_addr, 4);
    return c;
  }
  const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&a.address);
  if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
    c.family = AF_INET;
    c.prefix = 32;
    std::memcpy(c.bytes.data(), in6->sin6_addr.s6_addr + 12, 4);
    return c;
  }
  c.family = AF_INET6;
  c.prefix = 128;
  std::memcpy(c.bytes.data(), in6->sin6_addr.s6_addr, 16);
  return c;
}

bool is_special_address(const Cidr& a) {
  static const char* const kSpecial[] = {
      "0.0.0.0/8",      "10.0.0.0/8",      "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
      "192.0.0.0/24",   "192.168.0.0/16",  "198.18.0.0/15", "224.0.0.0/3",  // multicast, reserved, broadcast
      "::/127",         "64:ff9b::/96",    "fc00::/7",      "fe80::/10",    "ff00::/8",  "2002::/16"};
  return std::any_of(std::begin(kSpecial), std::end(kSpecial), [&](const char* c) { return within(a, c); });
}

std::vector<EgressAddress> resolve_with_system(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::vector<EgressAddress> out;
  if (::getaddrinfo(name.c_str(), nullptr, &hints, &found) != 0) return out;
  for (addrinfo* a = found; a && out.size() < 16; a = a->ai_next) {
    if (a->ai_addrlen > sizeof(sockaddr_storage)) continue;
    EgressAddress e;
    std::memcpy(&e.address, a->ai_addr, a->ai_addrlen);
    e.size = a->ai_addrlen;
    out.push_back(e);
  }
  ::freeaddrinfo(found);
  return out;
}

EgressPolicy::EgressPolicy(std::vector<std::string> allow, EgressResolver resolver) : resolver_(std::move(resolver)) {
  for (const std::string& entry : allow) {
    AllowEntry e = split_allow_entry(entry);
    if (!is_ip_or_cidr(e.host)) e.host = canonical_name(e.host);
    entries_.push_back(std::move(e));
  }
}

bool EgressPolicy::name_listed(const std::string& host, int port) const {
  return std::any_of(entries_.begin(), entries_.end(), [&](const AllowEntry& e) {
    return !is_ip_or_cidr(e.host) && name_matches(e.host, host) && port_admits(e.port, port);
  });
}

bool EgressPolicy::address_listed(const Cidr& address, int port, bool via_host_alias) const {
  return std::any_of(entries_.begin(), entries_.end(), [&](const AllowEntry& e) {
    if (!port_admits(e.port, port)) return false;
    if (e.host == kHostAlias) return via_host_alias;
    const std::optional<Cidr> c = parse_cidr(e.host);
    return c && cidr_within(address, *c);
  });
}

EgressDecision EgressPolicy::decide(const std::string& requested, int port) const {
  EgressDecision d;
  if (port < 1 || port > 65535) {
    d.reason = "not a port";
    return d;
  }
  std::vector<EgressAddress> candidates;
  bool host_alias = false;
  if (std::optional<EgressAddress> literal = literal_address(requested)) {
    if (!address_listed(address_cidr(*literal), port, false)) {
      d.reason = "not in the allow list";
      return d;
    }
    candidates.push_back(*literal);
  } else {
    const std::string host = canonical_name(requested);
    if (!is_host_name(host)) {
      d.reason = "not a host name";
      return d;
    }
    if (!name_listed(host, port)) {
      d.reason = "not in the allow list";
      return d;
    }
    host_alias = host == kHostAlias;
    candidates = host_alias ? std::vector<EgressAddress>{loopback_v4()} : resolver_(host);
    if (candidates.empty()) {
      d.reason = "cannot resolve the name";
      return d;
    }
  }
  for (EgressAddress& a : candidates) {
    const Cidr c = address_cidr(a);
    // A name is free to point anywhere public; an internal address needs its own entry.
    if (is_special_address(c) && !address_listed(c, port, host_alias)) continue;
    set_port(a, port);
    d.addresses.push_back(a);
  }
  if (d.addresses.empty()) {
    d.reason = "resolves to a loopback, link-local or private address the allow list does not name";
    return d;
  }
  d.allowed = true;
  return d;
}

}  // namespace corral::local
