// The provider's primitives called directly (through a fake host) against the stand-in
// sbx: the exact sbx invocations, streaming, env file, ownership, stop on cancel, errors.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <chrono>
#include <algorithm>
#include <filesystem>
#include <thread>

#include "provider.hpp"
#include "fake_host.hpp"
#include "sandbox_name.hpp"
#include "standin_fixture.hpp"

namespace fs = std::filesystem;
using namespace corral;
using namespace corral::docker_sandbox;
using corral::test::FakeHost;
using sbx_test::StandIn;

namespace {

// One stand-in, one workspace, and the process environment the plugin's sbx inherits.
struct Fixture {
  StandIn sbx;
  test::TempDir work;
  FakeHost fake;
  std::string ws = fs::canonical(work.path()).string();

  Fixture() {
    ::setenv("SBX_STANDIN_STATE", sbx.state().c_str(), 1);
    for (const char* v : {"SBX_STANDIN_FAULT", "SBX_STANDIN_HANG", "SBX_STANDIN_LS_FORMAT"}) ::unsetenv(v);
  }
  ~Fixture() {
    for (const char* v : {"SBX_STANDIN_STATE", "SBX_STANDIN_FAULT", "SBX_STANDIN_HANG", "SBX_STANDIN_LS_FORMAT"})
      ::unsetenv(v);
  }
  DockerSandboxProvider provider(StringMap extra = {}) {
    StringMap o{{"cli", sbx_test::standin_path()}, {"cli-timeout", "30s"}};
    for (auto& [k, v] : extra) o[k] = v;
    return DockerSandboxProvider(sdk::Options(o));
  }
  CreateRequest request(const std::string& lease, const std::string& slug = "web") {
    return {lease, slug, {{"corral-owner", "corral"}, {"corral-lease", lease}}, ws};
  }
  std::vector<std::string> args_of(const std::vector<std::string>& call) {
    return {call.begin() + 1, call.end()};
  }
};

Command argv_command(std::vector<std::string> argv) {
  Command c;
  c.argv = std::move(argv);
  return c;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

TEST_CASE_FIXTURE(Fixture, "create: exact sbx create invocation, workspace recorded, sandbox running") {
  auto p = provider({{"template", "docker/sandbox-templates:shell"}, {"cpus", "2"}, {"memory", "2g"}});
  Sandbox s = p.create(request("lease-1"), fake.host());
  CHECK(s.id == sandbox_name("web", "lease-1"));
  CHECK(s.id.rfind("corral-web-", 0) == 0);
  CHECK(s.details.at("workspace") == ws);
  CHECK(s.labels.at("corral-lease") == "lease-1");
  auto creates = sbx.calls_of("create");
  REQUIRE(creates.size() == 1);
  CHECK(args_of(creates[0]) == std::vector<std::string>{"create", "--name", s.id, "--template",
                                                        "docker/sandbox-templates:shell", "--cpus", "2", "--memory",
                                                        "2g", "shell", ws});
  CHECK(sbx.status(s.id) == "running");
}

TEST_CASE_FIXTURE(Fixture, "exec: stdout and stderr kept apart, exit code passed through") {
  auto p = provider();
  Sandbox s = p.create(request("lease-1"), fake.host());
  ExecResult r = p.exec(s, argv_command({"sh", "-c", "echo out; echo err >&2; exit 7"}), fake.host());
  CHECK(r.exit_code == 7);
  CHECK(fake.out() == "out\n");
  CHECK(fake.err() == "err\n");
  auto execs = sbx.calls_of("exec");
  REQUIRE(execs.size() == 2);  // the command, then reading back the status it recorded
  std::vector<std::string> args = args_of(execs[0]);
  REQUIRE(args.size() == 14);
  CHECK(std::vector<std::string>(args.begin(), args.begin() + 6) ==
        std::vector<std::string>{"exec", "-w", ws, s.id, "sh", "-c"});
  CHECK(args[7] == "corral-run");
  CHECK(args[8].rfind("/tmp/corral-status-", 0) == 0);
  CHECK(args[9].rfind("/tmp/corral-pid-", 0) == 0);
  CHECK(args[10].empty());  // not on a terminal
  CHECK(std::vector<std::string>(args.begin() + 11, args.end()) ==
        std::vector<std::string>{"sh", "-c", "echo out; echo err >&2; exit 7"});
  CHECK(args_of(execs[1]).back() == args[8]);
  CHECK_FALSE(fs::exists(args[8]));  // the stand-in's /tmp is this machine's: the status file is gone
  CHECK_FALSE(fs::exists(args[9]));  // and so is the pid file
}

TEST_CASE_FIXTURE(Fixture, "exec: shell commands, working directory relative to the workspace") {
  auto p = provider();
  fs::create_directories(work.path() / "sub" / "dir");
  Sandbox s = p.create(request("lease-1"), fake.host());
  Command shell;
  shell.shell = "echo $((40+2)); pwd";
  shell.cwd = "sub/dir";
  CHECK(p.exec(s, shell, fake.host()).exit_code == 0);
  CHECK(fake.out() == "42\n" + ws + "/sub/dir\n");
  Command escape = argv_command({"pwd"});
  escape.cwd = "../..";
  CHECK_THROWS_AS(p.exec(s, escape, fake.host()), Error);
}

TEST_CASE_FIXTURE(Fixture, "exec: the workdir setting replaces the workspace as the base folder") {
  fs::create_directories(work.path() / "inner" / "x");
  auto p = provider({{"workdir", ws + "/inner"}});
  Sandbox s = p.create(request("lease-1"), fake.host());
  Command c = argv_command({"pwd"});
  c.cwd = "x";
  p.exec(s, c, fake.host());
  CHECK(fake.out() == ws + "/inner/x\n");
}

TEST_CASE_FIXTURE(Fixture, "exec: forwarded env goes through a private env file, never argv, removed after") {
  auto p = provider();
  Sandbox s = p.create(request("lease-1"), fake.host());
  Command c = argv_command({"sh", "-c", "printf '%s|%s' \"$API_TOKEN\" \"$OTHER\""});
  c.env = {{"API_TOKEN", "s3cr3t value=x"}, {"OTHER", "2"}};
  CHECK(p.exec(s, c, fake.host()).exit_code == 0);
  CHECK(fake.out() == "s3cr3t value=x|2");
  auto execs = sbx.calls_of("exec");
  REQUIRE(execs.size() == 1);
  CHECK(sbx_test::argv_mentions(execs[0], "--env-file"));
  CHECK_FALSE(sbx_test::argv_mentions(execs[0], "s3cr3t"));
  auto files = sbx.env_files();
  REQUIRE(files.size() == 1);
  std::string path = files[0].substr(0, files[0].rfind(' '));
  CHECK(files[0].substr(files[0].rfind(' ') + 1) == "0600");
  CHECK_FALSE(fs::exists(path));

  // No forwarded env, no env file.
  p.exec(s, argv_command({"true"}), fake.host());
  CHECK_FALSE(sbx_test::argv_mentions(sbx.calls_of("exec").back(), "--env-file"));
}

TEST_CASE_FIXTURE(Fixture, "exec: a value the env file cannot carry is refused before anything runs") {
  auto p = provider();
  Sandbox s = p.create(request("lease-1"), fake.host());
  Command c = argv_command({"true"});
  c.env = {{"MULTI", "a\nb"}};
  CHECK_THROWS_AS(p.exec(s, c, fake.host()), Error);
  CHECK(sbx.calls_of("exec").empty());
}

TEST_CASE_FIXTURE(Fixture, "exec: cancel stops sbx exec and the command inside the sandbox") {
  auto p = provider();
  Sandbox s = p.create(request("lease-1"), fake.host());
  fs::path pidfile = work.path() / "pid";
  auto started = std::chrono::steady_clock::now();
  std::thread ctrl_c([&] {
    for (int i = 0; i < 100 && !fs::exists(pidfile); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    fake.cancel();
  });
  try {
    p.exec(s, argv_command({"sh", "-c", "echo $$ > pid; exec sleep 60"}), fake.host());
    FAIL("exec returned after cancel");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::cancelled);
  }
  ctrl_c.join();
  CHECK(seconds_since(started) < 15);
  int pid = std::stoi(test::read_file(pidfile));
  CHECK(sbx_test::process_ends(pid));
  CHECK(sbx.calls_of("stop").size() == 1);
  CHECK(sbx.status(s.id) == "stopped");
}

TEST_CASE_FIXTURE(Fixture, "exec: timeout stops the command and reports timeout") {
  auto p = provider();
  Sandbox s = p.create(request("lease-1"), fake.host());
  Command c = argv_command({"sh", "-c", "echo $$ > pid; exec sleep 60"});
  c.timeout_seconds = 1;
  auto started = std::chrono::steady_clock::now();
  try {
    p.exec(s, c, fake.host());
    FAIL("no timeout");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::timeout);
    CHECK(std::string(e.what()).find("1s") != std::string::npos);
  }
  CHECK(seconds_since(started) < 15);
  CHECK(sbx_test::process_ends(std::stoi(test::read_file(work.path() / "pid"))));
}

TEST_CASE_FIXTURE(Fixture, "exec: a stopped sandbox is started again; a vanished one is not-found") {
  auto p = provider();
  Sandbox s = p.create(request("lease-1"), fake.host());
  REQUIRE(sbx.run({"stop", s.id}).exit_code == 0);
  CHECK(p.exec(s, argv_command({"true"}), fake.host()).exit_code == 0);
  CHECK(sbx.status(s.id) == "running");
  REQUIRE(sbx.run({"rm", "-f", s.id}).exit_code == 0);
  try {
    p.exec(s, argv_command({"true"}), fake.host());
    FAIL("exec in a removed sandbox succeeded");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::not_found);
  }
}

