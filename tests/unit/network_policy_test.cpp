// Which network policy a new sandbox gets: the tightening rule, the precedence of flag,
// user config and repository config, and the refusal of a provider that cannot enforce it.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "lease/network_policy.hpp"

using namespace corral;

namespace {

NetworkPolicy policy(const char* text) { return parse_network_policy(text); }

ConfigFile yaml(const std::string& path, const std::string& text) { return {path, YAML::Load(text)}; }

ProviderSpec spec(const char* name, std::vector<std::string> aliases = {}) {
  ProviderSpec s;
  s.name = name;
  s.aliases = std::move(aliases);
  return s;
}

struct Recorder : Ui {
  std::vector<std::string> warnings;
  void out(std::string_view) override {}
  void err(std::string_view) override {}
  void info(const std::string&) override {}
  void note(const std::string&) override {}
  void warn(const std::string& m) override { warnings.push_back(m); }
  void progress(const std::string&) override {}
  bool cancelled() override { return false; }
};

// The message of the ConfigError `f` throws ("" when none).
template <class F>
std::string config_error(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a policy is within another when it reaches nothing more") {
  CHECK(network_within(policy("none"), policy("open")));
  CHECK(network_within(policy("none"), policy("none")));
  CHECK(network_within(policy("allow:a.com"), policy("open")));
  CHECK(network_within(policy("open"), policy("open")));
  CHECK_FALSE(network_within(policy("open"), policy("none")));
  CHECK_FALSE(network_within(policy("open"), policy("allow:a.com")));
  CHECK_FALSE(network_within(policy("allow:a.com"), policy("none")));
  // Allow lists: a subset, a subdomain of a wildcard, a CIDR inside a CIDR.
  CHECK(network_within(policy("allow:a.com"), policy("allow:a.com,b.com")));
  CHECK_FALSE(network_within(policy("allow:a.com,c.com"), policy("allow:a.com,b.com")));
  CHECK(network_within(policy("allow:x.a.com,*.y.a.com"), policy("allow:*.a.com")));
  CHECK_FALSE(network_within(policy("allow:a.com"), policy("allow:*.a.com")));  // the apex is not a subdomain
  CHECK_FALSE(network_within(policy("allow:xa.com"), policy("allow:*.a.com")));
  CHECK_FALSE(network_within(policy("allow:*.a.com"), policy("allow:x.a.com")));
  CHECK(network_within(policy("allow:10.1.2.0/24,10.9.9.9"), policy("allow:10.0.0.0/8")));
  CHECK_FALSE(network_within(policy("allow:10.0.0.0/7"), policy("allow:10.0.0.0/8")));
  CHECK_FALSE(network_within(policy("allow:11.0.0.1"), policy("allow:10.0.0.0/8")));
  CHECK(network_within(policy("allow:2001:db8:1::/48"), policy("allow:2001:db8::/32")));
  CHECK_FALSE(network_within(policy("allow:10.0.0.1"), policy("allow:::/0")));  // families never mix
  // An address is never taken as inside a domain, nor a domain inside a CIDR.
  CHECK_FALSE(network_within(policy("allow:10.0.0.1"), policy("allow:*.a.com")));
  CHECK_FALSE(network_within(policy("allow:a.com"), policy("allow:0.0.0.0/0")));
}

TEST_CASE("network policy precedence: flag > user config > repository config > open") {
  Recorder ui;
  ProviderSpec e2b = spec("e2b");
  Config none = Config::from(std::nullopt, std::nullopt);
  CHECK(choose_network_policy(std::nullopt, e2b, none, ui) == NetworkPolicy{});

  Config user = Config::from(yaml("user.yaml", "network: {e2b: 'allow:a.com,b.com', local: none}"), std::nullopt);
  CHECK(choose_network_policy(std::nullopt, e2b, user, ui) == policy("allow:a.com,b.com"));
  CHECK(choose_network_policy(std::nullopt, spec("local"), user, ui) == policy("none"));
  CHECK(choose_network_policy(std::nullopt, spec("daytona"), user, ui) == NetworkPolicy{});  // not named: open
  // The user's own flag may loosen what the user's config says.
  CHECK(choose_network_policy(policy("open"), e2b, user, ui) == NetworkPolicy{});

  // One policy for every provider; a provider found by its alias too.
  Config every = Config::from(yaml("user.yaml", "network: none"), std::nullopt);
  CHECK(choose_network_policy(std::nullopt, spec("daytona"), every, ui) == policy("none"));
  Config alias = Config::from(yaml("user.yaml", "network: {bwrap: none}"), std::nullopt);
  CHECK(choose_network_policy(std::nullopt, spec("local", {"bwrap"}), alias, ui) == policy("none"));

  // Without a user policy the repository's applies.
  Config repo_only = Config::from(std::nullopt, yaml("corral.yaml", "network: 'allow:pypi.org'"));
  CHECK(choose_network_policy(std::nullopt, e2b, repo_only, ui) == policy("allow:pypi.org"));
  CHECK(ui.warnings.empty());
}

TEST_CASE("a repository config may tighten the user's network policy but never loosen it") {
  ProviderSpec e2b = spec("e2b");
  auto with = [](const char* user, const char* repo) {
    return Config::from(yaml("user.yaml", user), yaml("corral.yaml", repo));
  };
  {
    Recorder ui;
    Config narrower = with("network: 'allow:a.com,b.com'", "network: 'allow:a.com'");
    CHECK(choose_network_policy(std::nullopt, e2b, narrower, ui) == policy("allow:a.com"));
    CHECK(choose_network_policy(std::nullopt, e2b, with("network: 'allow:a.com'", "network: none"), ui) ==
          policy("none"));
    CHECK(choose_network_policy(std::nullopt, e2b, with("network: open", "network: none"), ui) == policy("none"));
    CHECK(ui.warnings.empty());
  }
  struct Case {
    const char* user;
    const char* repo;
    const char* kept;
  };
  const Case loosening[] = {
      {"network: none", "network: open", "none"},
      {"network: none", "network: 'allow:a.com'", "none"},
      {"network: {e2b: none}", "network: {e2b: open}", "none"},
      {"network: 'allow:a.com'", "network: open", "allow:a.com"},
      {"network: 'allow:a.com'", "network: 'allow:a.com,evil.example'", "allow:a.com"},
      {"network: 'allow:10.0.0.0/8'", "network: 'allow:0.0.0.0/0'", "allow:10.0.0.0/8"},
  };
  for (const Case& c : loosening) {
    CAPTURE(c.repo);
    Recorder ui;
    CHECK(choose_network_policy(std::nullopt, e2b, with(c.user, c.repo), ui) == policy(c.kept));
    REQUIRE(ui.warnings.size() == 1);
    CHECK(ui.warnings[0].find("corral.yaml asks for network") == 0);
    CHECK(ui.warnings[0].find("may only tighten") != std::string::npos);
  }
  // The flag still decides over both.
  Recorder ui;
  CHECK(choose_network_policy(policy("open"), e2b, with("network: none", "network: none"), ui) == NetworkPolicy{});
}

TEST_CASE("a network setting that is no policy is a ConfigError naming the file and the key") {
  CHECK(config_error([] { Config::from(yaml("user.yaml", "network: closed"), std::nullopt); }) ==
        "user.yaml: 'network': unknown network policy 'closed'");
  CHECK(config_error([] { Config::from(std::nullopt, yaml("corral.yaml", "network: {e2b: 'allow:a..b'}")); }) ==
        "corral.yaml: 'network.e2b': 'a..b' in the network allow list is neither a domain nor an IP address or CIDR");
  CHECK(config_error([] { Config::from(yaml("user.yaml", "network: [none]"), std::nullopt); }) ==
        "user.yaml: 'network' must be a network policy (open, none or allow:HOST,...), not a list");
  CHECK(config_error([] { Config::from(yaml("user.yaml", "network: {e2b: [none]}"), std::nullopt); }) ==
        "user.yaml: 'network.e2b' must be a network policy (open, none or allow:HOST,...), not a list");
}

TEST_CASE("a policy the provider cannot enforce is refused, naming the provider, the feature and who has it") {
  Registry empty = Registry::load({});
  ProviderSpec local = spec("local");
  local.features = FeatureSet{Feature::run_session, Feature::network_policy};
  CHECK_NOTHROW(require_network_policy(local, policy("open"), empty));
  CHECK_NOTHROW(require_network_policy(local, policy("none"), empty));
  try {
    require_network_policy(local, policy("allow:a.com"), empty);
    FAIL("allow: was accepted by a provider without network-allowlist");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::unsupported);
    CHECK(std::string(e.what()).find("'allow:a.com' needs the 'network-allowlist' feature, which provider 'local' "
                                     "does not have") != std::string::npos);
    CHECK(e.hint().find("no installed provider has 'network-allowlist'") != std::string::npos);
  }
  ProviderSpec bare = spec("bare");
  CHECK_THROWS_WITH_AS(require_network_policy(bare, policy("none"), empty),
                       doctest::Contains("'network-policy' feature, which provider 'bare' does not have"), Error);
}

