// Shell completion as a user gets it: the script `corral completion bash` prints, sourced
// into a real bash whose completion function is called the way bash calls it on TAB
// (COMP_WORDS, COMP_CWORD, COMP_LINE, COMP_POINT), with the built corral on PATH.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cli.hpp"
#include "corral/os/process.hpp"

namespace fs = std::filesystem;
using corral::test::CliEnv;
using Words = std::vector<std::string>;

namespace {

// `text` as one single-quoted bash word.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs `script` with `shell` (bash, zsh or fish, none reading the user's start-up files)
// with `env`'s environment and the built corral first on PATH.
corral::test::CliResult shell(const std::string& shell, const CliEnv& env, const std::string& script) {
  corral::os::ProcessSpec spec;
  spec.argv = shell == "bash"  ? std::vector<std::string>{"bash", "--norc", "--noprofile", "-c", script}
              : shell == "zsh" ? std::vector<std::string>{"zsh", "-f", "-c", script}
                               : std::vector<std::string>{"fish", "--no-config", "-c", script};
  spec.env = env.environment();
  const std::string bin = fs::path(corral::test::corral_binary()).parent_path().string();
  for (std::string& kv : *spec.env)
    if (kv.rfind("PATH=", 0) == 0) kv = "PATH=" + bin + ":" + kv.substr(5);
  spec.cwd = env.workspace().string();
  corral::os::CapturedProcess p = corral::os::capture_process(spec, 60);
  return {p.exit_code, p.out, p.err};
}

corral::test::CliResult bash(const CliEnv& env, const std::string& script) { return shell("bash", env, script); }

Words lines(const std::string& text) {
  Words out;
  std::string rest = text;
  for (size_t nl; (nl = rest.find('\n')) != std::string::npos; rest.erase(0, nl + 1))
    if (nl > 0) out.push_back(rest.substr(0, nl));
  return out;
}

// What bash offers when TAB is pressed after `words` (the last one being typed, "" for
// a fresh word), through the function `complete -p corral` names.
Words tab(const CliEnv& env, const Words& words) {
  std::string line, array;
  for (const std::string& w : words) {
    line += (line.empty() ? "" : " ") + w;
    array += " " + quoted(w);
  }
  const std::string script = "source <(corral completion bash)\n"
                             "fn=$(complete -p corral | sed -n 's/.*-F \\([^ ]*\\).*/\\1/p')\n"
                             "COMP_WORDS=(corral" + array + ")\n"
                             "COMP_CWORD=" + std::to_string(words.size()) + "\n"
                             "COMP_LINE=" + quoted("corral " + line) + "\n"
                             "COMP_POINT=${#COMP_LINE}\n"
                             "\"$fn\" corral " + quoted(words.back()) + " " + quoted(words.size() > 1 ? words[words.size() - 2] : "corral") + "\n"
                             "printf '%s\\n' \"${COMPREPLY[@]}\"\n";
  const corral::test::CliResult r = bash(env, script);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK_MESSAGE(r.err.empty(), r.err);  // nothing may reach the user's terminal
  return lines(r.out);
}

bool has(const Words& words, const std::string& w) { return std::find(words.begin(), words.end(), w) != words.end(); }

// Makes a kept local lease in `env` and returns its slug.
std::string keep_lease(const CliEnv& env) {
  const fs::path handle = env.root().path() / "handle.json";
  REQUIRE(env.run({"run", "--keep", "--lease-output", handle.string(), "--", "true"}).exit_code == 0);
  const std::string text = corral::test::read_file(handle);
  const size_t at = text.find("\"slug\":\"");
  REQUIRE(at != std::string::npos);
  return text.substr(at + 8, text.find('"', at + 8) - at - 8);
}

}  // namespace

TEST_CASE("the bash script registers a completion function for corral") {
  CliEnv env;
  const auto r = bash(env, "source <(corral completion bash) && complete -p corral");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("-F _corral") != std::string::npos);
  CHECK(r.out.find("corral") != std::string::npos);
}

