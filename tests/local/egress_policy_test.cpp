// The local egress policy: names and ports must match an entry, and an internal address
// (loopback, link-local, private, multicast) needs an address entry of its own, whatever a
// name resolves to. The resolver is a seam: these names never reach DNS.
#include <doctest/doctest.h>

#include <arpa/inet.h>

#include <map>

#include "egress_policy.hpp"

using corral::local::EgressAddress;
using corral::local::EgressPolicy;
using corral::parse_network_policy;

namespace {

EgressAddress address(const char* text) {
  EgressAddress a;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&a.address);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&a.address);
  if (inet_pton(AF_INET, text, &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    a.size = sizeof *v4;
  } else {
    REQUIRE(inet_pton(AF_INET6, text, &v6->sin6_addr) == 1);
    v6->sin6_family = AF_INET6;
    a.size = sizeof *v6;
  }
  return a;
}

// A world of names: pypi.org is public, the rest point inside.
std::vector<EgressAddress> resolve(const std::string& name) {
  static const std::map<std::string, std::vector<const char*>> kNames = {
      {"pypi.org", {"151.101.0.223"}},
      {"files.pythonhosted.org", {"151.101.64.223"}},
      {"localhost", {"127.0.0.1", "::1"}},
      {"metadata.example.com", {"169.254.169.254"}},
      {"mixed.example.com", {"10.1.2.3", "203.0.113.9"}},
      {"mapped.example.com", {"::ffff:127.0.0.1"}},
  };
  std::vector<EgressAddress> out;
  if (auto it = kNames.find(name); it != kNames.end())
    for (const char* a : it->second) out.push_back(address(a));
  return out;
}

EgressPolicy policy(const char* allow) { return EgressPolicy(parse_network_policy(allow).allow, resolve); }

}  // namespace

TEST_CASE("a name or address is reached only when an entry names it and its port") {
  const EgressPolicy p = policy("allow:pypi.org,*.pythonhosted.org,203.0.113.0/24:8443,example.net:22");
  CHECK(p.decide("pypi.org", 443).allowed);
  CHECK(p.decide("PyPI.org.", 80).allowed);  // case and a trailing dot do not matter
  CHECK(p.decide("files.pythonhosted.org", 443).allowed);
  CHECK_FALSE(p.decide("pythonhosted.org", 443).allowed);  // *. covers subdomains only
  CHECK_FALSE(p.decide("pypi.org", 8080).allowed);         // no port: 80 and 443
  CHECK(p.decide("pypi.org", 8080).reason == "not in the allow list");
  CHECK(p.decide("203.0.113.7", 8443).allowed);
  CHECK_FALSE(p.decide("203.0.113.7", 443).allowed);
  CHECK_FALSE(p.decide("example.org", 443).allowed);
  CHECK_FALSE(p.decide("pypi.org", 0).allowed);
  const auto none = policy("allow:nowhere.example.com").decide("nowhere.example.com", 443);
  CHECK_FALSE(none.allowed);
  CHECK(none.reason == "cannot resolve the name");
}

TEST_CASE("a host that is no DNS name is refused before it is matched: a NUL cannot cut the name the resolver sees") {
  const EgressPolicy p = policy("allow:*.example.com");
  const auto cut = p.decide(std::string("pypi.org\0.example.com", 22), 443);
  CHECK_FALSE(cut.allowed);
  CHECK(cut.reason == "not a host name");
  for (const char* odd : {"a b.example.com", "a/b.example.com", "a@b.example.com", "x.example.com:80", "%2e.example.com"}) {
    CAPTURE(odd);
    CHECK(p.decide(odd, 443).reason == "not a host name");
  }
  CHECK_FALSE(p.decide(std::string(254, 'a'), 443).allowed);
}

TEST_CASE("no name leads to an internal address unless an address entry covers it") {
  CHECK_FALSE(policy("allow:localhost:8443").decide("localhost", 8443).allowed);
  const auto both = policy("allow:localhost:8443,127.0.0.1:8443").decide("localhost", 8443);
  REQUIRE(both.allowed);
  CHECK(both.addresses.size() == 1);  // ::1 is not listed: only 127.0.0.1 is used
  CHECK_FALSE(policy("allow:metadata.example.com").decide("metadata.example.com", 80).allowed);
  CHECK_FALSE(policy("allow:*.example.com").decide("mapped.example.com", 443).allowed);  // IPv4 in IPv6
  CHECK(policy("allow:metadata.example.com,169.254.0.0/16").decide("metadata.example.com", 80).allowed);
  const auto mixed = policy("allow:mixed.example.com").decide("mixed.example.com", 443);
  REQUIRE(mixed.allowed);
  REQUIRE(mixed.addresses.size() == 1);  // the private one is dropped, the public one kept
  CHECK(corral::local::address_cidr(mixed.addresses[0]).bytes[0] == 203);
  // The address asked for directly needs its entry too, and the port is set on it.
  CHECK_FALSE(policy("allow:pypi.org").decide("127.0.0.1", 443).allowed);
  const auto direct = policy("allow:127.0.0.1:5432").decide("127.0.0.1", 5432);
  REQUIRE(direct.allowed);
  CHECK(ntohs(reinterpret_cast<const sockaddr_in*>(&direct.addresses[0].address)->sin_port) == 5432);
}

TEST_CASE("host.corral.internal is this machine's loopback, for the ports it is listed with") {
  const EgressPolicy p = policy("allow:host.corral.internal:5432");
  const auto db = p.decide("host.corral.internal", 5432);
  REQUIRE(db.allowed);
  CHECK(corral::local::address_cidr(db.addresses[0]).bytes[0] == 127);
  CHECK_FALSE(p.decide("host.corral.internal", 22).allowed);
  CHECK_FALSE(p.decide("127.0.0.1", 5432).allowed);  // the alias opens its name, not the address
}

TEST_CASE("internal address ranges") {
  using corral::local::address_cidr;
  using corral::local::is_special_address;
  for (const char* a : {"127.0.0.1", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "100.64.0.1",
                        "0.0.0.0", "224.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fd00::1", "ff02::1",
                        "::ffff:10.0.0.1"}) {
    INFO(a);
    CHECK(is_special_address(address_cidr(address(a))));
  }
  for (const char* a : {"151.101.0.223", "8.8.8.8", "172.32.0.1", "2606:4700::1111"}) {
    INFO(a);
    CHECK_FALSE(is_special_address(address_cidr(address(a))));
  }
}
