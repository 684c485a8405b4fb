#include "lease/network_policy.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace corral {
namespace {

struct Cidr {
  int family = 0;
  std::array<unsigned char, 16> bytes{};
  int prefix = 0;
};

// `entry` (an address or CIDR that is_ip_or_cidr accepted) as bytes and prefix length.
std::optional<Cidr> parse_cidr(std::string_view entry) {
  if (!is_ip_or_cidr(entry)) return std::nullopt;
  size_t slash = entry.find('/');
  std::string address(entry.substr(0, slash));
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

// True when every address of `inner` is in `outer`.
bool cidr_within(const Cidr& inner, const Cidr& outer) {
  if (inner.family != outer.family || inner.prefix < outer.prefix) return false;
  for (int bit = 0; bit < outer.prefix; ++bit) {
    int mask = 0x80 >> (bit % 8);
    if ((inner.bytes[bit / 8] & mask) != (outer.bytes[bit / 8] & mask)) return false;
  }
  return true;
}

// True when allow-list entry `entry` reaches nothing the entries of `outer` do not. A
// domain and an address never cover each other: what a name resolves to is not known here.
bool covered(const std::string& entry, const std::vector<std::string>& outer) {
  if (std::find(outer.begin(), outer.end(), entry) != outer.end()) return true;
  if (auto inner = parse_cidr(entry)) {
    for (const std::string& o : outer)
      if (auto c = parse_cidr(o); c && cidr_within(*inner, *c)) return true;
    return false;
  }
  for (const std::string& o : outer) {
    if (o.rfind("*.", 0) != 0) continue;
    std::string suffix = o.substr(1);  // ".example.com"
    if (entry.size() > suffix.size() && entry.compare(entry.size() - suffix.size(), suffix.size(), suffix) == 0)
      return true;
  }
  return false;
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
  std::vector<std::string> domains;
  for (const std::string& entry : policy.allow)
    if (!is_ip_or_cidr(entry)) domains.push_back(entry);
  if (!domains.empty()) needed.push_back(Feature::network_allowlist_domains);
  for (Feature feature : needed) {
    if (spec.features.has(feature)) continue;
    std::vector<std::string> able;
    for (const ProviderEntry& entry : registry.entries())
      if (entry.ok() && std::all_of(needed.begin(), needed.end(), [&](Feature f) { return entry.spec->features.has(f); }))
        able.push_back(entry.spec->name);
    const std::string why =
        feature == Feature::network_allowlist_domains
            ? fmt::format(" (for the domain{} {})", domains.size() > 1 ? "s" : "", fmt::join(domains, ", "))
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