TEST_CASE("bash completes commands, their flags and subcommands from the command table") {
  CliEnv env;
  CHECK(tab(env, {"r"}) == Words{"resume", "run"});
  const Words top = tab(env, {""});
  CHECK(has(top, "completion"));
  CHECK(has(top, "providers"));
  CHECK(!has(top, "__complete"));  // hidden: corral's own
  CHECK(tab(env, {"run", "--pro"}) == Words{"--progress", "--provider"});
  CHECK(tab(env, {"run", "--provi"}) == Words{"--provider"});
  const Words run_flags = tab(env, {"run", "--"});
  for (const char* flag : {"--id", "--keep", "--shards", "--from", "--verbose", "--help"}) CHECK(has(run_flags, flag));
  CHECK(tab(env, {"providers", "d"}) == Words{"describe"});
  CHECK(tab(env, {"completion", "--he"}) == Words{"--help"});
  CHECK(tab(env, {"completion", ""}) == Words{"bash", "fish", "zsh"});
  // After "--" comes the user's command: corral offers nothing and bash completes files.
  CHECK(tab(env, {"run", "--", "r"}).empty());
}

TEST_CASE("bash completes the values of options that take a choice, not file names") {
  CliEnv env;
  CHECK(tab(env, {"run", "--progress", ""}) == Words{"auto", "json", "never"});
  CHECK(tab(env, {"run", "--idle", ""}) == Words{"pause", "stop"});
  CHECK(tab(env, {"run", "--network", ""}) == Words{"allow:", "none", "open"});
  CHECK(tab(env, {"run", "--network", "n"}) == Words{"none"});
  CHECK(tab(env, {"pool", "fill", "--network", "o"}) == Words{"open"});
}

TEST_CASE("bash completes provider names and aliases, and each provider's option flags, on the commands that take them") {
  CliEnv env;
  REQUIRE(env.run({"providers"}).exit_code == 0);  // what a first command does: probe the plugins once
  CHECK(tab(env, {"run", "--provider", "l"}) == Words{"local"});
  CHECK(has(tab(env, {"providers", "describe", ""}), "local"));
  CHECK(has(tab(env, {"run", "--local-"}), "--local-network"));
  CHECK(tab(env, {"run", "--local-network", ""}) == Words{"none", "shared"});  // its choices
  CHECK(has(tab(env, {"warmup", "--local-"}), "--local-network"));
  // With --provider given, only that provider's flags (by name or alias).
  CHECK(tab(env, {"run", "--provider", "bwrap", "--e2b-"}).empty());
  CHECK(has(tab(env, {"run", "--provider", "bwrap", "--"}), "--local-network"));
  CHECK(has(tab(env, {"run", "--provider=e2b", "--e2b-"}), "--e2b-template"));
  CHECK(!tab(env, {"list", "--local-"}).empty());  // list's row takes provider options
  CHECK(tab(env, {"version", "--local-"}).empty());
  // bash splits "--provider=lo" at "=": the value alone completes.
  CHECK(tab(env, {"run", "--provider", "=", "lo"}) == Words{"local"});
}

