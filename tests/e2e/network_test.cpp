// --network end to end: the local jail really cut off (a TCP server on this machine's
// loopback it cannot reach), policies a provider cannot enforce refused before anything
// exists, the policy fixed for a lease's life, and the trust rule between the user's
// config and a repository's.
#include <doctest/doctest.h>

#include "cli.hpp"
#include "corral/json.hpp"
#include "private_network.hpp"

namespace fs = std::filesystem;
using corral::test::CliEnv;
using corral::test::LoopbackListener;
using corral::test::read_file;

namespace {

// Every file in the leases folder (claims, locks, file lists).
std::vector<fs::path> lease_files(const CliEnv& env) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(env.state_dir() / "corral" / "leases", ec)) out.push_back(e.path());
  return out;
}

corral::json::Document parse(const std::string& text) { return corral::json::parse(text, "output"); }

struct Testbox : CliEnv {
  fs::path boxes = root().path() / "boxes";
  fs::path h = root().path() / "handle.json";
  Testbox() {
    fs::create_directories(boxes);
    add_registry("testbox", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so"});
    env["TESTBOX_DIR"] = boxes.string();
    root().write("work/file.txt", "synced");
  }
  // `corral run --provider testbox --keep --lease-output H [flags] -- true`; the lease id.
  std::string keep(std::vector<std::string> flags = {}) {
    std::vector<std::string> args = {"run", "--provider", "testbox", "--keep", "--lease-output", h.string()};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--", "true"});
    last = run(args);
    REQUIRE_MESSAGE(last.exit_code == 0, last.err);
    return parse(read_file(h))["leaseId"].GetString();
  }
  // The policy testbox's create was asked to enforce for `lease`.
  std::string network_of(const std::string& lease) const { return read_file(boxes / ("tb-" + lease) / "network"); }
  corral::test::CliResult last;
};

}  // namespace

