#include "lease/network_policy.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace corral {
namespace {

// True when allow-list host `host` reaches nothing the hosts of `outer` do not. A domain
// and an address never cover each other: what a name resolves to is not known here.
bool host_covered(const std::string& host, const std::vector<std::string>& outer) {
  if (std::find(outer.begin(), outer.end(), host) != outer.end()) return true;
  if (auto inner = parse_cidr(host)) {
    for (const std::string& o : outer)
      if (auto c = parse_cidr(o); c && cidr_within(*inner, *c)) return true;
    return false;
  }
  for (const std::string& o : outer) {
    if (o.rfind("*.", 0) != 0) continue;
    std::string suffix = o.substr(1);  // ".example.com"
    if (host.size() > suffix.size() && host.compare(host.size() - suffix.size(), suffix.size(), suffix) == 0)
      return true;
  }
  return false;
}

// True when allow-list entry `entry` reaches nothing the entries of `outer` do not: its
// host covered by an outer entry naming the same port, or none when it names none.
bool covered(const std::string& entry, const std::vector<std::string>& outer) {
  const AllowEntry inner = split_allow_entry(entry);
  std::vector<std::string> hosts;
  for (const std::string& o : outer)
    if (AllowEntry e = split_allow_entry(o); e.port == inner.port) hosts.push_back(std::move(e.host));
  return host_covered(inner.host, hosts);
}

}  // namespace

bool network_within(const NetworkPolicy& inner, const NetworkPolicy& outer) {
  using Mode = NetworkPolicy::Mode;
  if (outer.mode == Mode::open || inner.mode == Mode::none) return true;
  if (inner.mode == Mode::open || outer.mode == Mode::none) return false;
  return std::all_of(inner.allow.begin(), inner.allow.end(),
                     [&](const std::string& e) { return covered(e, outer.allow); });
}

NetworkPolicy choose_network_policy(const std::optional<NetworkPolicy>& flag, const ProviderSpec& spec,
                                    const Config& config, Ui& ui) {
  if (flag) return *flag;
  std::string user_file, repo_file;
  std::optional<NetworkPolicy> user = config.network(spec, /*repository=*/false, &user_file);
  std::optional<NetworkPolicy> repo = config.network(spec, /*repository=*/true, &repo_file);
  if (!repo) return user.value_or(NetworkPolicy{});
  if (!user || network_within(*repo, *user)) return *repo;
  ui.warn(fmt::format("{} asks for network '{}', which is looser than '{}' from {}: a repository may only tighten "
                      "your network policy, so '{}' applies (pass --network to choose yourself)",
                      repo_file, to_string(*repo), to_string(*user), user_file, to_string(*user)));
  return *user;
}

void require_network_policy(const ProviderSpec& spec, const NetworkPolicy& policy, const Registry& registry) {
  if (policy.mode == NetworkPolicy::Mode::open) return;
  std::vector<Feature> needed = {policy.mode == NetworkPolicy::Mode::none ? Feature::network_policy
                                                                          : Feature::network_allowlist};
  std::vector<std::string> domains, with_ports;
  for (const std::string& entry : policy.allow) {
    const AllowEntry split = split_allow_entry(entry);
    if (!is_ip_or_cidr(split.host)) domains.push_back(entry);
    if (split.port != 0) with_ports.push_back(entry);
  }
  if (!domains.empty()) needed.push_back(Feature::network_allowlist_domains);
  if (!with_ports.empty()) needed.push_back(Feature::network_allowlist_ports);
  for (Feature feature : needed) {
    if (spec.features.has(feature)) continue;
    std::vector<std::string> able;
    for (const ProviderEntry& entry : registry.entries())
      if (entry.ok() && std::all_of(needed.begin(), needed.end(), [&](Feature f) { return entry.spec->features.has(f); }))
        able.push_back(entry.spec->name);
    const std::string why =
        feature == Feature::network_allowlist_domains
            ? fmt::format(" (for the domain{} {})", domains.size() > 1 ? "s" : "", fmt::join(domains, ", "))
        : feature == Feature::network_allowlist_ports
            ? fmt::format(" (for the port{} in {})", with_ports.size() > 1 ? "s" : "", fmt::join(with_ports, ", "))
            : "";
    throw Error(ErrorCode::unsupported,
                fmt::format("network policy '{}' needs the '{}' feature{}, which provider '{}' does not have: it "
                            "cannot enforce this policy, and corral never runs with a looser one",
                            to_string(policy), to_string(feature), why, spec.name),
                able.empty() ? fmt::format("no installed provider has '{}'; choose another --network (or the config's "
                                           "'network:'), or install a provider that has it",
                                           to_string(feature))
                             : fmt::format("providers that have it: {} (choose one with --provider)",
                                           fmt::join(able, ", ")));
  }
}

}  // namespace corral
