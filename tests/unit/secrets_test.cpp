// --secret: what a flag must say, the placeholder that stands in for a value, and the
// network a run with secrets gets.
#include <doctest/doctest.h>

#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "corral/errors.hpp"
#include "cli.hpp"
#include "lease/secrets.hpp"

using namespace corral;

namespace {

EnvLookup env(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

std::string refusal(const std::vector<std::string>& flags, const EnvLookup& lookup,
                    const SecretDeclarations& declared = {}) {
  try {
    parse_secret_flags(flags, lookup, declared);
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::invalid_argument);
    return e.what();
  }
  return "";
}

constexpr const char* kKey = "sk-proj-Abc123def456GHI789jkl";

}  // namespace

TEST_CASE("a --secret names a variable and its hosts; the value comes from that variable, never the flag") {
  const auto lookup = env({{"OPENAI_API_KEY", kKey}, {"TOKEN", "ghp_0123456789abcdefABCDEF"}});
  const std::vector<Secret> s =
      parse_secret_flags({"OPENAI_API_KEY=api.openai.com", "TOKEN=API.github.com,*.githubusercontent.com"}, lookup);
  REQUIRE(s.size() == 2);
  CHECK(s[0].name == "OPENAI_API_KEY");
  CHECK(s[0].hosts == std::vector<std::string>{"api.openai.com"});
  CHECK(s[0].value == kKey);
  CHECK(s[0].placeholder != kKey);
  CHECK(s[0].header == "Authorization");
  CHECK(s[0].format == "Bearer {}");
  CHECK(s[1].hosts == std::vector<std::string>{"api.github.com", "*.githubusercontent.com"});  // lower case
}

TEST_CASE("a --secret that cannot be used is refused, saying what is wrong") {
  const auto lookup = env({{"KEY", kKey}, {"SHORT", "sk-abc1234"}, {"BROKEN", "abcdefgh1234\r\nX-Evil: 1"}});
  CHECK(refusal({"KEY"}, lookup).find("no hosts") != std::string::npos);
  CHECK(refusal({"1KEY=a.com"}, lookup).find("is no variable name") != std::string::npos);
  CHECK(refusal({"UNSET=a.com"}, lookup).find("UNSET is not set in your environment") != std::string::npos);
  CHECK(refusal({"KEY=10.0.0.1"}, lookup).find("a domain or *.domain, without a port") != std::string::npos);
  CHECK(refusal({"KEY=a.com:8443"}, lookup).find("without a port") != std::string::npos);
  CHECK(refusal({"KEY=a.com,,b.com"}, lookup).find("an empty host") != std::string::npos);
  CHECK(refusal({"KEY=exa mple.com"}, lookup).find("host 'exa mple.com'") != std::string::npos);
  CHECK(refusal({"SHORT=a.com"}, lookup).find("fewer than 8 letters and digits") != std::string::npos);
  CHECK(refusal({"BROKEN=a.com"}, lookup).find("line break") != std::string::npos);
  CHECK(refusal({"KEY=a.com", "KEY=b.com"}, lookup).find("given twice") != std::string::npos);
  // The value never shows in a refusal.
  CHECK(refusal({"BROKEN=a.com"}, lookup).find("abcdefgh1234") == std::string::npos);
}

TEST_CASE("a placeholder keeps the value's length, vendor prefix and character classes, and is fresh each time") {
  const std::string p = make_placeholder(kKey);
  REQUIRE(p.size() == std::string(kKey).size());
  CHECK(p.rfind("sk-proj-", 0) == 0);
  for (size_t i = 0; i < p.size(); ++i) {
    const unsigned char v = kKey[i], c = p[i];
    CHECK((std::islower(v) != 0) == (std::islower(c) != 0));
    CHECK((std::isupper(v) != 0) == (std::isupper(c) != 0));
    CHECK((std::isdigit(v) != 0) == (std::isdigit(c) != 0));
    if (!std::isalnum(v)) CHECK(c == v);
  }
  CHECK(p != kKey);
  CHECK(make_placeholder(kKey) != p);
  CHECK(make_placeholder("ghp_0123456789abcdef").rfind("ghp_", 0) == 0);
  // A long lower-case run is no vendor prefix: it is replaced like the rest.
  CHECK(make_placeholder("abcdefghijkl_mnop1234").substr(0, 12) != "abcdefghijkl");
}

