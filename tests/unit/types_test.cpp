#include <doctest/doctest.h>

#include <string>

#include "corral/json.hpp"
#include "corral/types.hpp"

using namespace corral;

TEST_CASE("durations parse in seconds, minutes, hours and days, and reject junk") {
  CHECK(parse_duration("90") == 90);
  CHECK(parse_duration("90s") == 90);
  CHECK(parse_duration("15m") == 900);
  CHECK(parse_duration("2h") == 7200);
  CHECK(parse_duration("1h30m") == 5400);
  CHECK(parse_duration("1d") == 86400);
  for (const char* bad : {"", "h", "1x", "-5", "1h30", "1.5h"}) CHECK_THROWS_AS(parse_duration(bad), Error);
  CHECK(format_duration(5400) == "1h30m");
  CHECK(format_duration(3600) == "1h");
  CHECK(format_duration(45) == "45s");
}

TEST_CASE("durations corral keeps itself parse to the millisecond, and reject what is finer or junk") {
  CHECK(parse_duration_ms("500ms") == 500);
  CHECK(parse_duration_ms("1.5s") == 1500);
  CHECK(parse_duration_ms("0.25") == 250);
  CHECK(parse_duration_ms("10s") == 10'000);
  CHECK(parse_duration_ms("1m30s") == 90'000);
  CHECK(parse_duration_ms("1.5m") == 90'000);
  CHECK(parse_duration_ms("0") == 0);
  for (const char* bad : {"", "ms", "1.", ".5s", "1.2345s", "1.5ms", "5us", "1s500", "-1s", "1,5s"})
    CHECK_THROWS_WITH_AS(parse_duration_ms(bad), doctest::Contains("invalid duration"), Error);
  CHECK_THROWS_WITH_AS(parse_duration_ms("36501d"), doctest::Contains("too long"), Error);
  // Whole seconds keep their own rules: no fractions, no milliseconds.
  CHECK_THROWS_AS(parse_duration("500ms"), Error);
  CHECK_THROWS_AS(parse_duration("1.5s"), Error);
}

TEST_CASE("a --timeout to the millisecond crosses the ABI rounded up and is kept whole by corral") {
  Command c;
  set_timeout(c, 1500);
  CHECK(c.timeout_seconds == 2);
  CHECK(c.timeout_ms == 1500);
  set_timeout(c, 1);
  CHECK(c.timeout_seconds == 1);
  set_timeout(c, 600'000);
  CHECK(c.timeout_seconds == 600);
  CHECK(c.timeout_ms == 600'000);
  set_timeout(c, 0);
  CHECK(c.timeout_seconds == 0);
  CHECK(c.timeout_ms == 0);
}

TEST_CASE("a command's folder is joined to the workdir and never leaves it") {
  CHECK(join_workspace_path("/w", "") == "/w");
  CHECK(join_workspace_path("/w", ".") == "/w");
  CHECK(join_workspace_path("/w", "a/./b/") == "/w/a/b");
  CHECK(join_workspace_path("", "a/b") == "a/b");
  CHECK(join_workspace_path("/", "a") == "/a");
  CHECK(join_workspace_path("", "") == "");
  CHECK_THROWS_WITH_AS(join_workspace_path("/w", "a/../../etc"), doctest::Contains("leaves the workspace"), Error);
  CHECK_THROWS_WITH_AS(join_workspace_path("/w", "/etc"), doctest::Contains("relative"), Error);
}

TEST_CASE("features and kinds round-trip through their canonical names") {
  for (Feature f : kAllFeatures) CHECK(parse_feature(to_string(f)) == f);
  for (ProviderKind k : kAllKinds) CHECK(parse_kind(to_string(k)) == k);
  CHECK_FALSE(parse_feature("teleport").has_value());
  FeatureSet set{Feature::cleanup, Feature::run_session};
  CHECK(set.names() == std::vector<std::string>{"run-session", "cleanup"});
}

TEST_CASE("a provider spec survives JSON and rejects unknown features and kinds") {
  ProviderSpec spec;
  spec.name = "acme";
  spec.aliases = {"a"};
  spec.kind = ProviderKind::service_control;
  spec.features = {Feature::url_bridge};
  OptionSpec o;
  o.name = "token";
  o.secret = true;
  o.env = {"ACME_TOKEN"};
  o.default_value = "x";
  spec.options.push_back(o);
  spec.docs.category = "cloud";
  ProviderSpec back = json::spec_from_json(json::to_json(spec));
  CHECK(back.name == "acme");
  CHECK(back.kind == ProviderKind::service_control);
  CHECK(back.features == spec.features);
  REQUIRE(back.options.size() == 1);
  CHECK(back.options[0].secret);
  CHECK(back.options[0].default_value == "x");
  CHECK(back.docs.category == "cloud");

  CHECK_THROWS_WITH_AS(json::spec_from_json(R"({"name":"x","kind":"delegated-run","features":["teleport"]})"),
                       doctest::Contains("unknown feature 'teleport'"), Error);
  CHECK_THROWS_WITH_AS(json::spec_from_json(R"({"name":"x","kind":"magic"})"),
                       doctest::Contains("unknown provider kind"), Error);
  CHECK_THROWS_WITH_AS(json::spec_from_json(R"({"name":"Bad Name","kind":"delegated-run"})"),
                       doctest::Contains("lower-case"), Error);
  CHECK_THROWS_AS(json::spec_from_json("{not json"), Error);
}

TEST_CASE("sandbox secrets cross the plugin boundary but are left out of stored JSON") {
  Sandbox s;
  s.id = "sb1";
  s.secrets = {{"token", "s3cret"}};
  CHECK(json::to_json(s, true).find("s3cret") != std::string::npos);
  CHECK(json::to_json(s, false).find("s3cret") == std::string::npos);
}

TEST_CASE("durations above 100 years are refused, naming the value and the maximum") {
  CHECK(parse_duration("36500d") == kMaxDurationSeconds);
  CHECK(parse_duration("36499d23h59m60s") == kMaxDurationSeconds);
  // 10000000000d used to pass and then overflow the nanosecond clock: the command was
  // killed at once as "timed out".
  for (const char* huge : {"10000000000d", "36500d1s", "3153600001", "99999999999999999999999999h",
                           "9223372036854775807s", "36500d36500d"}) {
    CAPTURE(huge);
    const std::string expected = "duration '" + std::string(huge) + "' is too long: the maximum is 36500d";
    CHECK_THROWS_WITH_AS(parse_duration(huge), doctest::Contains(expected.c_str()), Error);
  }
  CHECK_THROWS_WITH_AS(parse_duration("99999999999999999999x"), doctest::Contains("invalid duration"), Error);
  CHECK_THROWS_WITH_AS(parse_duration("9999999999999999999d30"), doctest::Contains("invalid duration"), Error);
}

TEST_CASE("a sandbox workdir must be a dedicated, normalised folder") {
  for (const char* bad : {"", "/", "/etc", "/home/user", "/root", "/a/../b", "/a//b", "/a/./b", "/a/-rf", "/a/b\n"})
    CHECK_MESSAGE(corral::workdir_problem(bad, false).has_value(), bad);
  CHECK(corral::workdir_problem("workspace", false) == std::optional<std::string>("is not an absolute path"));
  CHECK_FALSE(corral::workdir_problem("workspace", true).has_value());
  CHECK(corral::workdir_problem("../x", true).has_value());
  CHECK_FALSE(corral::workdir_problem("/home/user/workspace", false).has_value());
}

TEST_CASE("network policies parse open, none and allow lists, and round-trip") {
  CHECK(parse_network_policy("open") == NetworkPolicy{});
  CHECK(parse_network_policy("none").mode == NetworkPolicy::Mode::none);
  NetworkPolicy p = parse_network_policy("allow:pypi.org,*.github.com,10.0.0.0/8,192.0.2.7,2001:db8::/32");
  CHECK(p.mode == NetworkPolicy::Mode::allow);
  CHECK(p.allow == std::vector<std::string>{"pypi.org", "*.github.com", "10.0.0.0/8", "192.0.2.7", "2001:db8::/32"});
  CHECK(to_string(p) == "allow:pypi.org,*.github.com,10.0.0.0/8,192.0.2.7,2001:db8::/32");
  for (const char* text : {"open", "none", "allow:a.example.com", "allow:10.1.2.3/32,a-b.example"})
    CHECK(to_string(parse_network_policy(text)) == text);
  // A repeated entry is kept once.
  CHECK(parse_network_policy("allow:a.com,a.com").allow == std::vector<std::string>{"a.com"});
  CHECK(is_ip_or_cidr("10.0.0.0/8"));
  CHECK(is_ip_or_cidr("::1"));
  CHECK_FALSE(is_ip_or_cidr("10.0.0.0/33"));
  CHECK_FALSE(is_ip_or_cidr("example.com"));
  CHECK_FALSE(is_ip_or_cidr("10.0.0.0/"));
}

TEST_CASE("a bad network policy is refused naming the bad part, with the accepted forms as hint") {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"", "unknown network policy ''"},
      {"closed", "unknown network policy 'closed'"},
      {"Allow:a.com", "unknown network policy 'Allow:a.com'"},
      {"allow:", "the network allow list has an empty entry"},
      {"allow:a.com,,b.com", "the network allow list has an empty entry"},
      {"allow:a.com,", "the network allow list has an empty entry"},
      {"allow:http://a.com", "'http://a.com' in the network allow list is neither a domain nor an IP address or CIDR"},
      {"allow:a.com:0", "'a.com:0' in the network allow list has a port that is not 1-65535"},
      {"allow:a.com:65536", "'a.com:65536' in the network allow list has a port that is not 1-65535"},
      {"allow:a.com:", "'a.com:' in the network allow list has a port that is not 1-65535"},
      {"allow:a.com:44x", "'a.com:44x' in the network allow list is neither a domain nor an IP address or CIDR"},
      {"allow:10.0.0.0/40", "'10.0.0.0/40' in the network allow list is neither a domain nor an IP address or CIDR"},
      {"allow:-a.com", "'-a.com' in the network allow list is neither a domain nor an IP address or CIDR"},
      {"allow:a..com", "'a..com' in the network allow list is neither a domain nor an IP address or CIDR"},
      {"allow:a.*.com", "'a.*.com' in the network allow list is neither a domain nor an IP address or CIDR"},
      {"allow:a b.com", "'a b.com' in the network allow list is neither a domain nor an IP address or CIDR"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    try {
      parse_network_policy(c.text);
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::invalid_argument);
      CHECK(std::string(e.what()) == c.message);
      CHECK(e.hint().find("--network allow:") != std::string::npos);
    }
  }
  std::string many = "allow:";
  for (int i = 0; i < 65; ++i) many += (i ? ",h" : "h") + std::to_string(i) + ".example.com";
  CHECK_THROWS_WITH_AS(parse_network_policy(many), "the network allow list has more than 64 entries", Error);
}
