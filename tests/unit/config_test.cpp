#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "cli.hpp"
#include "settings/config.hpp"
#include "corral/json.hpp"

using namespace corral;

namespace {

ProviderSpec spec() {
  ProviderSpec s;
  s.name = "acme";
  OptionSpec region;
  region.name = "region";
  region.env = {"ACME_REGION", "ACME_DEFAULT_REGION"};
  region.default_value = "eu";
  OptionSpec cpus;
  cpus.name = "cpus";
  cpus.type = "int";
  OptionSpec mode;
  mode.name = "mode";
  mode.choices = {"fast", "safe"};
  s.options = {region, cpus, mode};
  return s;
}

ConfigFile yaml(const std::string& path, const std::string& text) { return {path, YAML::Load(text)}; }

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& n) -> std::optional<std::string> {
    auto it = vars.find(n);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace

TEST_CASE("option precedence is flag > env > repository > user > default") {
  Config user_only = Config::from(yaml("user.yaml", "acme: {region: us}"), std::nullopt);
  Config both = Config::from(yaml("user.yaml", "acme: {region: us}"), yaml("corral.yaml", "acme: {region: ap}"));
  auto no_env = env_of({});
  auto env = env_of({{"ACME_DEFAULT_REGION", "from-second-env"}});

  CHECK(resolve_options(spec(), {}, no_env, Config::from(std::nullopt, std::nullopt)).at("region").value == "eu");
  CHECK(resolve_options(spec(), {}, no_env, user_only).at("region").value == "us");
  auto r = resolve_options(spec(), {}, no_env, both).at("region");
  CHECK(r.value == "ap");
  CHECK(r.source == "corral.yaml");
  CHECK(resolve_options(spec(), {}, env, both).at("region").value == "from-second-env");
  auto f = resolve_options(spec(), {{"region", "flag"}}, env, both).at("region");
  CHECK(f.value == "flag");
  CHECK(f.source == "flag --acme-region");
  CHECK(resolve_options(spec(), {}, no_env, both).count("cpus") == 0);
}

TEST_CASE("option values are checked against their type and choices, naming the source") {
  auto no_env = env_of({});
  Config none = Config::from(std::nullopt, std::nullopt);
  CHECK_THROWS_WITH_AS(resolve_options(spec(), {{"cpus", "two"}}, no_env, none),
                       doctest::Contains("flag --acme-cpus"), Error);
  CHECK_THROWS_WITH_AS(resolve_options(spec(), {}, env_of({}), Config::from(yaml("u.yaml", "acme: {mode: wild}"), std::nullopt)),
                       doctest::Contains("one of fast, safe"), Error);
  CHECK(resolve_options(spec(), {{"cpus", "4"}, {"mode", "safe"}}, no_env, none).at("cpus").value == "4");
}

TEST_CASE("an unknown option key in a config file is an error that lists the valid ones") {
  Config typo = Config::from(std::nullopt, yaml("corral.yaml", "acme: {regoin: us}"));
  CHECK_THROWS_WITH_AS(resolve_options(spec(), {}, env_of({}), typo), doctest::Contains("regoin"), Error);
  // A broken config file, like every other config error: 78, not a usage error.
  try {
    resolve_options(spec(), {}, env_of({}), typo);
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::config);
  }
}

TEST_CASE("a repository config cannot set secret or trusted options, the user's config can") {
  ProviderSpec s = spec();
  OptionSpec url;
  url.name = "api-url";
  url.trusted = true;
  OptionSpec key;
  key.name = "key";
  key.secret = true;
  s.options.push_back(url);
  s.options.push_back(key);
  for (const char* text : {"acme: {api-url: http://attacker.example}", "acme: {key: stolen}"}) {
    CAPTURE(text);
    Config repo = Config::from(std::nullopt, yaml("corral.yaml", text));
    CHECK_THROWS_WITH_AS(resolve_options(s, {}, env_of({}), repo), doctest::Contains("may not be set by a repository"),
                         Error);
  }
  Config user = Config::from(yaml("user.yaml", "acme: {api-url: http://mine.example}"), std::nullopt);
  CHECK(resolve_options(s, {}, env_of({}), user).at("api-url").value == "http://mine.example");
}