TEST_CASE_FIXTURE(Fixture, "exec: a command's own stderr naming sbx conditions keeps its exit code") {
  auto p = provider();
  Sandbox s = p.create(request("lease-1"), fake.host());
  const std::string noisy =
      "echo 'HTTP/1.1 401 Unauthorized' >&2; echo 'error: cannot open /dev/kvm' >&2; "
      "echo 'ERROR: You are not signed in. Run sbx login' >&2; ";
  SUBCASE("nothing on stdout") {
    CHECK(p.exec(s, argv_command({"sh", "-c", noisy + "exit 3"}), fake.host()).exit_code == 3);
  }
  SUBCASE("output on stdout") {
    CHECK(p.exec(s, argv_command({"sh", "-c", "echo testing; " + noisy + "exit 4"}), fake.host()).exit_code == 4);
  }
  CHECK(sbx.calls_of("ls").empty());  // the status the command recorded settles it
  CHECK(fake.err().find("401 Unauthorized") != std::string::npos);
}

TEST_CASE_FIXTURE(Fixture, "exec: sbx failing to start a stopped sandbox is reported, not passed off as the exit code") {
  auto p = provider();
  Sandbox s = p.create(request("lease-1"), fake.host());
  REQUIRE(sbx.run({"stop", s.id}).exit_code == 0);
  ::setenv("SBX_STANDIN_FAULT", "no-virtualization", 1);
  try {
    p.exec(s, argv_command({"true"}), fake.host());
    FAIL("exec in a sandbox that cannot start succeeded");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::unavailable);
    CHECK(e.hint().find("virtualization") != std::string::npos);
  }
}

