// The local bubblewrap provider, end to end through the CLI.
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "cli.hpp"
#include "conformance_run.hpp"
#include "corral/json.hpp"
#include "corral/os/process.hpp"
#include "small_disk.hpp"

namespace fs = std::filesystem;
using corral::test::CliEnv;
using corral::test::read_file;
using corral::test::TempDir;

namespace {

corral::json::Document handle(const fs::path& p) { return corral::json::parse(read_file(p), p.string()); }

}  // namespace

TEST_CASE("the command's exit code, stdout and stderr pass through unchanged") {
  CliEnv env;
  auto r = env.run({"run", "--", "sh", "-c", "echo to-out; echo to-err >&2; exit 42"});
  CHECK(r.exit_code == 42);
  CHECK(r.out == "to-out\n");
  CHECK(r.err.find("to-err\n") != std::string::npos);
  CHECK(env.local_sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE("large output arrives complete and byte-exact on stdout") {
  CliEnv env;
  auto r = env.run({"run", "--", "sh", "-c", "seq 1 200000"});
  REQUIRE(r.exit_code == 0);
  std::string expected;
  for (int i = 1; i <= 200000; ++i) expected += std::to_string(i) + "\n";
  CHECK(r.out.size() == expected.size());
  CHECK(r.out == expected);
}

TEST_CASE("the workspace is synced: git-aware, .corralignore respected, cwd kept") {
  CliEnv env;
  fs::path ws = env.workspace();
  auto git = corral::os::capture_process({{"git", "init", "-q"}, std::nullopt, ws.string()});
  REQUIRE(git.exit_code == 0);
  env.root().write("work/.gitignore", "build/\n");
  env.root().write("work/build/artifact", "no");
  env.root().write("work/src/app.txt", "app");
  env.root().write("work/notes.tmp", "no");
  env.root().write("work/.corralignore", "*.tmp\n");
  auto r = env.run({"run", "--", "sh", "-c", "pwd; find . -type f | sort"}, (ws / "src").string());
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out == "/workspace/src\n./app.txt\n");
  auto all = env.run({"run", "--", "sh", "-c", "find . -type f | sort"});
  CHECK(all.out == "./.corralignore\n./.gitignore\n./src/app.txt\n");
}

TEST_CASE("--git sends the checkout's .git: git describe works in the sandbox, and without it there is no repository") {
  CliEnv env;
  const fs::path ws = env.workspace();
  env.root().write("work/app.txt", "app");
  const auto git = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"git", "-c", "user.email=t@t", "-c", "user.name=t"});
    auto p = corral::os::capture_process({args, std::nullopt, ws.string()});
    REQUIRE_MESSAGE(p.exit_code == 0, p.err);
  };
  git({"init", "-q"});
  git({"add", "app.txt"});
  git({"commit", "-qm", "first"});
  git({"tag", "v1.2.3"});
  auto with = env.run({"run", "--git", "--", "git", "describe", "--tags"});
  CHECK_MESSAGE(with.exit_code == 0, with.err);
  CHECK(with.out == "v1.2.3\n");
  auto without = env.run({"run", "--", "sh", "-c", "test -e .git && echo has-git; git describe --tags 2>/dev/null || echo none"});
  CHECK(without.out == "none\n");
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("the jail has no capabilities, a read-only system and no host home") {
  CliEnv env;
  auto r = env.run({"run", "--", "sh", "-c",
                    "grep CapEff /proc/self/status; touch /usr/corral-x 2>/dev/null && echo wrote-usr; "
                    "mount -o remount,bind,rw /usr 2>/dev/null && echo remounted; "
                    "test -e " + env.root().path().string() + " && echo sees-host-home; echo done"});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "CapEff:\t0000000000000000\ndone\n");
}