TEST_CASE("--network none: the command cannot reach a TCP server on this machine's loopback; without it, it can") {
  CliEnv env;
  LoopbackListener server;
  fs::path h = env.root().path() / "h.json";
  auto open = env.run({"run", "--", "sh", "-c", server.probe_script()});
  CHECK_MESSAGE(open.exit_code == 0, open.err);
  CHECK(open.out == "reached\n");
  auto cut =
      env.run({"run", "--network", "none", "--lease-output", h.string(), "--", "sh", "-c", server.probe_script()});
  CHECK_MESSAGE(cut.exit_code == 0, cut.err);
  CHECK(cut.out == "unreachable\n");
  auto handle = parse(read_file(h));
  CHECK(std::string(handle["network"].GetString()) == "none");
  // An open sandbox's handle says nothing of the network.
  REQUIRE(env.run({"run", "--network", "open", "--lease-output", h.string(), "--", "true"}).exit_code == 0);
  CHECK_FALSE(parse(read_file(h)).HasMember("network"));
  CHECK(env.local_sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE("a kept --network none sandbox stays cut off for every later command, whatever the local option says") {
  CliEnv env;
  LoopbackListener server;
  fs::path h = env.root().path() / "h.json";
  REQUIRE(env.run({"run", "--keep", "--network", "none", "--lease-output", h.string(), "--", "true"}).exit_code == 0);
  const std::string lease = parse(read_file(h))["leaseId"].GetString();

  auto again = env.run({"run", "--id", lease, "--local-network", "shared", "--", "sh", "-c", server.probe_script()});
  CHECK_MESSAGE(again.exit_code == 0, again.err);
  CHECK(again.out == "unreachable\n");
  auto same = env.run({"run", "--id", lease, "--network", "none", "--", "sh", "-c", server.probe_script()});
  CHECK(same.out == "unreachable\n");

  // The policy is fixed at creation: asking for another one is refused, and nothing runs.
  auto looser = env.run({"run", "--id", lease, "--network", "open", "--", "sh", "-c", "echo ran"});
  CHECK(looser.exit_code == 64);
  CHECK(looser.out.empty());
  CHECK(looser.err.find("was created with --network none, not open") != std::string::npos);
  CHECK(looser.err.find("fixed when it is created") != std::string::npos);

  auto url = env.run({"url", "--id", lease, "--port", "8080"});
  CHECK(url.exit_code == 64);
  CHECK(url.err.find("--network none") != std::string::npos);
  CHECK(url.out.empty());

  auto status = parse(env.run({"status", "--id", lease, "--json"}).out);
  CHECK(std::string(status["lease"]["network"].GetString()) == "none");
  CHECK(std::string(status["sandbox"]["details"]["network"].GetString()) == "none");
  CHECK(env.run({"status", "--id", lease}).out.find("network policy") != std::string::npos);
  CHECK(env.run({"stop", "--id", lease}).exit_code == 0);
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("allow: on local is refused before anything is created, naming the feature and who has it") {
  CliEnv env;
  for (const char* command : {"run", "warmup"}) {
    CAPTURE(command);
    std::vector<std::string> args = {command, "--network", "allow:example.com"};
    if (std::string(command) == "run") args.insert(args.end(), {"--keep", "--", "sh", "-c", "echo ran"});
    auto r = env.run(args);
    CHECK(r.exit_code == 64);
    CHECK(r.out.empty());
    CHECK(r.err.find("network policy 'allow:example.com' needs the 'network-allowlist' feature, which provider "
                     "'local' does not have") != std::string::npos);
    CHECK(r.err.find("e2b") != std::string::npos);  // the hint names the providers that have it
    CHECK(env.local_sandboxes().empty());
    CHECK(lease_files(env).empty());  // no claim, not even a lock
  }
}

TEST_CASE("a --network that is no policy is a usage error with the accepted forms") {
  CliEnv env;
  auto r = env.run({"run", "--network", "sometimes", "--", "true"});
  CHECK(r.exit_code == 64);
  CHECK(r.err.find("unknown network policy 'sometimes'") != std::string::npos);
  CHECK(r.err.find("--network allow:example.com,10.0.0.0/8") != std::string::npos);
  auto bad_entry = env.run({"warmup", "--network", "allow:http://x"});
  CHECK(bad_entry.exit_code == 64);
  CHECK(bad_entry.err.find("'http://x'") != std::string::npos);
  CHECK(env.local_sandboxes().empty());
  CHECK(lease_files(env).empty());
}

TEST_CASE("the policy reaches the provider's create and is recorded in the claim and the handle") {
  Testbox tb;
  std::string lease = tb.keep({"--network", "allow:pypi.org,10.0.0.0/8"});
  CHECK(tb.network_of(lease) == "allow:pypi.org,10.0.0.0/8");
  CHECK(std::string(parse(read_file(tb.h))["network"].GetString()) == "allow:pypi.org,10.0.0.0/8");
  auto claim = parse(read_file(tb.state_dir() / "corral" / "leases" / (lease + ".json")));
  CHECK(std::string(claim["network"].GetString()) == "allow:pypi.org,10.0.0.0/8");
  // A reused lease hands back its recorded policy; the same --network (in any order) is accepted.
  auto reuse = tb.run({"run", "--id", lease, "--network", "allow:10.0.0.0/8,pypi.org", "--lease-output", tb.h.string(),
                       "--", "true"});
  CHECK_MESSAGE(reuse.exit_code == 0, reuse.err);
  CHECK(std::string(parse(read_file(tb.h))["network"].GetString()) == "allow:pypi.org,10.0.0.0/8");
  auto other = tb.run({"run", "--id", lease, "--network", "allow:pypi.org", "--", "true"});
  CHECK(other.exit_code == 64);
  CHECK(other.err.find("was created with --network allow:pypi.org,10.0.0.0/8, not allow:pypi.org") !=
        std::string::npos);

  std::string plain = tb.keep();
  CHECK(tb.network_of(plain) == "open");
  CHECK_FALSE(parse(read_file(tb.h)).HasMember("network"));
  CHECK(tb.run({"stop", "--all"}).exit_code == 0);
}

TEST_CASE("a repository's corral.yaml may tighten the user's network policy but never loosen it") {
  Testbox tb;
  tb.root().write("config/corral/config.yaml", "network:\n  testbox: none\n");
  tb.root().write("work/corral.yaml", "network: open\n");
  std::string lease = tb.keep();
  CHECK(tb.network_of(lease) == "none");
  CHECK(tb.last.err.find("asks for network 'open', which is looser than 'none'") != std::string::npos);

  tb.root().write("config/corral/config.yaml", "network: 'allow:a.example.com,b.example.com'\n");
  tb.root().write("work/corral.yaml", "network: 'allow:b.example.com,evil.example.net'\n");
  CHECK(tb.network_of(tb.keep()) == "allow:a.example.com,b.example.com");
  tb.root().write("work/corral.yaml", "network: 'allow:b.example.com'\n");
  CHECK(tb.network_of(tb.keep()) == "allow:b.example.com");
  CHECK(tb.last.err.find("looser") == std::string::npos);

  // Without a user policy the repository's applies; the user's flag beats both.
  fs::remove(tb.config_dir() / "corral" / "config.yaml");
  tb.root().write("work/corral.yaml", "network: none\n");
  CHECK(tb.network_of(tb.keep()) == "none");
  CHECK(tb.network_of(tb.keep({"--network", "open"})) == "open");
  CHECK(tb.run({"stop", "--all"}).exit_code == 0);
}

TEST_CASE("a repository's corral.yaml cannot loosen a provider's own isolation setting (local's network) either") {
  CliEnv env;
  LoopbackListener server;
  env.root().write("config/corral/config.yaml", "local: {network: none}\n");
  env.root().write("work/corral.yaml", "local: {network: shared}\n");
  auto r = env.run({"run", "--", "sh", "-c", server.probe_script()});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out == "unreachable\n");
  CHECK_MESSAGE(r.err.find("sets local.network: shared, which is looser than 'none'") != std::string::npos, r.err);
  // Tightening is the repository's to do, and the user's own flag beats both.
  env.root().write("config/corral/config.yaml", "");
  env.root().write("work/corral.yaml", "local: {network: none}\n");
  r = env.run({"run", "--", "sh", "-c", server.probe_script()});
  CHECK(r.out == "unreachable\n");
  CHECK(r.err.find("looser") == std::string::npos);
  r = env.run({"run", "--local-network", "shared", "--", "sh", "-c", server.probe_script()});
  CHECK(r.out == "reached\n");
}

TEST_CASE("a provider without network features is refused any policy but open, listing those that have it") {
  CliEnv env;
  // Docker Sandboxes' sbx has no network option: the refusal comes before sbx is ever run.
  const fs::path marker = env.root().path() / "sbx-ran";
  const fs::path sbx = env.root().write("bin/sbx", "#!/bin/sh\ntouch '" + marker.string() + "'\nexit 1\n");
  fs::permissions(sbx, fs::perms::owner_all);
  env.env["CORRAL_SBX_CLI"] = sbx.string();
  auto r = env.run({"run", "--provider", "docker-sandbox", "--network", "none", "--", "true"});
  CHECK(r.exit_code == 64);
  CHECK(r.err.find("network policy 'none' needs the 'network-policy' feature, which provider 'docker-sandbox' does "
                   "not have") != std::string::npos);
  CHECK(r.err.find("providers that have it: ") != std::string::npos);
  for (const char* able : {"daytona", "e2b", "local"}) CHECK(r.err.find(able) != std::string::npos);
  CHECK(lease_files(env).empty());
  CHECK_FALSE(fs::exists(marker));
}