TEST_CASE_FIXTURE(Fixture, "exec: signed out since the sandbox was made is auth, confirmed by sbx ls") {
  auto p = provider();
  Sandbox s = p.create(request("lease-1"), fake.host());
  ::setenv("SBX_STANDIN_FAULT", "not-logged-in", 1);
  try {
    p.exec(s, argv_command({"true"}), fake.host());
    FAIL("exec while signed out succeeded");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::auth);
    CHECK(e.hint().find("sbx login") != std::string::npos);
  }
}

TEST_CASE_FIXTURE(Fixture, "get: details from sbx ls --json in both output shapes; gone is not-found") {
  auto p = provider();
  Sandbox s = p.create(request("lease-1"), fake.host());
  for (const char* format : {"object", "array"}) {
    CAPTURE(format);
    ::setenv("SBX_STANDIN_LS_FORMAT", format, 1);
    Sandbox got = p.get(s.id, fake.host());
    CHECK(got.id == s.id);
    CHECK(got.state == "running");
    CHECK(got.details.at("workspace") == ws);
    CHECK(got.labels.at("corral-owner") == "corral");
  }
  try {
    p.get(sandbox_name("web", "other-lease"), fake.host());
    FAIL("found a sandbox that does not exist");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::not_found);
    CHECK(!e.hint().empty());
  }
}

