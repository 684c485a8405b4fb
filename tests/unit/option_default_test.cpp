// An option's default naming an XDG folder: checked when the spec is read, expanded with
// the XDG fallbacks when the option is resolved.
#include <doctest/doctest.h>

#include <map>

#include "settings/config.hpp"
#include "corral/json.hpp"
#include "corral/option_default.hpp"

using namespace corral;

namespace {

EnvFn env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& n) -> std::optional<std::string> {
    auto it = vars.find(n);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

// A spec with one option of `type` whose default is `value`, as JSON.
std::string spec_with_default(const std::string& type, const std::string& value) {
  return R"({"name":"acme","kind":"delegated-run","options":[{"name":"root","type":")" + type +
         R"(","trusted":true,"default":")" + value + R"("}]})";
}

}  // namespace

TEST_CASE("an XDG folder in an option's default is expanded, falling back as XDG says") {
  const auto set = env_of({{"HOME", "/home/u"}, {"XDG_STATE_HOME", "/xdg/state"}, {"XDG_CACHE_HOME", "/xdg/cache"}});
  const auto unset = env_of({{"HOME", "/home/u"}});
  const auto relative = env_of({{"HOME", "/home/u"}, {"XDG_CONFIG_HOME", "relative/config"}});
  CHECK(expand_option_default("${XDG_STATE_HOME}/acme", set) == "/xdg/state/acme");
  CHECK(expand_option_default("${XDG_STATE_HOME}/acme", unset) == "/home/u/.local/state/acme");
  CHECK(expand_option_default("${XDG_CONFIG_HOME}/acme/x", unset) == "/home/u/.config/acme/x");
  CHECK(expand_option_default("${XDG_CONFIG_HOME}", relative) == "/home/u/.config");  // relative is ignored
  CHECK(expand_option_default("${XDG_CACHE_HOME}/acme", set) == "/xdg/cache/acme");
  CHECK(expand_option_default("${XDG_CACHE_HOME}", env_of({})) == "/.cache");  // no HOME at all
  // Anything else is a plain value.
  CHECK(expand_option_default("/srv/acme", set) == "/srv/acme");
  CHECK(expand_option_default("${XDG_STATE_HOMEX}/a", set) == "${XDG_STATE_HOMEX}/a");

  // Through the resolution every command makes: only the default is expanded.
  ProviderSpec spec = json::spec_from_json(spec_with_default("path", "${XDG_STATE_HOME}/acme"));
  const Config none = Config::from(std::nullopt, std::nullopt);
  auto resolved = resolve_options(spec, {}, env_of({{"HOME", "/home/u"}}), none).at("root");
  CHECK(resolved.value == "/home/u/.local/state/acme");
  CHECK(resolved.source == "default");
  CHECK(resolve_options(spec, {{"root", "/given"}}, set, none).at("root").value == "/given");
}

TEST_CASE("a spec whose default misuses ${...} is refused when it is read, naming the option") {
  for (const char* bad : {"/srv/${XDG_STATE_HOME}", "${HOME}/acme", "${XDG_STATE_HOME}acme",
                          "${XDG_STATE_HOME}/${XDG_CACHE_HOME}", "${XDG_RUNTIME_DIR}/x"}) {
    CAPTURE(bad);
    try {
      json::spec_from_json(spec_with_default("path", bad));
      FAIL("the spec was accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::invalid_argument);
      CHECK(std::string(e.what()).find("option 'root' has the default") != std::string::npos);
    }
  }
  CHECK_THROWS_WITH_AS(json::spec_from_json(spec_with_default("string", "${XDG_CACHE_HOME}/acme")),
                       doctest::Contains("only an option of type path may default to an XDG folder"), Error);
  CHECK_NOTHROW(json::spec_from_json(spec_with_default("path", "${XDG_CONFIG_HOME}")));
  CHECK_NOTHROW(json::spec_from_json(spec_with_default("string", "plain $dollar")));
}