TEST_CASE("an allow list with a domain also needs network-allowlist-domains; addresses and CIDRs alone do not") {
  Registry empty = Registry::load({});
  ProviderSpec cidr_only = spec("cidrbox");
  cidr_only.features = FeatureSet{Feature::run_session, Feature::network_allowlist};
  CHECK_NOTHROW(require_network_policy(cidr_only, policy("allow:10.0.0.0/8,192.0.2.7,2001:db8::/32"), empty));
  for (const char* text : {"allow:10.0.0.0/8,pypi.org", "allow:*.github.com"}) {
    CAPTURE(text);
    CHECK_THROWS_WITH_AS(require_network_policy(cidr_only, policy(text), empty),
                         doctest::Contains("needs the 'network-allowlist-domains' feature (for the domain"), Error);
  }
  try {
    require_network_policy(cidr_only, policy("allow:pypi.org,10.0.0.0/8,*.github.com"), empty);
    FAIL("domains were accepted by a provider that takes only addresses");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::unsupported);
    CHECK(std::string(e.what()).find("(for the domains pypi.org, *.github.com), which provider 'cidrbox' does not "
                                     "have") != std::string::npos);
    CHECK(e.hint().find("no installed provider has 'network-allowlist-domains'") != std::string::npos);
  }
  ProviderSpec both = cidr_only;
  both.features.insert(Feature::network_allowlist_domains);
  CHECK_NOTHROW(require_network_policy(both, policy("allow:pypi.org,10.0.0.0/8,*.github.com"), empty));
  // The domain feature alone does not make an allow list enforceable.
  ProviderSpec domains_only = spec("domainbox");
  domains_only.features = FeatureSet{Feature::network_allowlist_domains};
  CHECK_THROWS_WITH_AS(require_network_policy(domains_only, policy("allow:pypi.org"), empty),
                       doctest::Contains("needs the 'network-allowlist' feature"), Error);
}
