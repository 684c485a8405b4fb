// `corral --provider docker-sandbox` end to end, with CORRAL_SBX_CLI pointing at the
// stand-in sbx: the run contract (output, exit codes, env, keep, reuse, stop, Ctrl-C,
// session handle), ownership, settings and error guidance.
#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>

#include "background_corral.hpp"
#include "cli.hpp"
#include "four_shards.hpp"
#include "conformance_run.hpp"
#include "corral/json.hpp"
#include "standin_fixture.hpp"

namespace fs = std::filesystem;
using corral::test::CliEnv;
using corral::test::CliResult;
using corral::test::read_file;
using sbx_test::StandIn;

namespace {

struct E2E {
  CliEnv env;
  StandIn sbx;
  std::string ws = fs::canonical(env.workspace()).string();

  E2E() {
    env.env["CORRAL_SBX_CLI"] = sbx_test::standin_path();
    for (const auto& [k, v] : sbx.env()) env.env[k] = v;
    env.root().write("work/hello.txt", "hello from the workspace\n");
  }
  // `corral run --provider docker-sandbox <args...>`
  CliResult run(std::vector<std::string> args) {
    args.insert(args.begin(), {"run", "--provider", "docker-sandbox"});
    return env.run(args);
  }
  corral::json::Document handle(const std::string& file) {
    return corral::json::parse(read_file(env.root().path() / file), "session handle");
  }
  std::string handle_path(const std::string& file) { return (env.root().path() / file).string(); }
  // The corral-made sandboxes in the stand-in's state.
  std::vector<std::string> corral_sandboxes() {
    std::vector<std::string> out;
    for (auto& n : sbx.sandboxes())
      if (n.rfind("corral-", 0) == 0) out.push_back(n);
    return out;
  }
};

}  // namespace

TEST_CASE_FIXTURE(E2E, "run: the command sees the mounted workspace; nothing is uploaded; nothing is left") {
  CliResult r = run({"--", "sh", "-c", "cat hello.txt; pwd"});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out == "hello from the workspace\n" + ws + "\n");
  auto creates = sbx.calls_of("create");
  REQUIRE(creates.size() == 1);
  CHECK(creates[0][2] == "--name");
  CHECK(creates[0][3].rfind("corral-", 0) == 0);
  CHECK(std::vector<std::string>(creates[0].end() - 2, creates[0].end()) == std::vector<std::string>{"shell", ws});
  CHECK(sbx.calls_of("cp").empty());
  REQUIRE(sbx.calls_of("rm").size() == 1);
  CHECK(sbx.calls_of("rm")[0] == std::vector<std::string>{sbx_test::standin_path(), "rm", "-f", creates[0][3]});
  CHECK(sbx.sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE_FIXTURE(E2E, "run: exit codes pass through and stdout/stderr stay apart") {
  CliResult r = run({"--", "sh", "-c", "echo to-out; echo to-err >&2; exit 3"});
  CHECK(r.exit_code == 3);
  CHECK(r.out == "to-out\n");
  CHECK(r.err.find("to-err") != std::string::npos);
  CHECK(r.out.find("to-err") == std::string::npos);
  CHECK(sbx.sandboxes().empty());
  CHECK(run({"--shell", "exit 0"}).exit_code == 0);
}

TEST_CASE_FIXTURE(E2E, "run: forwarded env arrives through a private env file, never argv, removed after") {
  env.env["MY_TOKEN"] = "tok-123 secret";
  env.env["NOT_ASKED_FOR"] = "nope";
  CliResult r = run({"--env", "MY_TOKEN", "--", "sh", "-c", "echo \"$MY_TOKEN|$NOT_ASKED_FOR\""});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out == "tok-123 secret|\n");
  for (const auto& call : sbx.calls()) CHECK_FALSE(sbx_test::argv_mentions(call, "tok-123"));
  REQUIRE(sbx.calls_of("exec").size() == 1);
  CHECK(sbx_test::argv_mentions(sbx.calls_of("exec")[0], "--env-file"));
  auto files = sbx.env_files();
  REQUIRE(files.size() == 1);
  CHECK(files[0].substr(files[0].rfind(' ') + 1) == "0600");
  CHECK_FALSE(fs::exists(files[0].substr(0, files[0].rfind(' '))));
  CHECK(r.err.find("tok-123") == std::string::npos);
}

TEST_CASE_FIXTURE(E2E, "run: a command printing sbx-like errors on stderr keeps its own exit code") {
  CliResult r = run({"--", "sh", "-c",
                     "echo 'HTTP/1.1 401 Unauthorized' >&2; echo 'error: cannot open /dev/kvm' >&2; exit 5"});
  CHECK_MESSAGE(r.exit_code == 5, r.err);
  CHECK(r.err.find("401 Unauthorized") != std::string::npos);
  CHECK(r.err.find("corral: error:") == std::string::npos);
  CHECK(sbx.sandboxes().empty());
}

TEST_CASE_FIXTURE(E2E, "a create that fails after registering its sandbox leaves nothing, or says what is left") {
  SUBCASE("removed") {
    env.env["SBX_STANDIN_FAULT"] = "create-fails-after-register";
    CliResult r = run({"--", "true"});
    CHECK(r.exit_code == 69);
    CHECK(r.err.find("failed to start") != std::string::npos);
    REQUIRE(sbx.calls_of("rm").size() == 1);
    CHECK(sbx.sandboxes().empty());
    CHECK(r.err.find("corral: warning:") == std::string::npos);
  }
  SUBCASE("rm fails too") {
    env.env["SBX_STANDIN_FAULT"] = "create-fails-after-register,rm-fails";
    CliResult r = run({"--", "true"});
    CHECK(r.exit_code == 69);
    REQUIRE(corral_sandboxes().size() == 1);
    CHECK(r.err.find("corral: warning:") != std::string::npos);
    CHECK(r.err.find("sbx rm -f " + corral_sandboxes()[0]) != std::string::npos);
  }
  CHECK(env.claims().empty());
}

