// The CLI surface: listings, describe, broken plugins, repository config.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <map>

#include "cli.hpp"
#include "corral/plugin_abi.h"
#include "corral/json.hpp"

namespace fs = std::filesystem;
using corral::test::CliEnv;

TEST_CASE("providers --json lists local with its features") {
  CliEnv env;
  auto r = env.run({"providers", "--json"});
  REQUIRE(r.exit_code == 0);
  auto doc = corral::json::parse(r.out, "providers");
  bool found = false;
  for (auto& p : doc.GetArray()) {
    if (p["name"].GetString() != std::string("local")) continue;
    found = true;
    CHECK(p["ok"].GetBool());
    CHECK(p["kind"].GetString() == std::string("delegated-run"));
    std::vector<std::string> features;
    for (auto& f : p["features"].GetArray()) features.push_back(f.GetString());
    CHECK(features == std::vector<std::string>{"run-session", "url-bridge", "archive-sync", "cleanup",
                                               "pause-resume", "run-downloads", "network-policy",
                                               "network-allowlist", "network-allowlist-domains", "fork", "tree-sync",
                                               "network-allowlist-ports", "egress-secrets", "exec-stdin",
                                               "exec-signals", "exec-tty", "exec-concurrent"});
  }
  CHECK(found);
}

TEST_CASE("providers shows how each plugin runs: in-process, or isolated as its registry entry asks") {
  CliEnv env;
  env.add_registry("isolated", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so"},
                   {{"isolation", "process"}});
  auto r = env.run({"providers", "--json"});
  REQUIRE(r.exit_code == 0);
  auto doc = corral::json::parse(r.out, "providers");
  std::map<std::string, std::string> isolation;
  for (auto& p : doc.GetArray()) isolation[p["name"].GetString()] = p["isolation"].GetString();
  CHECK(isolation["testbox"] == "process");
  CHECK(isolation["local"] == "in-process");
  auto text = env.run({"providers"});
  REQUIRE(text.exit_code == 0);
  const auto line_of = [&](const std::string& name) {
    const auto at = text.out.find("\n" + name);
    return at == std::string::npos ? std::string() : text.out.substr(at + 1, text.out.find('\n', at + 1) - at - 1);
  };
  CHECK_MESSAGE(line_of("testbox").find("[isolation: process]") != std::string::npos, text.out);
  CHECK_MESSAGE(line_of("local").find("isolation") == std::string::npos, text.out);
}