TEST_CASE("a tightest-first option: a repository may pick a tighter choice than the user's, never a looser one") {
  ProviderSpec s = spec();
  OptionSpec net;
  net.name = "net";
  net.choices = {"none", "private", "shared"};
  net.tightest_first = true;
  net.default_value = "shared";
  s.options.push_back(net);
  auto resolved = [&](const char* user, const char* repo) {
    return resolve_options(s, {}, env_of({}),
                           Config::from(user ? yaml("user.yaml", user) : std::optional<ConfigFile>(),
                                        repo ? yaml("corral.yaml", repo) : std::optional<ConfigFile>()))
        .at("net");
  };
  auto looser = resolved("acme: {net: private}", "acme: {net: shared}");
  CHECK(looser.value == "private");
  CHECK(looser.source == "user.yaml");
  CHECK_MESSAGE(looser.warning.find("corral.yaml sets acme.net: shared, which is looser than 'private' from user.yaml") !=
                    std::string::npos,
                looser.warning);
  auto tighter = resolved("acme: {net: private}", "acme: {net: none}");
  CHECK(tighter.value == "none");
  CHECK(tighter.warning.empty());
  // Against the default when the user's config says nothing.
  CHECK(resolved(nullptr, "acme: {net: private}").value == "private");
  CHECK(resolved("acme: {net: none}", nullptr).value == "none");
  // The spec must list the levels.
  CHECK_THROWS_WITH_AS(corral::json::spec_from_json(R"({"name":"x","kind":"delegated-run","options":[
      {"name":"net","tightest-first":true}]})"),
                       doctest::Contains("lists no \"choices\""), Error);
}

TEST_CASE("a repository config can choose a provider but never add plugins") {
  CHECK_THROWS_WITH_AS(Config::from(std::nullopt, yaml("corral.yaml", "plugins: [{path: /tmp/evil.so}]")),
                       doctest::Contains("never load code"), Error);
  // The same key in the user's own config is simply not a setting.
  CHECK_NOTHROW(Config::from(yaml("user.yaml", "provider: e2b"), std::nullopt));
  Config c = Config::from(yaml("user.yaml", "provider: e2b\nenv: [A, B]"), yaml("corral.yaml", "provider: local"));
  std::string from;
  CHECK(c.provider(&from) == "local");
  CHECK(from == "corral.yaml");
  CHECK(c.env_names() == std::vector<std::string>{"A", "B"});
  CHECK_THROWS_WITH_AS(Config::from(std::nullopt, yaml("corral.yaml", "env: [AWS_SECRET_ACCESS_KEY]")),
                       doctest::Contains("must not choose which of your environment variables"), Error);
}