TEST_CASE_FIXTURE(Fixture, "pause is sbx stop: the sandbox stays, get and list say paused; resume starts it again") {
  auto p = provider();
  Sandbox s = p.create(request("lease-1"), fake.host());
  REQUIRE(p.exec(s, argv_command({"sh", "-c", "echo kept > kept.txt"}), fake.host()).exit_code == 0);

  Sandbox paused = p.pause(s, fake.host());
  CHECK(args_of(sbx.calls_of("stop").back()) == std::vector<std::string>{"stop", s.id});
  CHECK(sbx.status(s.id) == "stopped");
  CHECK(paused.state == "paused");
  CHECK(paused.details.at("provider-state") == "stopped");
  CHECK(paused.details.at("workspace") == ws);
  CHECK(p.get(s.id, fake.host()).state == "paused");
  std::vector<Sandbox> listed = p.list({{"corral-lease", "lease-1"}}, fake.host());
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].state == "paused");
  CHECK(p.pause(paused, fake.host()).state == "paused");  // pausing a paused sandbox is no error

  Sandbox resumed = p.resume(paused, fake.host());
  CHECK(args_of(sbx.calls_of("exec").back()) == std::vector<std::string>{"exec", s.id, "true"});
  CHECK(resumed.state == "running");
  CHECK(resumed.details.count("provider-state") == 0);
  CHECK(sbx.status(s.id) == "running");
  CHECK(p.resume(resumed, fake.host()).state == "running");  // resuming a running one is no error
  ExecResult r = p.exec(resumed, argv_command({"cat", "kept.txt"}), fake.host());
  CHECK(r.exit_code == 0);
  CHECK(fake.out() == "kept\n");
}

TEST_CASE_FIXTURE(Fixture, "pause and resume of a vanished sandbox are not-found; one that cannot start is unavailable") {
  auto p = provider();
  Sandbox s = p.create(request("lease-1"), fake.host());
  SUBCASE("removed behind corral's back") {
    REQUIRE(sbx.run({"rm", "-f", s.id}).exit_code == 0);
    for (bool pausing : {true, false}) {
      CAPTURE(pausing);
      try {
        pausing ? p.pause(s, fake.host()) : p.resume(s, fake.host());
        FAIL("a removed sandbox was paused or resumed");
      } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::not_found);
        CHECK(std::string(e.what()).find(s.id) != std::string::npos);
        CHECK(!e.hint().empty());
      }
    }
  }
  SUBCASE("no virtualization to start it again") {
    REQUIRE(p.pause(s, fake.host()).state == "paused");
    ::setenv("SBX_STANDIN_FAULT", "no-virtualization", 1);
    try {
      p.resume(s, fake.host());
      FAIL("a sandbox that cannot start was resumed");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::unavailable);
      CHECK(e.hint().find("virtualization") != std::string::npos);
    }
    CHECK(sbx.status(s.id) == "stopped");
  }
}

TEST_CASE_FIXTURE(Fixture, "list and destroy touch only sandboxes corral created") {
  auto p = provider();
  REQUIRE(sbx.run({"create", "--name", "my-own-box", "shell", ws}).exit_code == 0);
  Sandbox a = p.create(request("lease-a"), fake.host());
  Sandbox b = p.create(request("lease-b", "api"), fake.host());

  auto ids = [](const std::vector<Sandbox>& v) {
    std::vector<std::string> out;
    for (auto& s : v) out.push_back(s.id);
    std::sort(out.begin(), out.end());
    return out;
  };
  std::vector<std::string> both{a.id, b.id};
  std::sort(both.begin(), both.end());
  CHECK(ids(p.list({{"corral-owner", "corral"}}, fake.host())) == both);
  CHECK(ids(p.list({{"corral-lease", "lease-b"}}, fake.host())) == std::vector<std::string>{b.id});
  CHECK(ids(p.list({{"corral-slug", "web"}}, fake.host())) == std::vector<std::string>{a.id});

  CHECK_THROWS_AS(p.destroy(Sandbox{"my-own-box"}, fake.host()), Error);
  p.destroy(a, fake.host());
  CHECK(args_of(sbx.calls_of("rm").back()) == std::vector<std::string>{"rm", "-f", a.id});
  p.destroy(a, fake.host());  // already gone counts as success
  CHECK(sbx.sandboxes() == std::vector<std::string>{b.id, "my-own-box"});
}