TEST_CASE("forwarded values reach the command but never bwrap's command line") {
  CliEnv env;
  env.env["CORRAL_TEST_TOKEN"] = "tok-visible-only-inside";
  auto r = env.run({"run", "--env", "CORRAL_TEST_TOKEN", "--", "sh", "-c",
                    "echo $CORRAL_TEST_TOKEN; cat /proc/1/cmdline | tr '\\0' ' '"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.rfind("tok-visible-only-inside\n", 0) == 0);
  // Inside the pid namespace, pid 1 is bwrap's init: its argv carries no value.
  CHECK(r.out.substr(r.out.find('\n') + 1).find("tok-visible") == std::string::npos);
}

TEST_CASE("the sandbox cannot write outside its workspace and has private /tmp") {
  CliEnv env;
  env.root().write("work/f.txt", "x");
  // Paths that exist inside the jail too: /etc bound read-only, /tmp a private tmpfs.
  const std::string tag = "corral-escape-" + std::to_string(::getpid());
  const fs::path host_etc = "/etc/" + tag, host_tmp = "/tmp/" + tag;
  auto r = env.run({"run", "--", "sh", "-c",
                    "echo hacked > " + host_etc.string() + " 2>/dev/null; echo in > " + host_tmp.string() +
                        "; cat " + host_tmp.string() + "; echo changed > f.txt; echo $$"});
  const bool etc_written = fs::exists(host_etc), tmp_written = fs::exists(host_tmp);
  std::error_code ec;
  fs::remove(host_etc, ec);
  fs::remove(host_tmp, ec);
  CHECK(r.exit_code == 0);
  CHECK_FALSE(etc_written);
  CHECK_FALSE(tmp_written);  // the command's /tmp was its own
  CHECK(read_file(env.workspace() / "f.txt") == "x");  // the user's tree is never written
  CHECK(r.out.find("in\n") == 0);
  CHECK(r.out.substr(3) != std::to_string(::getpid()) + "\n");  // its own pid namespace
}

TEST_CASE("keep, reuse by slug, then stop") {
  CliEnv env;
  env.root().write("work/a.txt", "one");
  fs::path h = env.root().path() / "handle.json";
  auto r = env.run({"run", "--keep", "--lease-output", h.string(), "--", "sh", "-c", "echo state > made.txt"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto doc = handle(h);
  std::string slug = doc["slug"].GetString(), lease = doc["leaseId"].GetString();
  CHECK(doc["provider"].GetString() == std::string("local"));
  CHECK(doc["kept"].GetBool());
  CHECK_FALSE(doc["reused"].GetBool());
  CHECK(std::string(doc["cleanupCommand"].GetString()) == "corral stop --provider local --id " + lease);
  CHECK(env.local_sandboxes().size() == 1);
  CHECK(env.claims().size() == 1);

  // Reused: state survives; changed files are re-synced; the lease is not stopped.
  env.root().write("work/a.txt", "two");
  auto again = env.run({"run", "--id", slug, "--lease-output", h.string(), "--", "sh", "-c", "cat made.txt a.txt"});
  CHECK(again.exit_code == 0);
  CHECK(again.out == "state\ntwo");
  auto reused = handle(h);
  CHECK(reused["reused"].GetBool());
  CHECK(reused["kept"].GetBool());
  CHECK(reused["leaseId"].GetString() == lease);
  // A failing command in a reused lease does not stop it either.
  CHECK(env.run({"run", "--id", lease, "--", "false"}).exit_code == 1);
  CHECK(env.local_sandboxes().size() == 1);

  auto list = env.run({"list", "--json"});
  CHECK(list.out.find(slug) != std::string::npos);
  auto stop = env.run({"stop", "--id", slug});
  CHECK_MESSAGE(stop.exit_code == 0, stop.err);
  CHECK(env.local_sandboxes().empty());
  CHECK(env.claims().empty());
  auto gone = env.run({"run", "--id", slug, "--", "true"});
  CHECK(gone.exit_code == 66);
  CHECK(gone.err.find("no lease") != std::string::npos);
}

TEST_CASE("a kept sandbox whose command put a link or a folder where the tree has a folder or a file syncs back to the tree, writing nothing through the link") {
  CliEnv env;
  env.root().write("work/src/a.c", "one");
  env.root().write("work/notes.txt", "notes\n");
  // Outside the workspace, and writable by anyone, so only the copy keeps it empty.
  TempDir outside;
  fs::permissions(outside.path(), fs::perms::all, fs::perm_options::replace);
  const fs::path h = env.root().path() / "handle.json";
  auto kept = env.run({"run", "--keep", "--lease-output", h.string(), "--", "true"});
  REQUIRE_MESSAGE(kept.exit_code == 0, kept.err);
  const std::string slug = handle(h)["slug"].GetString();
  auto plant = env.run({"run", "--id", slug, "--", "sh", "-c",
                        "rm -rf src && ln -s '" + outside.str() + "' src && rm notes.txt && "
                        "mkdir -p notes.txt/deep && echo x > notes.txt/deep/f && chmod 500 notes.txt/deep"});
  REQUIRE_MESSAGE(plant.exit_code == 0, plant.err);

  env.root().write("work/src/a.c", "two");  // changed: the next run syncs src/a.c again
  // The sync makes the sandbox match the tree: the link and the folder give way (before,
  // the lease was wedged with "Not a directory").
  auto r = env.run({"run", "--id", slug, "--", "sh", "-c", "test -d src && ! test -L src && cat src/a.c notes.txt"});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out == "twonotes\n");
  CHECK(fs::is_empty(outside.path()));
  CHECK(env.run({"stop", "--id", slug}).exit_code == 0);
}

TEST_CASE("warmup keeps a synced sandbox that status describes and run reuses") {
  CliEnv env;
  env.root().write("work/w.txt", "warm");
  auto w = env.run({"warmup"});
  REQUIRE_MESSAGE(w.exit_code == 0, w.err);
  auto doc = corral::json::parse(w.out, "warmup handle");
  std::string slug = doc["slug"].GetString();
  CHECK(doc["kept"].GetBool());
  CHECK(env.local_sandboxes().size() == 1);
  auto status = env.run({"status", "--id", slug, "--json"});
  REQUIRE(status.exit_code == 0);
  auto s = corral::json::parse(status.out, "status");
  CHECK(s["sandbox"]["state"].GetString() == std::string("ready"));
  CHECK(s["lease"]["slug"].GetString() == slug);
  auto r = env.run({"run", "--id", slug, "-v", "--", "cat", "w.txt"});
  CHECK(r.out == "warm");
  CHECK(r.err.find("workspace unchanged") != std::string::npos);  // synced by warmup, -v after the subcommand
  CHECK(env.run({"stop", "--id", slug}).exit_code == 0);
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("keep-on-failure keeps only failed runs") {
  CliEnv env;
  CHECK(env.run({"run", "--keep-on-failure", "--", "true"}).exit_code == 0);
  CHECK(env.local_sandboxes().empty());
  fs::path h = env.root().path() / "h.json";
  auto r = env.run({"run", "--keep-on-failure", "--lease-output", h.string(), "--", "sh", "-c", "exit 3"});
  CHECK(r.exit_code == 3);
  CHECK(handle(h)["kept"].GetBool());
  CHECK(handle(h)["exitCode"].GetInt() == 3);
  CHECK(env.local_sandboxes().size() == 1);
  CHECK(r.err.find("kept sandbox") != std::string::npos);
}

TEST_CASE("the session handle is written when the command cannot even start") {
  CliEnv env;
  fs::path h = env.root().path() / "h.json";
  auto r = env.run({"run", "--lease-output", h.string(), "--", "/no/such/program"});
  CHECK(r.exit_code != 0);
  auto doc = handle(h);
  CHECK_FALSE(doc["kept"].GetBool());
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("only allow-listed environment variables reach the command") {
  CliEnv env;
  env.env["CORRAL_TEST_VISIBLE"] = "yes";
  env.env["CORRAL_TEST_HIDDEN"] = "no";
  auto r = env.run({"run", "--env", "CORRAL_TEST_VISIBLE", "--", "sh", "-c",
                    "echo ${CORRAL_TEST_VISIBLE:-unset} ${CORRAL_TEST_HIDDEN:-unset}"});
  CHECK(r.out == "yes unset\n");
  auto missing = env.run({"run", "--env", "CORRAL_TEST_NOT_SET", "--", "true"});
  CHECK(missing.exit_code == 64);
  CHECK(missing.err.find("CORRAL_TEST_NOT_SET is not set") != std::string::npos);
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("--timeout stops the command with exit code 124 and removes the sandbox") {
  CliEnv env;
  auto start = std::chrono::steady_clock::now();
  auto r = env.run({"run", "--timeout", "1s", "--", "sleep", "30"});
  CHECK(r.exit_code == 124);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
  CHECK(r.err.find("longer than 1s") != std::string::npos);
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("Ctrl-C stops the command and leaves nothing behind unless kept") {
  for (bool keep : {false, true}) {
    CAPTURE(keep);
    CliEnv env;
    fs::path marker = env.root().path() / "started";
    std::vector<std::string> args = {"run"};
    if (keep) args.push_back("--keep");
    args.insert(args.end(), {"--", "sh", "-c", "echo started; sleep 60"});
    auto bg = env.start(args);
    // Wait until the command is running (its output reached the file).
    for (int i = 0; i < 200 && read_file(bg.out).find("started") == std::string::npos; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(read_file(bg.out) == "started\n");
    auto t0 = std::chrono::steady_clock::now();
    ::kill(bg.pid, SIGINT);
    CHECK(bg.wait() == 130);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(15));
    CHECK(env.local_sandboxes().size() == (keep ? 1u : 0u));
    CHECK(env.claims().size() == (keep ? 1u : 0u));
  }
}

TEST_CASE("Ctrl-C with --keep-on-failure keeps the interrupted sandbox") {
  CliEnv env;
  fs::path h = env.root().path() / "h.json";
  auto bg = env.start({"run", "--keep-on-failure", "--lease-output", h.string(), "--", "sh", "-c", "echo started; sleep 60"});
  for (int i = 0; i < 200 && read_file(bg.out).find("started") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ::kill(bg.pid, SIGINT);
  CHECK(bg.wait() == 130);
  auto doc = handle(h);
  CHECK(doc["kept"].GetBool());
  CHECK(doc["error"]["code"].GetString() == std::string("cancelled"));
  CHECK(env.local_sandboxes().size() == 1);
}

TEST_CASE("network none cuts the network and url refuses it") {
  CliEnv env;
  auto r = env.run({"run", "--local-network", "none", "--", "sh", "-c", "cat /proc/net/dev | grep -c :"});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "1\n");  // only loopback
  auto bad = env.run({"run", "--local-network", "maybe", "--", "true"});
  CHECK(bad.exit_code == 64);
  CHECK(bad.err.find("one of none, shared") != std::string::npos);
}

TEST_CASE("url gives a loopback URL for a kept sandbox") {
  CliEnv env;
  fs::path h = env.root().path() / "h.json";
  REQUIRE(env.run({"run", "--keep", "--lease-output", h.string(), "--", "true"}).exit_code == 0);
  std::string lease = handle(h)["leaseId"].GetString();
  auto r = env.run({"url", "--id", lease, "--port", "8080"});
  CHECK(r.out == "http://127.0.0.1:8080\n");
  CHECK(env.run({"url", "--id", lease, "--port", "0"}).exit_code == 64);
  CHECK(env.run({"stop", "--id", lease}).exit_code == 0);
}

TEST_CASE("options needing a missing feature are refused before anything is created") {
  CliEnv env;
  auto r = env.run({"run", "--keep", "--", "true"});
  REQUIRE(r.exit_code == 0);
  std::string slug = corral::json::parse(env.run({"list", "--json"}).out, "list")[0]["slug"].GetString();
  auto extend = env.run({"extend", "--id", slug, "--by", "1h"});
  CHECK(extend.exit_code == 64);
  CHECK(extend.err.find("'keep-alive'") != std::string::npos);
  env.run({"stop", "--all"});
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("doctor reports bubblewrap and explains when it is missing") {
  CliEnv env;
  auto ok = env.run({"doctor"});
  CHECK_MESSAGE(ok.exit_code == 0, (ok.out + ok.err));
  CHECK(ok.out.find("[ok] bubblewrap installed") != std::string::npos);
  CHECK(ok.out.find("[ok] user namespaces usable") != std::string::npos);
  env.env["CORRAL_BWRAP"] = "no-such-bwrap";
  auto missing = env.run({"doctor"});
  CHECK(missing.exit_code == 69);
  CHECK(missing.out.find("apt-get install -y bubblewrap") != std::string::npos);
  auto run = env.run({"run", "--", "true"});
  CHECK(run.exit_code == 69);
  CHECK(run.err.find("bubblewrap") != std::string::npos);
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("local passes the conformance kit, every sandbox removed") {
  CliEnv env;
  auto r = corral::test::conformance_recorded(env, "local");
  corral::test::check_passed(r, {"argv", "workdir", "timeout", "interrupt", "network-none", "network-allowlist",
                                 "network-allowlist-ports", "destroy-twice", "pause-resume", "fork", "shards-from",
                                 "concurrent", "nothing-left"});
  CHECK(r.passed.size() >= 21);  // all but the features local does not advertise
  CHECK(r.skipped == std::vector<std::string>{"extend"});
  CHECK(env.local_sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE("a kept sandbox whose folder was deleted behind corral's back says so, and stop --id forgets it") {
  CliEnv env;
  env.root().write("work/a.txt", "one");
  fs::path h = env.root().path() / "handle.json";
  REQUIRE(env.run({"run", "--keep", "--lease-output", h.string(), "--", "true"}).exit_code == 0);
  const std::string lease = handle(h)["leaseId"].GetString();
  REQUIRE(env.local_sandboxes().size() == 1);
  fs::remove_all(env.local_sandboxes().front());
  fs::remove(h);

  auto r = env.run({"run", "--id", lease, "--lease-output", h.string(), "--", "sh", "-c", "echo ran"});
  CHECK(r.exit_code == 66);
  CHECK(r.out.empty());  // the command never ran
  CHECK_MESSAGE(r.err.find("no longer exists") != std::string::npos, r.err);
  CHECK(r.err.find("corral stop --provider local --id " + lease) != std::string::npos);
  auto doc = handle(h);
  CHECK(doc["reused"].GetBool());
  CHECK(doc["error"]["code"].GetString() == std::string("not-found"));
  CHECK(env.claims().size() == 1);  // kept until the user says

  auto stop = env.run({"stop", "--id", lease});
  CHECK_MESSAGE(stop.exit_code == 0, stop.err);
  CHECK(env.claims().empty());
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("a full disk while the workspace is copied into the sandbox folder is a quota error, and leaves nothing") {
  CliEnv env;
  corral::test::SmallDisk disk(env.state_dir() / "corral" / "local", 512u << 10);
  if (disk.skipped("the sandbox folders")) return;
  env.root().write("work/big.bin", corral::test::random_bytes(2u << 20));
  // Unbounded, so on disk: a bounded run that is not kept holds its workspace in memory.
  auto r = env.run({"run", "--max-workspace", "0", "--", "sh", "-c", "echo ran"});
  CHECK(r.exit_code == 75);
  CHECK(r.out.empty());  // the command never ran
  CHECK_MESSAGE(r.err.find("cannot copy 'big.bin' into the workspace") != std::string::npos, r.err);
  CHECK(r.err.find("No space left on device") != std::string::npos);
  CHECK(r.err.find("CORRAL_LOCAL_DIR") != std::string::npos);
  CHECK(env.local_sandboxes().empty());
  CHECK(env.claims().empty());

  // A workspace that fits runs, and the next corral finds nothing to clean.
  fs::remove(env.workspace() / "big.bin");
  env.root().write("work/small.txt", "fits");
  auto again = env.run({"run", "--", "cat", "small.txt"});
  CHECK_MESSAGE(again.exit_code == 0, again.err);
  CHECK(again.out == "fits");
  CHECK(env.run({"stop", "--orphans"}).exit_code == 0);
  CHECK(env.local_sandboxes().empty());
  CHECK(env.claims().empty());
}