TEST_CASE("bash inserts a choice that holds a space as one word, quoted") {
  CliEnv env;
  env.add_registry("testbox", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so"});
  REQUIRE(env.run({"providers"}).exit_code == 0);
  CHECK(tab(env, {"run", "--testbox-tier", "ex"}) == Words{"extra\\ large"});
  CHECK(tab(env, {"run", "--testbox-tier", ""}) == Words{"extra\\ large", "large", "small"});
}

TEST_CASE("bash completes --id and --from with this user's kept leases, read from the state folder") {
  CliEnv env;
  const std::string slug = keep_lease(env);
  const std::string lease_id = env.only_lease();
  CliEnv other;  // another user's state: their leases are not this user's to complete
  const std::string foreign = keep_lease(other);
  const std::string foreign_id = other.only_lease();
  const Words ids = tab(env, {"run", "--id", ""});
  CHECK(has(ids, slug));
  CHECK(has(ids, lease_id));
  // Slugs are drawn from 2,304 pairs, so two users' may match; lease ids do not.
  CHECK(!has(ids, foreign_id));
  CHECK(ids.size() == 2);
  CHECK(tab(env, {"stop", "--id", slug.substr(0, 3)}) == Words{slug});
  CHECK(has(tab(env, {"run", "--shards", "2", "--from", ""}), slug));
  REQUIRE(env.run({"stop", "--id", slug}).exit_code == 0);
  CHECK(tab(env, {"run", "--id", ""}).empty());
  REQUIRE(other.run({"stop", "--id", foreign}).exit_code == 0);
}

TEST_CASE("a corrupt claim file, a folder or a FIFO in its place neither breaks completion nor prints into the shell") {
  CliEnv env;
  const std::string slug = keep_lease(env);
  const fs::path leases = env.state_dir() / "corral" / "leases";
  env.root().write("state/corral/leases/0123456789ab.json", "{ not json");
  fs::create_directory(leases / "fedcba987654.json");  // a folder where a claim should be
  REQUIRE(::mkfifo((leases / "aaaaaaaaaaaa.json").c_str(), 0600) == 0);  // read, it would wait forever
  const auto r = env.run({"__complete", "--", "run", "--id", ""});
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  const Words ids = tab(env, {"run", "--id", ""});
  CHECK(has(ids, slug));
  CHECK(ids.size() == 2);
  // A registry that cannot be read is as quiet: the other providers still complete.
  env.root().write("config/corral/providers.d/broken.yaml", "plugins: [ {path: ");
  const auto providers = env.run({"__complete", "--", "run", "--provider", ""});
  CHECK(providers.exit_code == 0);
  CHECK(providers.err.empty());
  CHECK(providers.out.find("local\n") != std::string::npos);
  fs::remove_all(leases / "fedcba987654.json");
  fs::remove(leases / "aaaaaaaaaaaa.json");
  fs::remove(leases / "0123456789ab.json");
  REQUIRE(env.run({"stop", "--id", slug}).exit_code == 0);
}

TEST_CASE("completion never probes a plugin: one not probed yet completes by its file's name only") {
  CliEnv env;
  env.add_registry("extra", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so"});
  const fs::path specs = env.root().path() / "home" / ".cache" / "corral" / "specs";
  CHECK(has(tab(env, {"run", "--provider", ""}), "testbox"));
  CHECK(tab(env, {"run", "--testbox-"}).empty());
  CHECK(!fs::exists(specs));  // no probe ran: a probe caches what it found
  REQUIRE(env.run({"providers", "describe", "testbox"}).exit_code == 0);
  CHECK(fs::exists(specs));
  const Words flags = tab(env, {"run", "--testbox-"});
  CHECK(has(flags, "--testbox-dir"));
  CHECK(!has(flags, "--testbox-token"));  // a secret is never a flag
  CHECK(has(tab(env, {"run", "--provider", "t"}), "tb"));  // its alias, known from the probe
}

TEST_CASE("completion for an unknown shell is a usage error naming the three shells") {
  CliEnv env;
  const auto r = env.run({"completion", "ksh"});
  CHECK(r.exit_code == 64);
  CHECK(r.err.find("ksh") != std::string::npos);
  CHECK(r.err.find("bash, zsh, fish") != std::string::npos);
  for (const char* shell : {"bash", "zsh", "fish"}) {
    const auto ok = env.run({"completion", shell});
    CHECK(ok.exit_code == 0);
    CHECK(ok.out.find("__complete") != std::string::npos);
  }
}

TEST_CASE("zsh and fish complete through the same callback") {
  CliEnv env;
  env.add_registry("testbox", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so"});
  REQUIRE(env.run({"providers"}).exit_code == 0);
  if (corral::os::find_program("zsh").empty()) {
    MESSAGE("zsh not tried: it is not installed (scripts/deps.sh installs it)");
  } else {
    // The completion system's builtins stood in for: compadd prints what it is given.
    const std::string script = "compdef() { print -r -- \"compdef $*\"; }\n"
                               "compadd() { shift 2; print -rl -- \"$@\"; }\n"
                               "_files() { print -r -- FILES; }\n"
                               "source <(corral completion zsh)\n"
                               "words=(corral run --provider l); CURRENT=4; _corral\n"
                               "words=(corral r); CURRENT=2; _corral\n"
                               "words=(corral run --local-network=n); CURRENT=3; _corral\n"
                               "words=(corral run -- l); CURRENT=4; _corral\n"
                               "words=(corral run --testbox-tier e); CURRENT=4; _corral\n";
    const auto r = shell("zsh", env, script);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.err.empty());
    CHECK(lines(r.out) == Words{"compdef _corral corral", "local", "resume", "run", "--local-network=none", "FILES",
                                "extra\\ large"});
  }
  if (corral::os::find_program("fish").empty()) {
    MESSAGE("fish not tried: it is not installed (scripts/deps.sh installs it)");
  } else {
    const auto r = shell("fish", env,
                         "corral completion fish | source\n"
                         "complete -C 'corral r'\n"
                         "complete -C 'corral run --provider l'\n"
                         "complete -C 'corral run --local-'\n"
                         "complete -C 'corral providers '\n");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.err.empty());
    const Words got = lines(r.out);
    CHECK(has(got, "run"));
    CHECK(has(got, "resume"));
    CHECK(has(got, "local"));
    CHECK(has(got, "--local-network"));
    CHECK(has(got, "describe"));
  }
}