TEST_CASE_FIXTURE(Fixture, "errors: not signed in, no virtualization, with guidance") {
  auto p = provider();
  ::setenv("SBX_STANDIN_FAULT", "not-logged-in", 1);
  try {
    p.create(request("lease-1"), fake.host());
    FAIL("created while signed out");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::auth);
    CHECK(e.hint().find("sbx login") != std::string::npos);
  }
  ::setenv("SBX_STANDIN_FAULT", "no-virtualization", 1);
  try {
    p.create(request("lease-1"), fake.host());
    FAIL("created without virtualization");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::unavailable);
    CHECK(e.hint().find("virtualization") != std::string::npos);
  }
  CHECK(sbx.sandboxes().empty());
}

TEST_CASE_FIXTURE(Fixture, "errors: a hanging sbx create times out and corral removes what it registered") {
  auto p = provider({{"cli-timeout", "1s"}});
  ::setenv("SBX_STANDIN_HANG", "create", 1);
  std::string name = sandbox_name("web", "lease-1");
  auto started = std::chrono::steady_clock::now();
  SUBCASE("removed") {
    try {
      p.create(request("lease-1"), fake.host());
      FAIL("hung create returned");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::unavailable);
      CHECK(e.hint().find("sbx diagnose") != std::string::npos);
    }
    CHECK(seconds_since(started) < 10);
    auto rms = sbx.calls_of("rm");
    REQUIRE(rms.size() == 1);
    CHECK(args_of(rms[0]) == std::vector<std::string>{"rm", "-f", name});
    CHECK(sbx.sandboxes().empty());
  }
  SUBCASE("the hung create did register it: with rm failing it stays, and corral says so") {
    ::setenv("SBX_STANDIN_FAULT", "rm-fails", 1);
    CHECK_THROWS_AS(p.create(request("lease-1"), fake.host()), Error);
    CHECK(sbx.sandboxes() == std::vector<std::string>{name});
    CHECK(sbx.status(name) == "creating");
    bool warned = false;
    for (const auto& l : fake.logs())
      warned = warned || (l.rfind("warn: ", 0) == 0 && l.find("sbx rm -f " + name) != std::string::npos);
    CHECK(warned);
  }
}

TEST_CASE_FIXTURE(Fixture, "errors: a create that fails after registering is removed; a failed removal is reported") {
  auto p = provider();
  std::string name = sandbox_name("web", "lease-1");
  auto create_fails = [&] {
    try {
      p.create(request("lease-1"), fake.host());
      FAIL("create succeeded");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::unavailable);
      CHECK(std::string(e.what()).find("failed to start") != std::string::npos);
    }
  };
  auto warnings = [&] {
    std::vector<std::string> out;
    for (const auto& l : fake.logs())
      if (l.rfind("warn: ", 0) == 0) out.push_back(l);
    return out;
  };
  SUBCASE("removed") {
    ::setenv("SBX_STANDIN_FAULT", "create-fails-after-register", 1);
    create_fails();
    REQUIRE(sbx.calls_of("rm").size() == 1);
    CHECK(args_of(sbx.calls_of("rm")[0]) == std::vector<std::string>{"rm", "-f", name});
    CHECK(sbx.sandboxes().empty());
    CHECK(warnings().empty());
  }
  SUBCASE("rm fails: still listed, so the user is told how to remove it") {
    ::setenv("SBX_STANDIN_FAULT", "create-fails-after-register,rm-fails", 1);
    create_fails();
    CHECK(sbx.sandboxes() == std::vector<std::string>{name});
    auto w = warnings();
    REQUIRE(w.size() == 1);
    CHECK(w[0].find("sbx rm -f " + name) != std::string::npos);
    CHECK(w[0].find("device or resource busy") != std::string::npos);
  }
  SUBCASE("rm fails because create registered nothing: no warning") {
    ::setenv("SBX_STANDIN_FAULT", "no-virtualization", 1);
    CHECK_THROWS_AS(p.create(request("lease-1"), fake.host()), Error);
    CHECK(sbx.calls_of("rm").size() == 1);
    CHECK(warnings().empty());
  }
}