TEST_CASE("secrets need an allow list, which gains their hosts unless an entry names them already") {
  Secret s;
  s.hosts = {"api.example.com", "*.cdn.example.com"};
  const NetworkPolicy merged = with_secret_hosts(parse_network_policy("allow:pypi.org"), {s});
  CHECK(merged.allow == std::vector<std::string>{"pypi.org", "api.example.com", "*.cdn.example.com"});
  // Named already, with a port of the user's choosing: left as it is.
  const NetworkPolicy ported =
      with_secret_hosts(parse_network_policy("allow:api.example.com:8443,*.cdn.example.com"), {s});
  CHECK(ported.allow == std::vector<std::string>{"api.example.com:8443", "*.cdn.example.com"});
  // A wildcard of the allow list covers a named secret host.
  Secret named;
  named.hosts = {"a.example.com"};
  CHECK(with_secret_hosts(parse_network_policy("allow:*.example.com"), {named}).allow ==
        std::vector<std::string>{"*.example.com"});
  for (const char* policy : {"open", "none"}) {
    CAPTURE(policy);
    try {
      with_secret_hosts(parse_network_policy(policy), {s});
      FAIL("secrets on a network that is no allow list");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::invalid_argument);
      CHECK(std::string(e.what()).find("--secret needs --network allow:") != std::string::npos);
    }
  }
  CHECK(with_secret_hosts(parse_network_policy("open"), {}).mode == NetworkPolicy::Mode::open);
  CHECK(secret_hosts_outside(parse_network_policy("allow:api.example.com"), {s}) ==
        std::vector<std::string>{"*.cdn.example.com"});
  CHECK(secret_hosts_outside(merged, {s}).empty());
}

TEST_CASE("a secret your config declares is used by name: its hosts, header and format, its value from env, file or command") {
  corral::test::TempDir dir;
  dir.write("key.txt", "sk-file-0123456789abcdefXYZ\n");
  SecretDeclaration file;
  file.hosts = {"api.example.com"};
  file.from = "file:key.txt";  // beside the config file
  file.header = "X-Api-Key";
  file.format = "{}";
  file.file = dir.path() / "config.yaml";
  SecretDeclaration command;
  command.hosts = {"api.example.org"};
  command.from = "command:printf %s sk-cmd-9876543210zyxwvu";
  SecretDeclaration renamed;
  renamed.hosts = {"api.example.net"};
  renamed.from = "env:REAL_KEY";
  const SecretDeclarations declared = [&](const std::string& name) -> std::optional<SecretDeclaration> {
    if (name == "FILE_KEY") return file;
    if (name == "CMD_KEY") return command;
    if (name == "ENV_KEY") return renamed;
    return std::nullopt;
  };
  const auto lookup = env({{"REAL_KEY", "sk-env-abcdefghijklmnop"}});
  const std::vector<Secret> s =
      parse_secret_flags({"FILE_KEY", "CMD_KEY", "ENV_KEY=other.example.net"}, lookup, declared);
  REQUIRE(s.size() == 3);
  CHECK(s[0].value == "sk-file-0123456789abcdefXYZ");  // its line break is no part of it
  CHECK(s[0].hosts == std::vector<std::string>{"api.example.com"});
  CHECK(s[0].header == "X-Api-Key");
  CHECK(s[0].format == "{}");
  CHECK(s[1].value == "sk-cmd-9876543210zyxwvu");
  CHECK(s[2].value == "sk-env-abcdefghijklmnop");
  CHECK(s[2].hosts == std::vector<std::string>{"other.example.net"});  // the flag's hosts win

  SUBCASE("a declared source that gives nothing is refused, naming it and never a value") {
    command.from = "command:false";
    CHECK(refusal({"CMD_KEY"}, lookup, declared).find("its command 'false' exited with status 1") != std::string::npos);
    file.from = "file:missing.txt";
    CHECK(refusal({"FILE_KEY"}, lookup, declared).find("does not exist") != std::string::npos);
    renamed.from = "env:UNSET_KEY";
    CHECK(refusal({"ENV_KEY"}, lookup, declared).find("UNSET_KEY is not set in your environment") !=
          std::string::npos);
    command.from = "command:printf %s short";
    CHECK(refusal({"CMD_KEY"}, lookup, declared).find("fewer than 8 letters") != std::string::npos);
  }
}