TEST_CASE_FIXTURE(E2E, "keep, session handle, reuse by --id, status, stop") {
  CliResult first = run({"--keep", "--lease-output", handle_path("h1.json"), "--", "sh", "-c", "echo one > made.txt"});
  REQUIRE_MESSAGE(first.exit_code == 0, first.err);
  auto h = handle("h1.json");
  CHECK(std::string(h["provider"].GetString()) == "docker-sandbox");
  CHECK(h["kept"].GetBool());
  CHECK_FALSE(h["reused"].GetBool());
  std::string lease = h["leaseId"].GetString();
  std::string sandbox = h["sandboxId"].GetString();
  CHECK(sandbox.rfind("corral-" + std::string(h["slug"].GetString()) + "-", 0) == 0);
  CHECK(std::string(h["cleanupCommand"].GetString()).find(lease) != std::string::npos);
  CHECK(sbx.sandboxes() == std::vector<std::string>{sandbox});
  CHECK(env.claims().size() == 1);
  CHECK(read_file(env.claims()[0]).find(sandbox) != std::string::npos);

  CliResult again = run({"--id", lease, "--lease-output", handle_path("h2.json"), "--", "cat", "made.txt"});
  CHECK_MESSAGE(again.exit_code == 0, again.err);
  CHECK(again.out == "one\n");
  auto h2 = handle("h2.json");
  CHECK(h2["reused"].GetBool());
  CHECK(h2["kept"].GetBool());
  CHECK(std::string(h2["sandboxId"].GetString()) == sandbox);
  CHECK(sbx.calls_of("create").size() == 1);  // reused, not recreated
  CHECK(sbx.sandboxes() == std::vector<std::string>{sandbox});

  CliResult status = env.run({"status", "--id", lease, "--json"});
  CHECK_MESSAGE(status.exit_code == 0, status.err);
  CHECK(status.out.find(ws) != std::string::npos);

  CliResult stop = env.run({"stop", "--id", lease});
  CHECK_MESSAGE(stop.exit_code == 0, stop.err);
  CHECK(sbx.sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE_FIXTURE(E2E, "pause stops the kept sandbox with sbx stop; status says paused; run --id resumes it with its files") {
  REQUIRE(run({"--keep", "--lease-output", handle_path("h.json"), "--", "sh", "-c", "echo one > made.txt"}).exit_code == 0);
  auto h = handle("h.json");
  const std::string lease = h["leaseId"].GetString();
  const std::string sandbox = h["sandboxId"].GetString();

  CliResult paused = env.run({"pause", "--id", lease});
  REQUIRE_MESSAGE(paused.exit_code == 0, paused.err);
  CHECK(sbx.status(sandbox) == "stopped");
  CHECK(sbx.calls_of("stop").size() == 1);
  CliResult status = env.run({"status", "--id", lease, "--json"});
  REQUIRE_MESSAGE(status.exit_code == 0, status.err);
  auto doc = corral::json::parse(status.out, "status");
  CHECK(corral::json::get_string(doc["sandbox"], "state") == "paused");
  CHECK(corral::json::get_string(doc["sandbox"]["details"], "provider-state") == "stopped");
  CHECK(env.run({"pause", "--id", lease}).exit_code == 0);  // pausing a paused lease is no error

  CliResult again = run({"--id", lease, "--", "cat", "made.txt"});
  INFO(again.err);
  CHECK(again.exit_code == 0);
  CHECK(again.out == "one\n");
  CHECK(again.err.find("is paused; resuming it") != std::string::npos);
  CHECK(sbx.status(sandbox) == "running");
  CHECK(sbx.calls_of("create").size() == 1);  // resumed, not recreated

  REQUIRE(env.run({"pause", "--id", lease}).exit_code == 0);
  CliResult resumed = env.run({"resume", "--id", lease});
  CHECK_MESSAGE(resumed.exit_code == 0, resumed.err);
  CHECK(sbx.status(sandbox) == "running");
  CHECK(env.run({"stop", "--id", lease}).exit_code == 0);
  CHECK(sbx.sandboxes().empty());
}

TEST_CASE_FIXTURE(E2E, "pausing a sandbox removed behind corral's back is not-found") {
  REQUIRE(run({"--keep", "--lease-output", handle_path("h.json"), "--", "true"}).exit_code == 0);
  auto h = handle("h.json");
  REQUIRE(sbx.run({"rm", "-f", h["sandboxId"].GetString()}).exit_code == 0);
  CliResult r = env.run({"pause", "--id", h["leaseId"].GetString()});
  CHECK(r.exit_code == 66);
  CHECK(r.err.find("no longer exists") != std::string::npos);
  CHECK(r.err.find("hint:") != std::string::npos);
  CHECK(sbx.sandboxes().empty());
}

TEST_CASE_FIXTURE(E2E, "fork and --shards --from refuse a docker-sandbox lease, naming the providers that can fork") {
  REQUIRE(run({"--keep", "--lease-output", handle_path("h.json"), "--", "true"}).exit_code == 0);
  auto h = handle("h.json");
  const std::string lease = h["leaseId"].GetString();
  for (std::vector<std::string> args : {std::vector<std::string>{"fork", "--id", lease, "--count", "2"},
                                        {"run", "--shards", "2", "--from", lease, "--", "true"}}) {
    CAPTURE(args);
    CliResult r = env.run(args);
    CHECK(r.exit_code == 64);
    CHECK(r.err.find("needs the 'fork' feature, which provider 'docker-sandbox' does not have") != std::string::npos);
    CHECK(r.err.find("the installed providers that have it: ") != std::string::npos);
    CHECK(r.err.find("local") != std::string::npos);
  }
  CHECK(sbx.calls_of("create").size() == 1);  // nothing made
  CHECK(sbx.sandboxes() == std::vector<std::string>{h["sandboxId"].GetString()});
  CHECK(env.claims().size() == 1);
  CHECK(env.run({"stop", "--id", lease}).exit_code == 0);
}

TEST_CASE_FIXTURE(E2E, "--idle is refused before anything is made: sbx has no idle timer") {
  for (const char* idle : {"pause", "stop"}) {
    CAPTURE(idle);
    CliResult r = run({"--keep", "--idle", idle, "--", "true"});
    CHECK(r.exit_code == 64);
    CHECK(r.err.find("docker-sandbox") != std::string::npos);
  }
  CHECK(sbx.calls_of("create").empty());
  CHECK(env.claims().empty());
}

TEST_CASE_FIXTURE(E2E, "keep-on-failure keeps only failed runs; the handle is written on failure too") {
  CliResult ok = run({"--keep-on-failure", "--", "true"});
  CHECK(ok.exit_code == 0);
  CHECK(sbx.sandboxes().empty());
  CliResult bad = run({"--keep-on-failure", "--lease-output", handle_path("h.json"), "--", "sh", "-c", "exit 9"});
  CHECK(bad.exit_code == 9);
  CHECK(corral_sandboxes().size() == 1);
  CHECK(env.claims().size() == 1);
  auto h = handle("h.json");
  CHECK(h["kept"].GetBool());
  CHECK(h["exitCode"].GetInt() == 9);
  CHECK(std::string(h["sandboxId"].GetString()) == corral_sandboxes()[0]);
}

TEST_CASE_FIXTURE(E2E, "a kept sandbox removed behind corral's back is reported as gone") {
  REQUIRE(run({"--keep", "--lease-output", handle_path("h.json"), "--", "true"}).exit_code == 0);
  auto h = handle("h.json");
  REQUIRE(sbx.run({"rm", "-f", h["sandboxId"].GetString()}).exit_code == 0);
  CliResult r = run({"--id", h["leaseId"].GetString(), "--", "true"});
  CHECK(r.exit_code == 66);
  CHECK(r.err.find("hint:") != std::string::npos);
  CHECK(env.run({"stop", "--id", h["leaseId"].GetString()}).exit_code == 0);  // forgetting it still works
  CHECK(env.claims().empty());
}

TEST_CASE_FIXTURE(E2E, "list and orphan cleanup touch only sandboxes corral created") {
  REQUIRE(sbx.run({"create", "--name", "someone-elses-box", "shell", ws}).exit_code == 0);
  REQUIRE(sbx.run({"create", "--name", "corral-lost-0123abcd", "shell", ws}).exit_code == 0);  // an orphan
  REQUIRE(run({"--keep", "--lease-output", handle_path("h.json"), "--", "true"}).exit_code == 0);
  std::string kept = handle("h.json")["sandboxId"].GetString();

  CliResult list = env.run({"list", "--remote", "--provider", "docker-sandbox", "--json"});
  REQUIRE_MESSAGE(list.exit_code == 0, list.err);
  auto doc = corral::json::parse(list.out, "list");
  std::vector<std::string> ids;
  for (auto& s : doc.GetArray()) ids.emplace_back(s["sandboxId"].GetString());
  std::sort(ids.begin(), ids.end());
  std::vector<std::string> expected{kept, "corral-lost-0123abcd"};
  std::sort(expected.begin(), expected.end());
  CHECK(ids == expected);

  CliResult orphans = env.run({"stop", "--orphans", "--provider", "docker-sandbox"});
  CHECK_MESSAGE(orphans.exit_code == 0, orphans.err);
  std::vector<std::string> left{kept, "someone-elses-box"};
  std::sort(left.begin(), left.end());
  CHECK(sbx.sandboxes() == left);
  for (const auto& call : sbx.calls_of("rm")) CHECK_FALSE(sbx_test::argv_mentions(call, "someone-elses-box"));
}

TEST_CASE_FIXTURE(E2E, "warmup prints the handle and keeps the sandbox") {
  CliResult r = env.run({"warmup", "--provider", "docker-sandbox"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto h = corral::json::parse(r.out, "warmup handle");
  CHECK(h["kept"].GetBool());
  CHECK(sbx.sandboxes() == std::vector<std::string>{h["sandboxId"].GetString()});
  CHECK(env.run({"stop", "--id", h["leaseId"].GetString()}).exit_code == 0);
  CHECK(sbx.sandboxes().empty());
}

TEST_CASE_FIXTURE(E2E, "Ctrl-C stops the command inside the sandbox and leaves nothing unless kept") {
  for (bool keep : {false, true}) {
    CAPTURE(keep);
    corral::test::TempDir scratch;
    std::string pidfile = ws + "/pid-" + std::to_string(keep);
    std::string handle_file = "ctrl-c-" + std::to_string(keep) + ".json";
    std::vector<std::string> args{"run", "--provider", "docker-sandbox", "--lease-output", handle_path(handle_file)};
    if (keep) args.push_back("--keep");
    args.insert(args.end(), {"--", "sh", "-c", "echo $$ > " + pidfile + "; exec sleep 60"});
    sbx_test::BackgroundCorral corral(env, args, scratch);
    REQUIRE(sbx_test::wait_for_file(pidfile, 30));
    corral.signal(SIGINT);
    CliResult r = corral.wait(30);
    CHECK(r.exit_code == 130);
    CHECK(sbx_test::process_ends(std::stoi(read_file(pidfile))));
    auto h = handle(handle_file);
    CHECK(h["kept"].GetBool() == keep);
    REQUIRE(h.HasMember("error"));
    CHECK(std::string(h["error"]["code"].GetString()) == "cancelled");
    if (keep) {
      CHECK(corral_sandboxes().size() == 1);
      CHECK(env.claims().size() == 1);
    } else {
      CHECK(sbx.sandboxes().empty());
      CHECK(env.claims().empty());
    }
  }
}

TEST_CASE_FIXTURE(E2E, "--timeout stops the command, exits 124 and removes the sandbox") {
  CliResult r = run({"--timeout", "1s", "--lease-output", handle_path("h.json"), "--", "sleep", "30"});
  CHECK(r.exit_code == 124);
  CHECK(r.err.find("corral: error:") != std::string::npos);
  CHECK(sbx.sandboxes().empty());
  CHECK(env.claims().empty());
  auto h = handle("h.json");
  CHECK_FALSE(h["kept"].GetBool());
  REQUIRE(h.HasMember("error"));
  CHECK(std::string(h["error"]["code"].GetString()) == "timeout");
  CHECK(std::string(h["sandboxId"].GetString()).rfind("corral-", 0) == 0);
}

TEST_CASE_FIXTURE(E2E, "settings reach sbx create: flags and environment") {
  env.env["CORRAL_SBX_MEMORY"] = "1g";
  CliResult r = run({"--docker-sandbox-template", "my/image:1", "--docker-sandbox-cpus", "2", "--", "true"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto create = sbx.calls_of("create").at(0);
  std::vector<std::string> args(create.begin() + 1, create.end());
  CHECK(args == std::vector<std::string>{"create", "--name", create[3], "--template", "my/image:1", "--cpus", "2",
                                         "--memory", "1g", "shell", ws});
  CliResult bad = run({"--docker-sandbox-memory", "lots", "--", "true"});
  CHECK(bad.exit_code == 64);
  CHECK(sbx.calls_of("create").size() == 1);  // refused before anything was created
}

TEST_CASE_FIXTURE(E2E, "error guidance: missing sbx, not signed in, no virtualization, hanging sbx") {
  SUBCASE("missing binary") {
    env.env["CORRAL_SBX_CLI"] = "/nonexistent/bin/sbx";
    CliResult r = run({"--", "true"});
    CHECK(r.exit_code == 69);
    CHECK(r.err.find("corral: error:") != std::string::npos);
    CHECK(r.err.find("CORRAL_SBX_CLI") != std::string::npos);
  }
  SUBCASE("not signed in") {
    env.env["SBX_STANDIN_FAULT"] = "not-logged-in";
    CliResult r = run({"--", "true"});
    CHECK(r.exit_code == 77);
    CHECK(r.err.find("sbx login") != std::string::npos);
  }
  SUBCASE("no virtualization") {
    env.env["SBX_STANDIN_FAULT"] = "no-virtualization";
    CliResult r = run({"--", "true"});
    CHECK(r.exit_code == 69);
    CHECK(r.err.find("virtualization") != std::string::npos);
  }
  SUBCASE("sbx create hangs") {
    env.env["SBX_STANDIN_HANG"] = "create";
    CliResult r = run({"--docker-sandbox-cli-timeout", "1s", "--", "true"});
    CHECK(r.exit_code == 69);  // sbx failing, not the command's --timeout (124)
    CHECK(r.err.find("sbx create") != std::string::npos);
    CHECK(r.err.find("sbx diagnose") != std::string::npos);
    REQUIRE(sbx.calls_of("rm").size() == 1);  // the hung create had registered it; corral removed it
  }
  CHECK(sbx.sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE_FIXTURE(E2E, "doctor runs sbx version and sbx diagnose") {
  CliResult ok = env.run({"doctor", "--provider", "docker-sandbox", "--json"});
  auto doc = corral::json::parse(ok.out, "doctor");
  bool found = false;
  for (auto& section : doc["sections"].GetArray()) {
    if (std::string(section["name"].GetString()) != "docker-sandbox") continue;
    found = true;
    for (auto& c : section["checks"].GetArray()) CHECK_MESSAGE(c["ok"].GetBool(), c["name"].GetString());
  }
  CHECK(found);
  CHECK(sbx.calls_of("version").size() == 1);
  CHECK(sbx.calls_of("diagnose").size() == 1);

  env.env["SBX_STANDIN_FAULT"] = "no-virtualization";
  CliResult bad = env.run({"doctor", "--provider", "docker-sandbox"});
  CHECK(bad.exit_code != 0);
  CHECK(bad.out.find("virtualization") != std::string::npos);
}

TEST_CASE_FIXTURE(E2E, "providers describe lists the settings") {
  CliResult r = env.run({"providers", "describe", "docker-sandbox"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  for (const char* s : {"cli", "template", "cpus", "memory", "workdir", "CORRAL_SBX_CLI", "workspace-mount",
                        "run-session", "cleanup", "pause-resume"})
    CHECK_MESSAGE(r.out.find(s) != std::string::npos, s);
  CHECK(r.out.find("url-bridge") == std::string::npos);
  CHECK(r.out.find("fork") != std::string::npos);  // the caveat: no fork with sbx
}

TEST_CASE_FIXTURE(E2E, "docker-sandbox passes the conformance kit against the stand-in sbx, nothing left") {
  auto r = corral::test::conformance_recorded(env, "docker-sandbox");
  corral::test::check_passed(
      r, {"argv", "keep-reuse", "sync-deletions", "listing", "interrupt", "workdir", "destroy-twice", "pause-resume",
          "stdin", "signals"});
  for (const char* id : {"fork", "shards-from"}) CHECK_MESSAGE(std::count(r.skipped.begin(), r.skipped.end(), id) == 1, id);
  CHECK(corral_sandboxes().empty());
}

TEST_CASE_FIXTURE(E2E, "four shards on Docker Sandboxes: each its own sandbox, index and count; all removed afterwards") {
  CliResult r = run({"--shards", "4", "--lease-output", handle_path("h.json"), "--", "sh", "-c",
                     corral::test::four_shard_script(1, 4)});
  corral::test::check_four_shards(r, corral::test::read_file(handle_path("h.json")), 1, 4);
  CHECK(sbx.calls_of("create").size() == 4);
  CHECK(sbx.calls_of("rm").size() == 4);
  CHECK(sbx.sandboxes().empty());
  CHECK(env.claims().empty());
}

namespace {

// The lease id and sandbox name of a kept run's handle.
struct Kept {
  std::string lease;
  std::string sandbox;
};

// Makes a kept lease with no fault armed.
Kept keep_one(E2E& t) {
  CliResult r = t.run({"--keep", "--lease-output", t.handle_path("kept.json"), "--", "true"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto h = t.handle("kept.json");
  return {h["leaseId"].GetString(), h["sandboxId"].GetString()};
}

// Interrupts `corral` as a user pressing Ctrl-C once a second would, until it exits.
CliResult press_ctrl_c_until_it_ends(sbx_test::BackgroundCorral& corral) {
  CliResult r;
  for (int i = 0; i < 30 && r.exit_code == -1; ++i) {
    corral.signal(SIGINT);
    r = corral.wait(1);
  }
  return r;
}

}  // namespace

TEST_CASE_FIXTURE(E2E, "a hanging sbx ls fails after cli-timeout with nothing touched, and Ctrl-C ends it sooner") {
  Kept kept = keep_one(*this);
  const size_t execs = sbx.calls_of("exec").size();
  env.env["SBX_STANDIN_HANG"] = "ls";
  SUBCASE("stop --orphans") {
    CliResult r = env.run({"stop", "--orphans", "--provider", "docker-sandbox", "--docker-sandbox-cli-timeout", "1s"});
    CHECK(r.exit_code == 69);
    CHECK(r.err.find("`sbx ls` did not finish within 1s") != std::string::npos);
    CHECK(r.err.find("sbx diagnose") != std::string::npos);
    CHECK(sbx.calls_of("ls").size() == 1);  // not retried
  }
  SUBCASE("reuse by --id") {
    CliResult r = run({"--id", kept.lease, "--docker-sandbox-cli-timeout", "1s", "--", "true"});
    CHECK(r.exit_code == 69);
    CHECK(r.err.find("`sbx ls` did not finish within 1s") != std::string::npos);
    CHECK(sbx.calls_of("exec").size() == execs);  // the command never ran
  }
  SUBCASE("Ctrl-C") {
    corral::test::TempDir scratch;
    sbx_test::BackgroundCorral corral(env, {"stop", "--orphans", "--provider", "docker-sandbox"}, scratch);
    REQUIRE(sbx_test::wait_for_file(sbx.hangs_log().string(), 30));
    corral.signal(SIGINT);
    CliResult r = corral.wait(30);
    CHECK(r.exit_code == 130);
    REQUIRE(sbx.hung_pids().size() == 1);
    CHECK(sbx_test::process_ends(sbx.hung_pids()[0]));
  }
  CHECK(sbx.calls_of("rm").empty());
  CHECK(sbx.sandboxes() == std::vector<std::string>{kept.sandbox});
  CHECK(env.claims().size() == 1);
  env.env.erase("SBX_STANDIN_HANG");
  CliResult stop = env.run({"stop", "--id", kept.lease});
  CHECK_MESSAGE(stop.exit_code == 0, stop.err);
  CHECK(sbx.sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE_FIXTURE(E2E, "a hanging sbx exec is ended by --timeout or Ctrl-C and leaves nothing") {
  env.env["SBX_STANDIN_HANG"] = "exec";
  CliResult r;
  size_t execs = 1;
  SUBCASE("--timeout") {
    r = run({"--timeout", "1s", "--", "true"});
    CHECK(r.exit_code == 124);
  }
  SUBCASE("Ctrl-C") {
    corral::test::TempDir scratch;
    sbx_test::BackgroundCorral corral(
        env, {"run", "--provider", "docker-sandbox", "--stop-timeout", "1s", "--", "true"}, scratch);
    REQUIRE(sbx_test::wait_for_file(sbx.hangs_log().string(), 30));
    corral.signal(SIGINT);
    r = corral.wait(30);
    CHECK(r.exit_code == 130);
    execs = 2;  // the exec that passes the signal on hangs as well, until --stop-timeout ends both
    CHECK(r.err.find("could not pass the signal on") != std::string::npos);
  }
  CHECK(sbx.calls_of("exec").size() == execs);  // never started again
  REQUIRE(sbx.hung_pids().size() == execs);
  for (int pid : sbx.hung_pids()) CHECK(sbx_test::process_ends(pid));
  CHECK(sbx.calls_of("stop").size() == 1);  // whatever the exec started is stopped
  CHECK(sbx.calls_of("rm").size() == 1);
  CHECK(sbx.sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE_FIXTURE(E2E, "sbx rm failing or hanging in a run's cleanup keeps the lease for stop --id; the result stands") {
  CliResult r;
  SUBCASE("rm fails") {
    env.env["SBX_STANDIN_FAULT"] = "rm-fails";
    r = run({"--lease-output", handle_path("h.json"), "--", "echo", "done"});
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("device or resource busy") != std::string::npos);
    CHECK(sbx.calls_of("ls").size() == 1);  // rm's failure is checked against the list once
  }
  SUBCASE("rm hangs past cli-timeout") {
    env.env["SBX_STANDIN_HANG"] = "rm";
    r = run({"--docker-sandbox-cli-timeout", "1s", "--lease-output", handle_path("h.json"), "--", "echo", "done"});
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("`sbx rm` did not finish within 1s") != std::string::npos);
  }
  CHECK(r.out == "done\n");
  auto h = handle("h.json");
  CHECK(h["kept"].GetBool());
  const std::string lease = h["leaseId"].GetString(), sandbox = h["sandboxId"].GetString();
  CHECK(r.err.find("corral: warning: could not stop sandbox " + sandbox) != std::string::npos);
  CHECK(r.err.find("corral stop --provider docker-sandbox --id " + lease) != std::string::npos);
  CHECK(sbx.calls_of("rm").size() == 1);  // not retried
  CHECK(sbx.sandboxes() == std::vector<std::string>{sandbox});
  CHECK(env.claims().size() == 1);

  env.env.erase("SBX_STANDIN_FAULT");
  env.env.erase("SBX_STANDIN_HANG");
  CliResult stop = env.run({"stop", "--id", lease});
  CHECK_MESSAGE(stop.exit_code == 0, stop.err);
  CHECK(sbx.sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE_FIXTURE(E2E, "Ctrl-C ends a run whose cleanup hangs in sbx rm; stop --orphans finishes the job") {
  env.env["SBX_STANDIN_HANG"] = "rm";
  corral::test::TempDir scratch;
  sbx_test::BackgroundCorral corral(
      env, {"run", "--provider", "docker-sandbox", "--lease-output", handle_path("h.json"), "--", "true"}, scratch);
  REQUIRE(sbx_test::wait_for_file(sbx.hangs_log().string(), 30));
  CliResult r = press_ctrl_c_until_it_ends(corral);
  CHECK(r.exit_code == 130);
  CHECK(r.err.find("abandoned cleanup") != std::string::npos);
  CHECK(sbx.calls_of("rm").size() == 1);
  REQUIRE(sbx.hung_pids().size() == 1);
  CHECK(sbx_test::process_ends(sbx.hung_pids()[0]));  // the abandoned `sbx rm` ends with corral
  REQUIRE(corral_sandboxes().size() == 1);
  REQUIRE(env.claims().size() == 1);

  env.env.erase("SBX_STANDIN_HANG");
  CliResult orphans = env.run({"stop", "--orphans", "--provider", "docker-sandbox"});
  CHECK_MESSAGE(orphans.exit_code == 0, orphans.err);
  CHECK(orphans.err.find("stopped abandoned lease") != std::string::npos);
  CHECK(sbx.sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE_FIXTURE(E2E, "a garbled sbx ls --json fails list, stop --orphans and reuse with guidance, removing nothing") {
  Kept kept = keep_one(*this);
  const size_t execs = sbx.calls_of("exec").size();
  env.env["SBX_STANDIN_FAULT"] = "ls-garbled";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"list", "--remote", "--provider", "docker-sandbox"},
        std::vector<std::string>{"stop", "--orphans", "--provider", "docker-sandbox"},
        std::vector<std::string>{"run", "--provider", "docker-sandbox", "--id", kept.lease, "--", "true"}}) {
    CAPTURE(args[0]);
    CliResult r = env.run(args);
    CHECK(r.exit_code == 69);
    CHECK(r.err.find("sbx ls --json") != std::string::npos);
    CHECK(r.err.find("hint:") != std::string::npos);
  }
  CHECK(sbx.calls_of("ls").size() == 3);  // once each, not retried
  CHECK(sbx.calls_of("exec").size() == execs);
  CHECK(sbx.calls_of("rm").empty());
  CHECK(sbx.sandboxes() == std::vector<std::string>{kept.sandbox});
  CHECK(env.claims().size() == 1);

  env.env.erase("SBX_STANDIN_FAULT");
  CliResult stop = env.run({"stop", "--id", kept.lease});
  CHECK_MESSAGE(stop.exit_code == 0, stop.err);
  CHECK(sbx.sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE_FIXTURE(E2E, "corral SIGKILLed while sbx is busy: the next stop --orphans leaves nothing, and runs work again") {
  std::vector<std::string> args{"run", "--provider", "docker-sandbox", "--", "true"};
  std::string wait_for = sbx.hangs_log().string();
  bool claim = true;  // whether the killed run had written its claim
  std::string pidfile = ws + "/command.pid";
  SUBCASE("create") {
    env.env["SBX_STANDIN_HANG"] = "create";
    claim = false;
  }
  SUBCASE("exec (the command running)") {
    args = {"run", "--provider", "docker-sandbox", "--", "sh", "-c", "echo $$ > " + pidfile + "; exec sleep 60"};
    wait_for = pidfile;
  }
  SUBCASE("cp (a download)") {
    env.env["SBX_STANDIN_HANG"] = "cp";
    args = {"run", "--provider", "docker-sandbox", "--download", "hello.txt", "--", "true"};
  }
  SUBCASE("rm (cleanup)") {
    env.env["SBX_STANDIN_HANG"] = "rm";
  }
  {
    corral::test::TempDir scratch;
    sbx_test::BackgroundCorral corral(env, args, scratch);
    REQUIRE(sbx_test::wait_for_file(wait_for, 30));
    corral.signal(SIGKILL);
    CHECK(corral.wait(30).exit_code == 128 + SIGKILL);
  }
  env.env.erase("SBX_STANDIN_HANG");
  CHECK(corral_sandboxes().size() == 1);
  CHECK(env.claims().size() == (claim ? 1u : 0u));
  // Nothing is left to stop the command in the sandbox: it runs on until the next stop.
  if (fs::exists(pidfile)) CHECK(sbx_test::process_alive(std::stoi(read_file(pidfile))));

  CliResult orphans = env.run({"stop", "--orphans", "--provider", "docker-sandbox"});
  CHECK_MESSAGE(orphans.exit_code == 0, orphans.err);
  CHECK(sbx.sandboxes().empty());
  CHECK(env.claims().empty());
  if (fs::exists(pidfile)) CHECK(sbx_test::process_ends(std::stoi(read_file(pidfile))));

  CliResult again = run({"--", "cat", "hello.txt"});
  CHECK_MESSAGE(again.exit_code == 0, again.err);
  CHECK(again.out == "hello from the workspace\n");
  CHECK(sbx.sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE_FIXTURE(E2E, "a hung sbx dies with a SIGKILLed corral, also when the plugin runs in its helper process") {
  std::string hang = "exec";
  bool claim = true;
  SUBCASE("exec") {}
  SUBCASE("rm (cleanup)") { hang = "rm"; }
  SUBCASE("create") {
    hang = "create";
    claim = false;
  }
  SUBCASE("exec, isolation: process") {
    // corral, its plugin helper, then sbx: each dies with the one before.
    env.add_registry("docker-sandbox", {CORRAL_SBX_PLUGIN}, {{"isolation", "process"}});
  }
  env.env["SBX_STANDIN_HANG"] = hang;
  {
    corral::test::TempDir scratch;
    sbx_test::BackgroundCorral corral(env, {"run", "--provider", "docker-sandbox", "--", "true"}, scratch);
    REQUIRE(sbx_test::wait_for_file(sbx.hangs_log().string(), 30));
    REQUIRE(sbx.hung_pids().size() == 1);
    const int hung = sbx.hung_pids()[0];
    REQUIRE(sbx_test::process_alive(hung));
    corral.signal(SIGKILL);
    CHECK(corral.wait(30).exit_code == 128 + SIGKILL);
    CHECK(sbx_test::process_ends(hung));
  }
  CHECK(sbx.calls_of(hang).size() == 1);
  env.env.erase("SBX_STANDIN_HANG");
  CHECK(corral_sandboxes().size() == 1);
  CHECK(env.claims().size() == (claim ? 1u : 0u));
  CliResult orphans = env.run({"stop", "--orphans", "--provider", "docker-sandbox"});
  CHECK_MESSAGE(orphans.exit_code == 0, orphans.err);
  CHECK(sbx.sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE_FIXTURE(E2E, "the real docker-sandbox plugin crashing in its helper process during exec is named; stop --id removes the sandbox") {
  env.add_registry("docker-sandbox", {CORRAL_SBX_PLUGIN}, {{"isolation", "process"}});
  const std::string pidfile = ws + "/command.pid";
  corral::test::TempDir scratch;
  sbx_test::BackgroundCorral corral(
      env, {"run", "--provider", "docker-sandbox", "--", "sh", "-c", "echo $$ > " + pidfile + "; exec sleep 60"},
      scratch);
  REQUIRE(sbx_test::wait_for_file(pidfile, 30));
  const std::vector<int> helpers = corral::test::children_named(corral.pid(), "corral-plugin-host");
  REQUIRE(helpers.size() == 1);
  ::kill(helpers[0], SIGSEGV);
  CliResult r = corral.wait(30);
  CHECK(r.exit_code == 70);
  CHECK_MESSAGE(r.err.find("provider plugin 'docker-sandbox' crashed during 'exec' (SIGSEGV)") != std::string::npos,
                r.err);
  CliResult list = env.run({"list", "--json"});
  REQUIRE(list.exit_code == 0);
  corral::json::Document leases = corral::json::parse(list.out, "list");
  REQUIRE(leases.Size() == 1);
  const std::string lease = corral::json::get_string(leases[0], "leaseId");
  CHECK(r.err.find("`corral stop --id " + lease + "` cleans up once the plugin is fixed") != std::string::npos);
  CHECK(corral_sandboxes().size() == 1);
  const int command = std::stoi(read_file(pidfile));
  CHECK(sbx_test::process_alive(command));  // the crash took the helper, not the sandbox's command
  CHECK(sbx.calls_of("exec").size() == 1);

  CliResult stop = env.run({"stop", "--id", lease});
  CHECK_MESSAGE(stop.exit_code == 0, stop.err);
  CHECK(sbx.sandboxes().empty());
  CHECK(sbx_test::process_ends(command));
  CHECK(env.claims().empty());
  CHECK(sbx.calls_of("create").size() == 1);
}

TEST_CASE_FIXTURE(E2E, "sbx exec dying mid-stream is an error, not the command's exit code; the command is stopped") {
  env.env["SBX_STANDIN_FAULT"] = "exec-dies";
  const std::string pidfile = ws + "/command.pid";
  std::vector<std::string> args{"--lease-output", handle_path("h.json")};
  bool keep = false;
  SUBCASE("plain run") {}
  SUBCASE("--keep") {
    keep = true;
    args.push_back("--keep");
  }
  args.insert(args.end(), {"--", "sh", "-c", "echo $$ > " + pidfile + "; echo started; exec sleep 60"});
  CliResult r = run(args);
  CHECK(r.exit_code == 69);
  CHECK(r.out == "started\n");  // what came before the break is delivered
  CHECK(r.err.find("`sbx exec` ended (exit 1) before the command finished") != std::string::npos);
  CHECK(r.err.find("connection reset by peer") != std::string::npos);
  auto execs = sbx.calls_of("exec");
  REQUIRE(execs.size() == 2);  // the command once, then the look for its exit status
  CHECK(sbx_test::argv_mentions(execs[0], "corral-run"));
  CHECK(sbx_test::argv_mentions(execs[1], "corral-status"));
  CHECK(sbx.calls_of("stop").size() == 1);
  CHECK(sbx_test::process_ends(std::stoi(read_file(pidfile))));
  auto h = handle("h.json");
  REQUIRE(h.HasMember("error"));
  CHECK(std::string(h["error"]["code"].GetString()) == "unavailable");
  CHECK(h["kept"].GetBool() == keep);
  if (keep) {
    CHECK(corral_sandboxes().size() == 1);
    CHECK(env.claims().size() == 1);
    env.env.erase("SBX_STANDIN_FAULT");
    CliResult stop = env.run({"stop", "--id", h["leaseId"].GetString()});
    CHECK_MESSAGE(stop.exit_code == 0, stop.err);
  }
  CHECK(sbx.sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE_FIXTURE(E2E, "what is piped into corral is the command's stdin in the sandbox, to its end; a command that stops reading ends the run") {
  auto with_input = [&](const std::vector<std::string>& command, const std::string& input) {
    std::vector<std::string> args{"run", "--provider", "docker-sandbox", "--"};
    args.insert(args.end(), command.begin(), command.end());
    return env.run_with_input(args, input);
  };
  CliResult lines = with_input({"cat"}, "a\nb\n");
  CHECK_MESSAGE(lines.exit_code == 0, lines.err);
  CHECK(lines.out == "a\nb\n");
  // The flag is exactly "-i", which no word of these commands is.
  auto interactive = [](const std::vector<std::string>& argv) {
    return std::count(argv.begin(), argv.end(), "-i") == 1;
  };
  REQUIRE(sbx.calls_of("exec").size() == 1);
  CHECK(interactive(sbx.calls_of("exec")[0]));
  // More than a pipe and sbx hold, every byte value: all of it arrives, and its end.
  const std::string big = corral::test::random_bytes(3 << 20);
  CliResult counted = with_input({"wc", "-c"}, big);
  CHECK_MESSAGE(counted.exit_code == 0, counted.err);
  CHECK(counted.out == std::to_string(big.size()) + "\n");
  CliResult echoed = with_input({"cat"}, big);
  CHECK(echoed.exit_code == 0);
  CHECK(echoed.out.size() == big.size());
  CHECK((echoed.out == big));
  // head stops reading after 5 bytes: the run ends by its exit, nothing waits for the rest.
  CliResult head = with_input({"head", "-c", "5"}, big);
  CHECK(head.exit_code == 0);
  CHECK(head.out == big.substr(0, 5));
  // An empty pipe is an empty stdin; --no-stdin closes it, and sbx exec gets no -i.
  CHECK(with_input({"wc", "-c"}, "").out == "0\n");
  const size_t before = sbx.calls_of("exec").size();
  CliResult closed = env.run_with_input({"run", "--provider", "docker-sandbox", "--no-stdin", "--", "wc", "-c"}, "abc");
  CHECK_MESSAGE(closed.exit_code == 0, closed.err);
  CHECK(closed.out == "0\n");
  REQUIRE(sbx.calls_of("exec").size() == before + 1);
  CHECK_FALSE(interactive(sbx.calls_of("exec").back()));
  CHECK(sbx.sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE_FIXTURE(E2E, "Ctrl-C and SIGTERM reach the command in the sandbox as that signal: its trap runs and its exit code is kept") {
  int sig = SIGINT;
  std::string name = "INT";
  SUBCASE("SIGINT") {}
  SUBCASE("SIGTERM") {
    sig = SIGTERM;
    name = "TERM";
  }
  corral::test::Background bg = env.start(
      {"run", "--provider", "docker-sandbox", "--lease-output", handle_path("h.json"), "--", "sh", "-c",
       "trap 'echo got INT; exit 3' INT; trap 'echo got TERM; exit 4' TERM; echo started; while :; do sleep 0.1; done"});
  REQUIRE(corral::test::eventually([&] { return read_file(bg.out) == "started\n"; }));
  ::kill(bg.pid, sig);
  CHECK(bg.wait(std::chrono::seconds(60)) == 130);
  CHECK(read_file(bg.out) == "started\ngot " + name + "\n");
  auto h = handle("h.json");
  CHECK(h["exitCode"].GetInt() == (sig == SIGINT ? 3 : 4));
  // The signal went by a second sbx exec, the status by a third; the trap ended the
  // command, not a stop.
  auto execs = sbx.calls_of("exec");
  REQUIRE(execs.size() == 3);
  CHECK(sbx_test::argv_mentions(execs[1], "kill -\"$2\" \"-$g\""));  // the SDK's signal to a process group
  CHECK(execs[1].back() == name);
  CHECK(sbx_test::argv_mentions(execs[2], "corral-status"));
  CHECK(sbx.calls_of("stop").empty());
  CHECK(sbx.sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE_FIXTURE(E2E, "a command in the sandbox that ignores its signal is stopped after --stop-timeout, or at a second Ctrl-C") {
  std::string stop_timeout = "1s";
  bool twice = false;
  SUBCASE("--stop-timeout") {}
  SUBCASE("a second Ctrl-C") {
    stop_timeout = "5m";
    twice = true;
  }
  const std::string pidfile = ws + "/bg.pid";
  corral::test::Background bg = env.start({"run", "--provider", "docker-sandbox", "--stop-timeout", stop_timeout, "--",
                                           "sh", "-c", "trap '' INT; sleep 60 & echo $! > " + pidfile + "; wait"});
  REQUIRE(sbx_test::wait_for_file(pidfile, 30));
  ::kill(bg.pid, SIGINT);
  if (twice) {
    REQUIRE(corral::test::eventually([&] { return sbx.calls_of("exec").size() == 2; }));  // the signal was passed on
    ::kill(bg.pid, SIGINT);
  }
  CHECK(bg.wait(std::chrono::seconds(60)) == 130);
  if (!twice) CHECK(read_file(bg.err).find("--stop-timeout") != std::string::npos);
  CHECK(sbx.calls_of("stop").size() == 1);  // the existing kill path: the sandbox is stopped
  CHECK(sbx_test::process_ends(std::stoi(read_file(pidfile))));
  CHECK(sbx.sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE_FIXTURE(E2E, "run -t gives the command in the sandbox a terminal sized as the user's, its keys and output relayed") {
  CliResult r = env.run_on_terminal(
      {"run", "--provider", "docker-sandbox", "-t", "--", "sh", "-c",
       "sleep 0.3; test -t 0 && test -t 1 && test -t 2 && echo on-a-terminal; tty; stty size; "
       "printf 'name? '; read name; echo \"hello-$name\"; exit 5"},
      100, {{"", "", 33, 100}, {"name? ", "corral\r"}});
  CHECK_MESSAGE(r.exit_code == 5, r.out);
  CHECK(r.out.find("on-a-terminal") != std::string::npos);
  CHECK(r.out.find("/dev/pts/") != std::string::npos);
  CHECK(r.out.find("33 100") != std::string::npos);
  CHECK(r.out.find("hello-corral") != std::string::npos);
  auto execs = sbx.calls_of("exec");
  REQUIRE_FALSE(execs.empty());
  CHECK(std::count(execs[0].begin(), execs[0].end(), "-t") == 1);
  CHECK(std::count(execs[0].begin(), execs[0].end(), "-i") == 1);
  CHECK(sbx.sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE_FIXTURE(E2E, "with -t, Ctrl-C is a key for the command in the sandbox and a resize reaches it") {
  CliResult r = env.run_on_terminal(
      {"run", "--provider", "docker-sandbox", "-t", "--", "sh", "-c",
       "trap 'stty size; echo resized' WINCH; trap 'echo caught-int; exit 7' INT; echo ready; "
       "while :; do sleep 0.1; done"},
      80, {{"ready", "", 30, 120}, {"resized", "\x03"}});
  CHECK_MESSAGE(r.exit_code == 7, r.out);  // the command's own end, not corral's 130
  CHECK(r.out.find("30 120") != std::string::npos);
  CHECK(r.out.find("caught-int") != std::string::npos);
  CHECK(sbx.calls_of("stop").empty());
  CHECK(sbx.sandboxes().empty());
}