namespace {

// The ConfigError message that `load` throws, or "" when it throws nothing.
std::string config_error(const std::function<void()>& load) {
  try {
    load();
  } catch (const ConfigError& e) {
    CHECK(e.code() == ErrorCode::config);  // exit 78, not 70 "please report this bug"
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a settings file of the wrong shape is a ConfigError naming the file and the key") {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case user_cases[] = {
      {"env: [[a, b]]", "user.yaml: 'env[0]' must be a variable name, not a list"},
      {"env: [A, {B: 1}]", "user.yaml: 'env[1]' must be a variable name, not a mapping"},
      {"env: [A, ~]", "user.yaml: 'env[1]' must be a variable name, not empty"},
      {"env: A", "user.yaml: 'env' must be a list of variable names, not a single value"},
      {"provider: [x]", "user.yaml: 'provider' must be a provider name, not a list"},
      {"provider: {name: x}", "user.yaml: 'provider' must be a provider name, not a mapping"},
      {"e2b: {template: {a: 1}}", "user.yaml: 'e2b.template' must be a single value, not a mapping"},
      {"e2b: {template: [a]}", "user.yaml: 'e2b.template' must be a single value, not a list"},
      {"e2b: {[a]: 1}", "user.yaml: the option keys under 'e2b' must be names, not a list"},
      {"[a]: 1", "user.yaml: the top-level keys must be names, not a list"},
      {"- a\n- b", "user.yaml: expected a mapping of settings, not a list"},
  };
  for (const Case& c : user_cases) {
    CAPTURE(c.text);
    CHECK(config_error([&] { Config::from(yaml("user.yaml", c.text), std::nullopt); }) == c.message);
  }
  // The repository's file is checked just the same.
  CHECK(config_error([] { Config::from(std::nullopt, yaml("corral.yaml", "local: {network: [a]}")); }) ==
        "corral.yaml: 'local.network' must be a single value, not a list");
  // A key no setting has, holding a value or a list, is refused as the file is read: a
  // typo must not pass for a setting that applies. Near misses are named.
  const Case unknown[] = {
      {"netwrk: none", "user.yaml: 'netwrk' is no setting (did you mean 'network'?), nor a provider's section (a "
                       "mapping of option: value, not a single value)"},
      {"provder: e2b", "user.yaml: 'provder' is no setting (did you mean 'provider'?), nor a provider's section (a "
                       "mapping of option: value, not a single value)"},
      {"e2b: [1]", "user.yaml: 'e2b' is no setting, nor a provider's section (a mapping of option: value, not a "
                   "list)"},
  };
  for (const Case& c : unknown) {
    CAPTURE(c.text);
    CHECK(config_error([&] { Config::from(yaml("user.yaml", c.text), std::nullopt); }) == c.message);
  }
  CHECK(config_error([] { Config::from(std::nullopt, yaml("corral.yaml", "idel: stop")); })
            .find("corral.yaml: 'idel' is no setting (did you mean 'idle'?)") == 0);
  // Empty values are simply unset, and the well-formed shapes still read.
  Config fine = Config::from(yaml("user.yaml", "provider:\nenv:\ne2b:\nacme: {region: us, cpus: 2, mode: ~}"),
                             std::nullopt);
  CHECK_FALSE(fine.provider());
  CHECK(fine.env_names().empty());
  CHECK(fine.option("acme", "cpus") == "2");
  CHECK_FALSE(fine.option("acme", "mode"));
}

TEST_CASE("the provider names a settings file uses are listed, for the registry to check") {
  Config c = Config::from(yaml("user.yaml", "provider: local\nlocl: {workdir: /w}\nnetwork: {e2bb: none}\nidle: stop"),
                          yaml("corral.yaml", "kubernetes:\nnetwork: none"));
  using Named = std::vector<std::pair<std::string, std::string>>;
  CHECK(c.section_names() == Named{{"kubernetes", "corral.yaml"}, {"locl", "user.yaml"}, {"e2bb", "user.yaml"}});
}

TEST_CASE("the example corral.yaml the project ships reads as a repository's and as a user's config") {
  const std::string text = corral::test::read_file(std::string(CORRAL_SOURCE_DIR) + "/config/corral.example.yaml");
  using Named = std::vector<std::pair<std::string, std::string>>;
  // A repository may not list env, which the example leaves commented out for that reason.
  const Config repository = Config::from(std::nullopt, yaml("corral.yaml", text));
  CHECK(repository.provider() == "local");
  CHECK(repository.option("e2b", "template") == "base");
  CHECK(repository.option("local", "network") == "shared");
  CHECK(repository.section_names() == Named{{"local", "corral.yaml"}, {"e2b", "corral.yaml"}});
  const Config user = Config::from(yaml("config.yaml", text), std::nullopt);
  CHECK(user.env_names().empty());
}

TEST_CASE("a settings file that is not YAML is a ConfigError naming the file") {
  corral::test::TempDir t;
  t.write("corral.yaml", "provider: [unclosed\n");
  const std::string message = config_error([&] { Config::load(t.path()); });
  CHECK(message.rfind((t.path() / "corral.yaml").string() + ": ", 0) == 0);
}

TEST_CASE("secrets are declared in your own config only, each field checked, and read back by name") {
  const Config c = Config::from(yaml("user.yaml", "secrets:\n  OPENAI_API_KEY:\n    hosts: [api.openai.com]\n"
                                                  "  GH:\n    hosts: [api.github.com]\n    from: \"command:gh auth token\"\n"
                                                  "    header: X-Token\n    format: \"token {}\"\n"),
                                std::nullopt);
  const std::optional<SecretDeclaration> openai = c.secret("OPENAI_API_KEY");
  REQUIRE(openai);
  CHECK(openai->hosts == std::vector<std::string>{"api.openai.com"});
  CHECK(openai->from.empty());
  CHECK(openai->header == "Authorization");
  CHECK(openai->format == "Bearer {}");
  CHECK(openai->file == "user.yaml");
  const std::optional<SecretDeclaration> gh = c.secret("GH");
  REQUIRE(gh);
  CHECK(gh->from == "command:gh auth token");
  CHECK(gh->header == "X-Token");
  CHECK(gh->format == "token {}");
  CHECK_FALSE(c.secret("OTHER"));

  CHECK_THROWS_WITH_AS(Config::from(std::nullopt, yaml("corral.yaml", "secrets:\n  K:\n    hosts: [evil.example]\n")),
                       doctest::Contains("'secrets' is not allowed in a repository's config"), ConfigError);
  const std::pair<const char*, const char*> bad[] = {
      {"secrets: [K]", "user.yaml: 'secrets' must be a mapping of variable names"},
      {"secrets:\n  1K:\n    hosts: [a.com]", "user.yaml: 'secrets.1K' is no variable name"},
      {"secrets:\n  K: a.com", "user.yaml: 'secrets.K' must be a mapping (hosts, from, header, format)"},
      {"secrets:\n  K:\n    host: [a.com]", "user.yaml: 'secrets.K.host' is no field of a secret (did you mean 'hosts'?)"},
      {"secrets:\n  K:\n    from: env:X", "user.yaml: 'secrets.K.hosts' must be a list"},
      {"secrets:\n  K:\n    hosts: [a.com]\n    from: vault:x", "'secrets.K.from' must be env:VAR, file:PATH or command:ARGV"},
      {"secrets:\n  K:\n    hosts: [a.com]\n    header: \"X Y\"", "'secrets.K.header' must be a header name"},
      {"secrets:\n  K:\n    hosts: [a.com]\n    format: Bearer", "'secrets.K.format' must hold {} where the value goes"},
  };
  for (const auto& entry : bad) {
    const std::string text = entry.first;  // a structured binding: no lambda of CAPTURE's may take it (clang 14)
    CAPTURE(text);
    CHECK_THROWS_WITH_AS(Config::from(yaml("user.yaml", text), std::nullopt), doctest::Contains(entry.second),
                         ConfigError);
  }
}

TEST_CASE("limits and prices: per provider by name or alias, else the default entry; checked when read; never a repository's") {
  Config c = Config::from(
      yaml("user.yaml", "limits:\n  e2b: {sandboxes: 20, creates-per-minute: 60}\n  tb: {sandboxes: 2}\n"
                        "  default: {sandboxes: 50}"),
      std::nullopt);
  CHECK(c.limits("e2b").sandboxes == 20);
  CHECK(c.limits("e2b").creates_per_minute == 60);
  CHECK(c.limits("testbox", {"tb"}).sandboxes == 2);
  CHECK(c.limits("daytona").sandboxes == 50);
  CHECK(c.limits("daytona").creates_per_minute == 0);
  CHECK_FALSE(Config::from(std::nullopt, std::nullopt).limits("e2b").any());
  Config budget = Config::from(yaml("user.yaml", "limits: {e2b: {sandbox-hours-per-day: 0.5}}\nprices: {e2b: 0.083, "
                                                 "tb: 0}"),
                               std::nullopt);
  CHECK(budget.limits("e2b").sandbox_hours_per_day == 0.5);
  CHECK(budget.limits("e2b").any());
  CHECK(budget.price_per_hour("e2b") == 0.083);
  CHECK(budget.price_per_hour("testbox", {"tb"}) == 0.0);
  CHECK_FALSE(budget.price_per_hour("daytona"));
  struct Case {
    const char* text;
    const char* message;
  };
  const Case bad[] = {
      {"limits: 5", "user.yaml: 'limits' must be a mapping of provider names (or 'default') to their limits, not a "
                    "single value"},
      {"limits: {e2b: 5}", "user.yaml: 'limits.e2b' must be a mapping (sandboxes, creates-per-minute, "
                           "sandbox-hours-per-day), not a single value"},
      {"limits: {e2b: {sandbox-hours-per-day: 0}}",
       "user.yaml: 'limits.e2b.sandbox-hours-per-day' must be a number of hours above 0, such as 8 or 0.5, not '0'"},
      {"limits: {e2b: {sandbox-hours-per-day: 1e3}}",
       "user.yaml: 'limits.e2b.sandbox-hours-per-day' must be a number of hours above 0, such as 8 or 0.5, not '1e3'"},
      {"prices: {e2b: -1}", "user.yaml: 'prices.e2b' must be the price of a sandbox-hour, such as 0.083, not '-1'"},
      {"prices: 3", "user.yaml: 'prices' must be a mapping of provider names to the price of a sandbox-hour, not a "
                    "single value"},
      {"limits: {e2b: {sandbox: 5}}", "user.yaml: 'limits.e2b.sandbox' is no limit (did you mean 'sandboxes'?)"},
      {"limits: {e2b: {sandboxes: 0}}", "user.yaml: 'limits.e2b.sandboxes' must be a whole number of 1 or more, not '0'"},
      {"limits: {e2b: {sandboxes: -3}}",
       "user.yaml: 'limits.e2b.sandboxes' must be a whole number of 1 or more, not '-3'"},
      {"limits: {e2b: {creates-per-minute: 1.5}}",
       "user.yaml: 'limits.e2b.creates-per-minute' must be a whole number of 1 or more, not '1.5'"},
      {"limits: {e2b: {sandboxes: [2]}}",
       "user.yaml: 'limits.e2b.sandboxes' must be a whole number of 1 or more, not a list"},
  };
  for (const Case& b : bad) {
    CAPTURE(b.text);
    CHECK(config_error([&] { Config::from(yaml("user.yaml", b.text), std::nullopt); }) == b.message);
  }
  CHECK(config_error([] { Config::from(std::nullopt, yaml("corral.yaml", "limits: {e2b: {sandboxes: 500}}")); })
            .find("corral.yaml: 'limits' is not allowed in a repository's config") == 0);
  CHECK(config_error([] { Config::from(std::nullopt, yaml("corral.yaml", "prices: {e2b: 0}")); })
            .find("corral.yaml: 'prices' is not allowed in a repository's config") == 0);
}
