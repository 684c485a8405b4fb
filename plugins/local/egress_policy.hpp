// Which destinations a jail with `--network allow:` may reach through the egress proxy.
// A connection is allowed when its name (or address) and port match an entry and, when an
// address it resolves to is loopback, link-local, private, multicast or unspecified, an
// address or CIDR entry covers that address too: no DNS answer leads past the list.
//
// Thread rules: an EgressPolicy is immutable after construction; decide() may be called
// from any number of threads at once (the resolver must allow that).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <functional>
#include <string>
#include <vector>

#include "corral/types.hpp"

namespace corral::local {

// The name that stands for this machine's own loopback, from inside a jail.
inline constexpr const char* kHostAlias = "host.corral.internal";

// One address to connect to.
struct EgressAddress {
  sockaddr_storage address{};
  socklen_t size = 0;
};

// Resolves a name to addresses (getaddrinfo in production); empty when it cannot.
using EgressResolver = std::function<std::vector<EgressAddress>(const std::string& name)>;

// What the policy says of one destination: where to connect, or why not.
struct EgressDecision {
  bool allowed = false;
  std::string reason;                    // refused only
  std::vector<EgressAddress> addresses;  // allowed only: the addresses it may use, in order
};

class EgressPolicy {
 public:
  // `allow`: the entries of a parsed allow list (NetworkPolicy::allow).
  EgressPolicy(std::vector<std::string> allow, EgressResolver resolver);
  // The decision for `host` (a name or an address literal, IPv6 without brackets) and `port`.
  EgressDecision decide(const std::string& host, int port) const;

 private:
  // True when an entry's host covers `host` by name and its port admits `port`.
  bool name_listed(const std::string& host, int port) const;
  // True when an address or CIDR entry covering `address` admits `port` (or, for
  // loopback, a host.corral.internal entry does).
  bool address_listed(const Cidr& address, int port, bool via_host_alias) const;

  std::vector<AllowEntry> entries_;
  EgressResolver resolver_;
};

// The system resolver: getaddrinfo for TCP, both families.
std::vector<EgressAddress> resolve_with_system(const std::string& name);
// `address` as a Cidr of its full length (IPv4-mapped IPv6 as the IPv4 address it holds).
Cidr address_cidr(const EgressAddress& address);
// True for addresses a name must never lead to unlisted: loopback, link-local (cloud
// metadata included), private, shared (CGNAT), multicast, unspecified, broadcast.
bool is_special_address(const Cidr& address);

}  // namespace corral::local