TEST_CASE_FIXTURE(Fixture, "errors: Ctrl-C during a slow create removes the half-made sandbox") {
  auto p = provider();
  ::setenv("SBX_STANDIN_HANG", "create", 1);
  std::thread ctrl_c([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    fake.cancel();
  });
  try {
    p.create(request("lease-1"), fake.host());
    FAIL("create returned after Ctrl-C");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::cancelled);
  }
  ctrl_c.join();
  CHECK(sbx.calls_of("rm").size() == 1);
  CHECK(sbx.sandboxes().empty());  // the hung create had registered it; rm ran despite Ctrl-C
}

TEST_CASE_FIXTURE(Fixture, "destroy after Ctrl-C still checks and reports truthfully") {
  auto p = provider();
  Sandbox s = p.create(request("lease-1"), fake.host());
  fake.cancel();
  SUBCASE("already gone: rm fails, ls (not interruptible) confirms, success") {
    REQUIRE(sbx.run({"rm", "-f", s.id}).exit_code == 0);
    CHECK_NOTHROW(p.destroy(s, fake.host()));
    CHECK(sbx.calls_of("ls").size() == 1);
  }
  SUBCASE("rm really fails: the sbx error, not 'interrupted'") {
    ::setenv("SBX_STANDIN_FAULT", "rm-fails", 1);
    try {
      p.destroy(s, fake.host());
      FAIL("destroy succeeded though rm failed");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::unavailable);
      CHECK(std::string(e.what()).find("device or resource busy") != std::string::npos);
    }
    CHECK(sbx.sandboxes() == std::vector<std::string>{s.id});
  }
}

TEST_CASE_FIXTURE(Fixture, "errors: missing sbx binary says how to install or point at it") {
  auto p = provider({{"cli", "/nonexistent/bin/sbx"}});
  try {
    p.create(request("lease-1"), fake.host());
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::unavailable);
    CHECK(std::string(e.what()).find("/nonexistent/bin/sbx") != std::string::npos);
    CHECK(e.hint().find("CORRAL_SBX_CLI") != std::string::npos);
  }
  auto checks = p.doctor(fake.host());
  REQUIRE(checks.size() == 1);
  CHECK_FALSE(checks[0].ok);
}

TEST_CASE_FIXTURE(Fixture, "doctor: sbx version and sbx diagnose") {
  auto p = provider();
  auto checks = p.doctor(fake.host());
  REQUIRE(checks.size() == 3);
  for (auto& c : checks) CHECK(c.ok);
  CHECK(checks[1].name == "sbx version");
  CHECK(checks[1].detail.find("standin") != std::string::npos);
  CHECK(checks[2].name == "sbx diagnose");
  ::setenv("SBX_STANDIN_FAULT", "not-logged-in", 1);
  checks = p.doctor(fake.host());
  CHECK_FALSE(checks[2].ok);
  CHECK(checks[2].hint.find("sbx login") != std::string::npos);
  CHECK(sbx.calls_of("version").size() == 2);
  CHECK(sbx.calls_of("diagnose").size() == 2);
}

TEST_CASE("settings are validated before anything runs") {
  auto make = [](StringMap o) { return DockerSandboxProvider(sdk::Options(std::move(o))); };
  CHECK_THROWS_AS(make({{"memory", "lots"}}), Error);
  CHECK_THROWS_AS(make({{"cpus", "-1"}}), Error);
  CHECK_THROWS_AS(make({{"cpus", "two"}}), Error);
  CHECK_THROWS_AS(make({{"workdir", "relative/dir"}}), Error);
  CHECK_THROWS_AS(make({{"cli-timeout", "soon"}}), Error);
  CHECK_NOTHROW(make({{"memory", "1024m"}, {"cpus", "0"}, {"workdir", "/w"}, {"cli-timeout", "90s"}}));
}