TEST_CASE("a broken plugin is listed with its error and never stops the others") {
  CliEnv env;
  env.add_registry("broken", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-raw2.so"});
  auto list = env.run({"providers"});
  CHECK(list.exit_code == 0);
  CHECK(list.out.find("Not loaded") != std::string::npos);
  CHECK(list.out.find("plugin ABI version 999") != std::string::npos);
  CHECK(list.out.find("local") != std::string::npos);
  auto run = env.run({"run", "--", "echo", "fine"});
  CHECK(run.exit_code == 0);
  CHECK(run.out == "fine\n");
  auto use = env.run({"run", "--provider", "raw2", "--", "true"});
  CHECK(use.exit_code == 78);
  CHECK(use.err.find("could not be loaded") != std::string::npos);
  auto doctor = env.run({"doctor"});
  CHECK(doctor.exit_code == 69);
  CHECK(doctor.out.find("[FAIL] plugin libcorral-raw2.so") != std::string::npos);
}

TEST_CASE("a provider whose plugin is broken is named with its load error (78) by every command, never 'unknown'") {
  CliEnv env;
  // A copy named as its provider would be, pinned to other bytes: refused before it runs.
  const fs::path lib = env.root().path() / "plugins" / "libcorral-acme.so";
  fs::create_directories(lib.parent_path());
  fs::copy_file(std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so", lib);
  env.add_registry("acme", {lib.string()}, {{"sha256", std::string(64, '0')}});
  const std::vector<std::vector<std::string>> commands = {{"run", "--provider", "acme", "--", "true"},
                                                          {"providers", "describe", "acme"},
                                                          {"doctor", "--provider", "acme"},
                                                          {"conformance", "--provider", "acme"},
                                                          {"docs", "provider", "acme"}};
  for (const auto& args : commands) {
    CAPTURE(args[0]);
    auto r = env.run(args);
    CHECK(r.exit_code == 78);
    CHECK_MESSAGE(r.err.find("provider 'acme' could not be loaded") != std::string::npos, r.err);
    CHECK(r.err.find("sha256 mismatch") != std::string::npos);
    CHECK(r.err.find("unknown provider") == std::string::npos);
  }
  // A --json reader of the kit learns why no check ran from stdout too.
  auto kit = env.run({"conformance", "--provider", "acme", "--json"});
  CHECK(kit.exit_code == 78);
  auto report = corral::json::parse(kit.out, "conformance --json");
  CHECK(corral::json::get_string(report, "provider") == "acme");
  CHECK(corral::json::get_string(report["error"], "code") == "config");
  CHECK(corral::json::get_string(report["error"], "message").find("sha256 mismatch") != std::string::npos);
  CHECK(env.run({"run", "--provider", "nosuch", "--", "true"}).exit_code == 64);
}

TEST_CASE("a registry file refused whole is named: by doctor as one failure, by a run of a provider it may list (78)") {
  CliEnv env;
  env.add_registry("acme", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so"});
  const fs::path file = env.config_dir() / "corral" / "providers.d" / "acme.yaml";
  REQUIRE(fs::exists(file));
  fs::permissions(file, fs::perms::others_write, fs::perm_options::add);
  // Named as its file is: the run is told which file was refused and why.
  auto r = env.run({"run", "--provider", "acme", "--", "true"});
  CHECK(r.exit_code == 78);
  CHECK_MESSAGE(r.err.find("provider 'acme' could not be loaded: registry " + file.string()) != std::string::npos, r.err);
  CHECK_MESSAGE(r.err.find("world-writable") != std::string::npos, r.err);
  // Named otherwise, the run still learns that a registry it cannot read was refused.
  r = env.run({"run", "--provider", "testbox", "--", "true"});
  CHECK(r.exit_code == 78);
  CHECK_MESSAGE(r.err.find("unknown provider 'testbox', and a registry that may list it was refused") !=
                    std::string::npos, r.err);
  // doctor: the file is one failure, never "[ok]" and then a failing plugin of it.
  auto doctor = env.run({"doctor"});
  CHECK(doctor.exit_code == 69);
  CHECK_MESSAGE(doctor.out.find("[FAIL] registry " + file.string()) != std::string::npos, doctor.out);
  CHECK(doctor.out.find("[ok] registry " + file.string()) == std::string::npos);
  CHECK(doctor.out.find("[FAIL] plugin acme.yaml") == std::string::npos);
  // Working providers work on.
  CHECK(env.run({"run", "--", "true"}).exit_code == 0);
}

TEST_CASE("a broken later registration of a provider refuses it, naming both registries, instead of running the earlier") {
  CliEnv env;
  const fs::path first = env.config_dir() / "corral" / "providers.d" / "10-testbox.yaml";
  const fs::path second = env.config_dir() / "corral" / "providers.d" / "20-testbox.yaml";
  env.root().write("config/corral/providers.d/10-testbox.yaml",
                   "plugins: [" + std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so]\n");
  env.root().write("config/corral/providers.d/20-testbox.yaml",
                   "plugins:\n  - path: " + std::string(CORRAL_TEST_PLUGIN_DIR) +
                       "/libcorral-testbox.so\n    sha256: " + std::string(64, '0') + "\n");
  env.env["TESTBOX_DIR"] = env.root().path().string();
  auto r = env.run({"run", "--provider", "testbox", "--", "true"});
  CHECK(r.exit_code == 78);
  CHECK_MESSAGE(r.err.find(second.string()) != std::string::npos, r.err);
  CHECK(r.err.find(first.string()) != std::string::npos);
  CHECK(r.err.find("does not fall back") != std::string::npos);
}

TEST_CASE("providers describe shows every setting with its flag and env var") {
  CliEnv env;
  auto r = env.run({"providers", "describe", "local"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("--local-network") != std::string::npos);
  CHECK(r.out.find("CORRAL_LOCAL_NETWORK") != std::string::npos);
  auto j = env.run({"providers", "describe", "bwrap", "--json"});
  auto doc = corral::json::parse(j.out, "describe");
  CHECK(doc["name"].GetString() == std::string("local"));
  CHECK(doc["options"][0]["flag"].GetString() == std::string("--local-network"));
  CHECK(doc["abiVersion"].GetUint() == CORRAL_ABI_VERSION);
  auto text = env.run({"providers", "describe", "local"});
  CHECK(text.out.find("built for plugin ABI version 1") != std::string::npos);
  CHECK(text.out.find("(user only: never from a repository's corral.yaml)") != std::string::npos);
  auto unknown = env.run({"providers", "describe", "nope"});
  CHECK(unknown.exit_code == 64);
  CHECK(unknown.err.find("available providers: ") != std::string::npos);
  CHECK(unknown.err.find("local") != std::string::npos);
}

TEST_CASE("a provider option flag on a command that opens no provider is refused, spelled as its provider spells it") {
  CliEnv env;
  auto providers = env.run({"providers", "--bwrap-network", "none"});  // an alias of local
  CHECK(providers.exit_code == 64);
  CHECK_MESSAGE(providers.err.find("--local-network is a provider option; `corral providers` takes none") !=
                    std::string::npos,
                providers.err);
  auto docs = env.run({"docs", "matrix", "--local-network=none"});
  CHECK(docs.exit_code == 64);
  CHECK(docs.err.find("`corral docs` takes none") != std::string::npos);
  CHECK(docs.out.empty());
  auto list = env.run({"list", "--bwrap-network", "none"});
  CHECK_MESSAGE(list.exit_code == 0, list.err);
}

TEST_CASE("providers --json describe NAME is describe's JSON, as with the flag after it") {
  CliEnv env;
  auto before = env.run({"providers", "--json", "describe", "local"});
  REQUIRE(before.exit_code == 0);
  CHECK(before.out == env.run({"providers", "describe", "local", "--json"}).out);
  auto doc = corral::json::parse(before.out, "describe");
  for (auto& o : doc["options"].GetArray())
    CHECK(o["flag"].GetString() == "--local-" + std::string(o["name"].GetString()));
}

TEST_CASE("describe --json gives a secret option no flag: corral refuses secrets on the command line") {
  CliEnv env;
  env.add_registry("testbox", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so"});
  auto r = env.run({"providers", "describe", "testbox", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto doc = corral::json::parse(r.out, "describe");
  int secrets = 0;
  for (auto& o : doc["options"].GetArray()) {
    INFO(o["name"].GetString());
    if (o["secret"].GetBool()) {
      ++secrets;
      CHECK(o["flag"].IsNull());
    } else {
      CHECK(o["flag"].IsString());
    }
  }
  CHECK(secrets == 1);  // testbox's token
}

TEST_CASE("provider filters reject unknown names and list the valid ones") {
  CliEnv env;
  auto with = env.run({"providers", "--feature", "url-bridge", "--kind", "delegated-run"});
  CHECK(with.out.find("local") != std::string::npos);
  auto without = env.run({"providers", "--feature", "run-session", "--kind", "service-control"});
  CHECK(without.out == "no providers match\n");
  auto bad = env.run({"providers", "--feature", "teleport"});
  CHECK(bad.exit_code == 64);
  CHECK(bad.err.find("run-session, url-bridge") != std::string::npos);
  auto bad_kind = env.run({"providers", "--kind", "vm"});
  CHECK(bad_kind.exit_code == 64);
  CHECK(bad_kind.err.find("ssh-lease") != std::string::npos);
}

TEST_CASE("a repository config chooses the provider but cannot add plugins") {
  CliEnv env;
  env.root().write("work/corral.yaml", "provider: nope\n");
  auto unknown = env.run({"run", "--", "true"});
  CHECK(unknown.exit_code == 64);
  CHECK(unknown.err.find("unknown provider 'nope'") != std::string::npos);
  env.env["CORRAL_PROVIDER"] = "local";  // the environment outranks the file
  CHECK(env.run({"run", "--", "true"}).exit_code == 0);
  env.root().write("work/corral.yaml", "plugins:\n  - path: /tmp/evil.so\n");
  auto evil = env.run({"run", "--", "true"});
  CHECK(evil.exit_code == 78);
  CHECK(evil.err.find("never load code") != std::string::npos);
}

TEST_CASE("usage errors exit 64 with a hint") {
  CliEnv env;
  auto none = env.run({"run"});
  CHECK(none.exit_code == 64);
  CHECK(none.err.find("corral run -- make test") != std::string::npos);
  CHECK(env.run({"frobnicate"}).exit_code == 64);
  auto v = env.run({"version"});
  CHECK(v.exit_code == 0);
  CHECK(v.out.find("plugin ABI 1") != std::string::npos);
}

TEST_CASE("an unknown provider flag lists the flags there are, never a secret's") {
  CliEnv env;
  auto r = env.run({"run", "--e2b-templat", "x", "--provider", "e2b", "--", "true"});
  CHECK(r.exit_code == 64);
  CHECK(r.err.find("--e2b-template") != std::string::npos);
  CHECK_MESSAGE(r.err.find("--e2b-api-key") == std::string::npos, r.err);
}

TEST_CASE("a repository config cannot point the local provider at another bwrap") {
  CliEnv env;
  env.root().write("work/evil.sh", "#!/bin/sh\necho pwned\n");
  env.root().write("work/corral.yaml", "local:\n  bwrap: ./evil.sh\n");
  auto r = env.run({"run", "--", "true"});
  CHECK(r.exit_code == 78);
  CHECK(r.out.find("pwned") == std::string::npos);
  CHECK(r.err.find("may not be set by a repository") != std::string::npos);
}

TEST_CASE("a mistyped setting or provider section in a config file is refused (78), with the nearest name") {
  CliEnv env;
  // A typo of `network: none` must not leave the network open.
  env.root().write("work/corral.yaml", "netwrk: none\n");
  auto r = env.run({"run", "--", "echo", "ran"});
  CHECK(r.exit_code == 78);
  CHECK(r.out.empty());
  CHECK_MESSAGE(r.err.find("corral.yaml: 'netwrk' is no setting (did you mean 'network'?)") != std::string::npos, r.err);
  // A section for no installed provider: its options would apply to nothing.
  env.root().write("work/corral.yaml", "locl:\n  network: none\n");
  r = env.run({"run", "--", "echo", "ran"});
  CHECK(r.exit_code == 78);
  CHECK(r.out.empty());
  CHECK_MESSAGE(r.err.find("'locl' is neither a setting nor an installed provider (did you mean 'local'?)") !=
                    std::string::npos, r.err);
  CHECK_MESSAGE(r.err.find("the installed providers are ") != std::string::npos, r.err);
  // The same for a provider named under a network mapping.
  env.root().write("work/corral.yaml", "network:\n  lokal: none\n");
  r = env.run({"run", "--", "echo", "ran"});
  CHECK(r.exit_code == 78);
  CHECK_MESSAGE(r.err.find("'lokal' is neither a setting nor an installed provider") != std::string::npos, r.err);
  fs::remove(env.workspace() / "corral.yaml");
  CHECK(env.run({"run", "--", "true"}).exit_code == 0);
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("the user config's env list forwards the names that are set and says which are not") {
  CliEnv env;
  env.root().write("config/corral/config.yaml", "env: [CORRAL_TEST_SET, CORRAL_TEST_UNSET]\n");
  env.env["CORRAL_TEST_SET"] = "forwarded";
  auto r = env.run({"run", "--", "sh", "-c", "echo \"$CORRAL_TEST_SET ${CORRAL_TEST_UNSET-unset}\""});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out == "forwarded unset\n");
  CHECK_MESSAGE(r.err.find("not forwarded, as not set here: CORRAL_TEST_UNSET (the env list of ") != std::string::npos,
                r.err);
  // Asked for by --env, an unset name is still an error: the user meant it for this run.
  r = env.run({"run", "--env", "CORRAL_TEST_UNSET", "--", "true"});
  CHECK(r.exit_code == 64);
  CHECK_MESSAGE(r.err.find("--env CORRAL_TEST_UNSET: CORRAL_TEST_UNSET is not set in this environment") !=
                    std::string::npos, r.err);
}

TEST_CASE("corral --version prints what corral version does") {
  CliEnv env;
  const auto word = env.run({"version"});
  const auto flag = env.run({"--version"});
  CHECK(flag.exit_code == 0);
  CHECK(flag.out == word.out);
  CHECK(flag.out.rfind("corral ", 0) == 0);
  CHECK(flag.out.find("(plugin ABI ") != std::string::npos);
}

TEST_CASE("a mistyped or misplaced flag is named, with the nearest one or the line to type") {
  CliEnv env;
  auto r = env.run({"run", "--kep", "--", "true"});
  CHECK(r.exit_code == 64);
  CHECK_MESSAGE(r.err.find("corral run has no option --kep (did you mean --keep?)") != std::string::npos, r.err);
  r = env.run({"pool", "fill", "--siz", "1"});
  CHECK(r.exit_code == 64);
  CHECK_MESSAGE(r.err.find("corral pool fill has no option --siz (did you mean --size?)") != std::string::npos, r.err);
  // The command's own flag without --: the line to type instead, in the order typed.
  r = env.run({"run", "ls", "-la", "src"});
  CHECK(r.exit_code == 64);
  CHECK_MESSAGE(r.err.find("corral run has no option -la: is it the command's?") != std::string::npos, r.err);
  CHECK_MESSAGE(r.err.find("`corral run -- ls -la src`") != std::string::npos, r.err);
  // A command that runs nothing takes no words after --, and says so in order.
  r = env.run({"list", "--", "a", "b"});
  CHECK(r.exit_code == 64);
  CHECK_MESSAGE(r.err.find("corral list runs no command, so it takes no words after --") != std::string::npos, r.err);
  CHECK_MESSAGE(r.err.find("remove `-- a b`") != std::string::npos, r.err);
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("--env NAME=VALUE and --env-file set variables; --env wins over the file") {
  CliEnv env;
  env.root().write("vars.env",
                   "# the project's settings\n"
                   "export MODE=test\n"
                   "GREETING=\"hello \\\"you\\\"\"\n"
                   "RAW='$HOME stays'\n"
                   "\n"
                   "LEVEL=3 # a comment\n"
                   "OVERRIDDEN=from-file\n");
  const std::string file = (env.root().path() / "vars.env").string();
  auto r = env.run({"run", "--env-file", file, "--env", "OVERRIDDEN=from-flag", "--env", "EXTRA=a=b", "--", "sh", "-c",
                    "printf '%s|%s|%s|%s|%s|%s' \"$MODE\" \"$GREETING\" \"$RAW\" \"$LEVEL\" \"$OVERRIDDEN\" \"$EXTRA\""});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out == "test|hello \"you\"|$HOME stays|3|from-flag|a=b");
  // A line of another shape names the file and line.
  env.root().write("bad.env", "OK=1\nnot an assignment\n");
  r = env.run({"run", "--env-file", (env.root().path() / "bad.env").string(), "--", "true"});
  CHECK(r.exit_code == 64);
  CHECK_MESSAGE(r.err.find("bad.env:2: 'not an assignment' is not NAME=VALUE") != std::string::npos, r.err);
  r = env.run({"run", "--env-file", (env.root().path() / "none.env").string(), "--", "true"});
  CHECK(r.exit_code == 64);
  CHECK_MESSAGE(r.err.find("none.env: no such file") != std::string::npos, r.err);
  // A bad name is named, its value (perhaps a credential) never printed.
  r = env.run({"run", "--env", "1X=s3cret-value", "--", "true"});
  CHECK(r.exit_code == 64);
  CHECK_MESSAGE(r.err.find("--env takes NAME or NAME=VALUE, not '1X=…'") != std::string::npos, r.err);
  CHECK(r.err.find("s3cret-value") == std::string::npos);
  // A FIFO, a folder or a link to one in the file's place is refused at once, never waited on.
  const fs::path fifo = env.root().path() / "fifo.env";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const fs::path& odd : {fifo, env.root().path()}) {
    CAPTURE(odd.string());
    r = env.run({"run", "--env-file", odd.string(), "--", "true"});
    CHECK(r.exit_code == 64);
    CHECK_MESSAGE(r.err.find("--env-file") != std::string::npos, r.err);
  }
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("status and stop without --id act on the only lease there is, and say which to name when there are more") {
  CliEnv env;
  auto r = env.run({"status"});
  CHECK(r.exit_code == 66);
  CHECK_MESSAGE(r.err.find("corral status: there is no kept lease here to act on") != std::string::npos, r.err);
  REQUIRE(env.run({"run", "--keep", "--", "true"}).exit_code == 0);
  r = env.run({"status", "--json"});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  const std::string slug = corral::json::get_string(corral::json::parse(r.out, "status")["lease"], "slug");
  REQUIRE(env.run({"run", "--keep", "--", "true"}).exit_code == 0);
  r = env.run({"stop"});
  CHECK(r.exit_code == 64);
  CHECK_MESSAGE(r.err.find("corral stop: there are 2 leases; say which with --id") != std::string::npos, r.err);
  CHECK_MESSAGE(r.err.find("--id " + slug) != std::string::npos, r.err);
  CHECK(env.run({"stop", "--id", slug}).exit_code == 0);
  r = env.run({"stop"});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(env.claims().empty());
  CHECK(env.local_sandboxes().empty());
}

namespace {

// A word of an argv as users and generators of command lines write them: the bytes the
// argument parser could take for its own (brackets, commas, braces, dashes, "=", "--"),
// shell and glob characters, spaces, newlines, invalid UTF-8, and the empty word.
std::string generated_word(std::uint32_t& state) {
  auto next = [&state] {
    state ^= state << 13, state ^= state >> 17, state ^= state << 5;
    return state;
  };
  static const std::vector<std::string> kPieces = {
      "[", "]", ",", "{", "}", "[]", "{}", "[a,b]", "a[1]", "-", "--", "-x", "--keep", "=", "a=b", " ", "\n",
      "\t", "'", "\"", "\\", "$HOME", "$(id)", "`id`", "*", "?", "~", "%s", "\xff", "\xc3\x28", "\xe2\x82",
      "x", "make", "--provider", "-v", "--help", "[x]", ",,", "]["};
  std::string word;
  const std::uint32_t pieces = next() % 5;  // 0: the empty word
  for (std::uint32_t i = 0; i < pieces; ++i) word += kPieces[next() % kPieces.size()];
  return word;
}

}  // namespace

TEST_CASE("the words after -- reach the command byte for byte, whatever they hold") {
  CliEnv env;
  // Each argument back NUL-terminated, so empty words and newlines show as themselves.
  const std::vector<std::string> printer = {"run", "--", "/bin/sh", "-c", "for a; do printf '%s\\0' \"$a\"; done",
                                            "sh"};
  auto expect = [&](const std::vector<std::string>& words) {
    std::vector<std::string> args = printer;
    args.insert(args.end(), words.begin(), words.end());
    std::string expected;
    for (const std::string& w : words) expected += w + '\0';
    const corral::test::CliResult r = env.run(args);
    std::string shown;
    for (const std::string& w : words) shown += "<" + w + "> ";
    REQUIRE_MESSAGE(r.exit_code == 0, shown, r.err);
    CHECK_MESSAGE(r.out == expected, shown);
  };
  SUBCASE("the words the attack round found changed") {
    expect({"[x]", "a[1]", "[a,b]", "[]"});
    expect({"-n", "[1,2]", "{}", "", "--", "--keep", "-v"});
  }
  SUBCASE("generated argvs") {
    // Seeded: a failure names the words, and the same words come back on the next run.
    std::uint32_t state = 2463534242u;
    for (int run = 0; run < 12; ++run) {
      std::vector<std::string> words(1 + state % 7);
      for (std::string& w : words) w = generated_word(state);
      expect(words);
    }
  }
}

TEST_CASE("words after -- for a command that runs none are refused, not dropped") {
  CliEnv env;
  auto r = env.run({"list", "--", "stray"});
  CHECK(r.exit_code == 64);
  CHECK_MESSAGE(r.err.find("stray") != std::string::npos, r.err);
}

TEST_CASE("an empty --id or --from names no lease: refused, never a fresh sandbox") {
  CliEnv env;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", "--id", "", "--", "true"}, {"run", "--shards", "2", "--from", "", "--", "true"},
        {"stop", "--id", ""}}) {
    corral::test::CliResult r = env.run(args);
    INFO(args[1], ": ", r.err);
    CHECK(r.exit_code == 64);
    CHECK(r.err.find("names no lease") != std::string::npos);
  }
  CHECK(env.local_sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE("a mistyped command is named as not corral's, with the nearest one") {
  CliEnv env;
  auto r = env.run({"rn", "--", "true"});
  CHECK(r.exit_code == 64);
  CHECK_MESSAGE(r.err.find("'rn' is not a corral command (did you mean 'run'?)") != std::string::npos, r.err);
  r = env.run({"-v", "bogus"});
  CHECK(r.exit_code == 64);
  CHECK_MESSAGE(r.err.find("'bogus' is not a corral command") != std::string::npos, r.err);
  CHECK(r.err.find("did you mean") == std::string::npos);
  CHECK(r.err.find("A subcommand is required") == std::string::npos);
  CHECK(env.local_sandboxes().empty());
}
