// `corral --provider daytona` end to end against the stand-in Daytona: every behaviour
// issue 9 lists, each test checking afterwards which sandboxes are left and that the API
// key never leaked into output, claims or handles.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <thread>

#include "cli.hpp"
#include "four_shards.hpp"
#include "conformance_run.hpp"
#include "corral/json.hpp"
#include "corral/os/process.hpp"
#include "private_network.hpp"
#include "daytona_cli.hpp"
#include "server.hpp"

using namespace corral;
using namespace corral::test;
using Clock = std::chrono::steady_clock;

namespace {

std::string str(const json::Value& v, const char* key) { return json::get_string(v, key); }

pid_t pid_written(DaytonaCli& t, const std::string& id, const std::string& file) {
  std::ifstream in(t.workdir(id) / file);
  pid_t pid = 0;
  in >> pid;
  return pid;
}

// True once any command runs in any session of the stand-in.
bool command_running(DaytonaCli& t) {
  return t.server.with([](auto& st) {
    for (const auto& [id, sb] : st.sandboxes)
      for (const auto& [sid, session] : sb.sessions)
        for (const auto& [cid, cmd] : session.commands)
          if (!cmd->exit_code && cmd->command.find("started") != std::string::npos) return true;
    return false;
  });
}

}  // namespace

TEST_CASE("providers describe daytona lists its settings with the official SDK's variable names") {
  DaytonaCli t;
  CliResult r = t.run({"providers", "describe", "daytona"});
  REQUIRE(r.exit_code == 0);
  for (const char* s : {"DAYTONA_API_KEY", "DAYTONA_API_URL", "DAYTONA_ORGANIZATION_ID", "DAYTONA_TARGET",
                        "https://app.daytona.io/api", "--daytona-snapshot", "--daytona-image", "--daytona-user",
                        "--daytona-workdir", "--daytona-auto-stop", "--daytona-cpu", "--daytona-memory",
                        "--daytona-disk", "--daytona-create-timeout", "CORRAL_DAYTONA_CREATE_TIMEOUT",
                        "--daytona-request-timeout", "--daytona-start-timeout", "run-session", "url-bridge", "archive-sync", "keep-alive", "cleanup"})
    CHECK_MESSAGE(r.out.find(s) != std::string::npos, s);
}

TEST_CASE("a plain run passes output byte for byte, keeps stdout and stderr apart, returns the exit code and deletes its sandbox") {
  DaytonaCli t;
  CliResult r = t.run_script("cat hello.txt; cat src/main.c >&2; printf 'no newline'; printf 'err tail' >&2; exit 7");
  CHECK(r.exit_code == 7);
  CHECK(r.out == "hello from the workspace\nno newline");
  CHECK(r.err.find("int main(void) { return 0; }\nerr tail") != std::string::npos);
  CHECK(r.err.find("hello from the workspace") == std::string::npos);
  auto h = t.handle();
  CHECK(str(h, "provider") == "daytona");
  CHECK(json::get_bool(h, "kept") == false);
  CHECK(str(h, "cleanupCommand") == "corral stop --provider daytona --id " + str(h, "leaseId"));
  // Created labelled as corral's, with the auto-stop default, then deleted.
  auto bodies = t.server.with([](auto& st) { return st.create_bodies; });
  REQUIRE(bodies.size() == 1);
  json::Document body = json::parse(bodies[0], "create body");
  auto labels = json::get_map(body, "labels");
  CHECK(labels["corral-owner"] == "corral");
  CHECK(labels["corral-lease"] == str(h, "leaseId"));
  CHECK(labels["corral-slug"] == str(h, "slug"));
  CHECK(json::get_int(body, "autoStopInterval") == 60);
  CHECK(t.server.calls("delete") == 1);
  CHECK(t.alive().empty());
}

TEST_CASE("output is followed live: the first line arrives seconds before the command ends") {
  DaytonaCli t;
  Background b = t.cli.start(t.script_args("echo first; sleep 3; echo second"));
  const auto begin = Clock::now();
  std::optional<Clock::duration> first_at;
  while (Clock::now() - begin < std::chrono::seconds(20)) {
    if (!first_at && read_file(b.out).find("first\n") != std::string::npos) first_at = Clock::now() - begin;
    int status = 0;
    if (::waitpid(b.pid, &status, WNOHANG) == b.pid) {
      const auto ended_at = Clock::now() - begin;
      REQUIRE(first_at.has_value());
      CHECK(ended_at - *first_at > std::chrono::milliseconds(2000));
      CHECK(WIFEXITED(status));
      CHECK(WEXITSTATUS(status) == 0);
      CHECK(read_file(b.out) == "first\nsecond\n");
      CHECK(t.alive().empty());
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(b.pid, SIGKILL);
  b.wait();
  FAIL("corral did not finish within 20 s");
}

TEST_CASE("--keep keeps the sandbox; status, url, extend, list, reuse with --id and stop work on it") {
  DaytonaCli t;
  CliResult r = t.run_script("cat hello.txt; echo made > made.txt", {"--keep"});
  REQUIRE(r.exit_code == 0);
  auto h = t.handle();
  const std::string lease = str(h, "leaseId"), slug = str(h, "slug"), id = str(h, "sandboxId");
  CHECK(json::get_bool(h, "kept"));
  REQUIRE(t.alive() == std::vector<std::string>{id});
  // Finished commands leave no process session behind in a kept sandbox.
  CHECK(t.server.with([&](auto& st) { return st.sandboxes.at(id).sessions.size(); }) == 0);

  CliResult status = t.run({"status", "--id", lease, "--json"});
  REQUIRE(status.exit_code == 0);
  json::Document shown = json::parse(status.out, "status");
  CHECK(json::get_string(shown["sandbox"], "state") == "running");
  CHECK(json::get_map(shown["sandbox"], "details").at("provider-state") == "started");

  CliResult url = t.run({"url", "--id", lease, "--port", "3000"});
  CHECK(url.exit_code == 0);
  CHECK(url.out == "https://3000-" + id + ".proxy.standin.daytona.test\n");
  auto tokens = t.server.with([](auto& st) { return st.issued_tokens; });
  REQUIRE(tokens.size() == 1);
  CHECK(url.err.find("X-Daytona-Preview-Token: " + tokens[0]) != std::string::npos);

  CliResult ext = t.run({"extend", "--id", lease, "--by", "3h"});
  CHECK(ext.exit_code == 0);
  CHECK(t.server.with([&](auto& st) { return st.sandboxes.at(id).auto_stop_minutes; }) == 180);

  CliResult remote = t.run({"list", "--remote", "--provider", "daytona", "--json"});
  CHECK(remote.exit_code == 0);
  CHECK(remote.out.find(id) != std::string::npos);
  auto filters = t.server.with([](auto& st) { return st.list_label_filters; });
  REQUIRE_FALSE(filters.empty());
  CHECK(json::get_string(json::parse(filters.back(), "filter"), "corral-owner") == "corral");

  // The workspace changed: a reuse syncs it again over the old copy (made.txt stays) and
  // never deletes the sandbox, even when the command fails.
  t.cli.root().write("work/hello.txt", "changed\n");
  CliResult again = t.run_script("cat hello.txt made.txt; exit 1", {"--id", slug});
  CHECK(again.exit_code == 1);
  CHECK(again.out == "changed\nmade\n");
  auto h2 = t.handle();
  CHECK(json::get_bool(h2, "reused"));
  CHECK(str(h2, "sandboxId") == id);
  CHECK(t.alive() == std::vector<std::string>{id});

  CliResult stop = t.run({"stop", "--id", lease});
  CHECK(stop.exit_code == 0);
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("a public preview URL needs no token and gets no warning") {
  DaytonaCli t;
  REQUIRE(t.run_script("true", {"--keep"}).exit_code == 0);
  auto h = t.handle();
  t.fault([](auto& f) { f.public_preview = true; });
  CliResult url = t.run({"url", "--id", str(h, "leaseId"), "--port", "8080"});
  CHECK(url.exit_code == 0);
  CHECK(url.err.find("X-Daytona-Preview-Token") == std::string::npos);
  CHECK(t.run({"stop", "--id", str(h, "leaseId")}).exit_code == 0);
  CHECK(t.alive().empty());
}

TEST_CASE("a kept sandbox that Daytona stopped is started again on reuse") {
  DaytonaCli t;
  REQUIRE(t.run_script("echo one > state.txt", {"--keep"}).exit_code == 0);
  auto h = t.handle();
  const std::string id = str(h, "sandboxId");
  t.server.with([&](auto& st) { return st.sandboxes.at(id).state = "stopped"; });  // auto-stopped
  CliResult r = t.run_script("cat state.txt", {"--id", str(h, "leaseId")});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "one\n");
  CHECK(t.server.calls("start") == 1);
  CHECK(t.server.with([&](auto& st) { return st.sandboxes.at(id).state; }) == "started");
  CHECK(t.run({"stop", "--id", str(h, "leaseId")}).exit_code == 0);
  CHECK(t.alive().empty());
}

TEST_CASE("a kept sandbox deleted behind corral's back says so, and the handle is still written") {
  DaytonaCli t;
  REQUIRE(t.run_script("true", {"--keep"}).exit_code == 0);
  auto h = t.handle();
  const std::string lease = str(h, "leaseId"), id = str(h, "sandboxId");
  t.server.with([&](auto& st) {
    st.remove(id);
    return 0;
  });
  std::filesystem::remove(t.handle_path());
  CliResult r = t.run_script("true", {"--id", lease});
  CHECK(r.exit_code == 66);
  CHECK(r.err.find(id) != std::string::npos);
  auto h2 = t.handle();
  CHECK(str(h2, "leaseId") == lease);
  t.run({"stop", "--id", lease});
  CHECK(t.alive().empty());
}

TEST_CASE("quota and rate limits map to corral's exit codes") {
  DaytonaCli t;
  SUBCASE("quota refusal (400)") {
    t.fault([](auto& f) { f.quota_message = "Total CPU limit exceeded. Maximum allowed: 4"; });
    CliResult r = t.run_script("true");
    CHECK(r.exit_code == 75);
    CHECK(r.err.find("Total CPU limit exceeded") != std::string::npos);
  }
  SUBCASE("429 on create is not sent again by the plugin; corral asks again once every corral waited") {
    t.fault([](auto& f) {
      f.rate_limit_route = "create";
      f.rate_limit_count = 1;
      f.retry_after = "1";
    });
    CliResult r = t.run_script("echo ok", {"--progress", "json"});
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out == "ok\n");
    CHECK(r.err.find(R"("phase":"slot-wait","state":"start","provider":"daytona","reason":"backoff")") !=
          std::string::npos);
    CHECK(t.server.calls("create") == 2);
  }
  SUBCASE("429 on a read is retried with backoff") {
    t.fault([](auto& f) {
      f.rate_limit_route = "delete";
      f.rate_limit_count = 2;
    });
    CliResult r = t.run_script("echo ok");
    CHECK(r.exit_code == 0);
    CHECK(r.out == "ok\n");
    CHECK(t.server.calls("delete") == 3);
  }
  SUBCASE("429 on starting a command is not retried") {
    t.fault([](auto& f) {
      f.rate_limit_route = "exec";
      f.rate_limit_count = 5;
    });
    CliResult r = t.run_script("echo never");
    CHECK(r.exit_code == 75);
    CHECK(r.out.empty());
    CHECK(t.server.with([](auto& st) { return st.faults.rate_limit_count; }) == 4);  // one refusal only
  }
  CHECK(t.alive().empty());
}

TEST_CASE("a sandbox that ends in error or build_failed fails at once with Daytona's reason and is deleted") {
  DaytonaCli t;
  SUBCASE("error") { t.fault([](auto& f) { f.fail_state = "error"; }); }
  SUBCASE("build_failed") { t.fault([](auto& f) { f.fail_state = "build_failed"; }); }
  auto begin = Clock::now();
  CliResult r = t.run_script("echo never");
  CHECK(r.exit_code == 69);
  CHECK(r.out.empty());
  CHECK(r.err.find("failed to start") != std::string::npos);
  CHECK(r.err.find("the stand-in was told to fail this sandbox") != std::string::npos);
  CHECK(Clock::now() - begin < std::chrono::seconds(10));
  CHECK(t.alive().empty());
}

TEST_CASE("a slow start is waited for with a bounded, backed-off poll") {
  DaytonaCli t;
  t.fault([](auto& f) { f.start_delay_ms = 2500; });
  CliResult r = t.run_script("echo ready");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "ready\n");
  const int polls = t.server.calls("get");
  CHECK(polls >= 3);
  CHECK(polls <= 15);  // backed off: not a poll every 100 ms for 2.5 s
  CHECK(t.alive().empty());
}

TEST_CASE("a log stream that drops mid-command is followed again without losing or repeating output") {
  DaytonaCli t;
  t.fault([](auto& f) { f.drop_log_streams = 3; });
  CliResult r = t.run_script("for i in 1 2 3 4 5; do echo line $i; echo err $i >&2; sleep 0.2; done; exit 4");
  CHECK(r.exit_code == 4);
  CHECK(r.out == "line 1\nline 2\nline 3\nline 4\nline 5\n");
  CHECK(r.err.find("err 1\nerr 2\nerr 3\nerr 4\nerr 5\n") != std::string::npos);
  CHECK(t.alive().empty());
}

TEST_CASE("a log stream that keeps dropping fails with unavailable and stops the command") {
  DaytonaCli t;
  t.fault([](auto& f) { f.drop_log_streams = 100; });
  CliResult r = t.run_script("echo started; sleep 60");
  CHECK(r.exit_code == 69);
  // In the words every provider uses for a stream cut mid-command, with what to do.
  CHECK_MESSAGE(r.err.find("run the command: the connection to the sandbox was lost mid-command (the output "
                           "stream broke 6 times") != std::string::npos,
                r.err);
  CHECK(r.err.find("hint: what arrived before the break was delivered") != std::string::npos);
  CHECK(t.alive().empty());
}

TEST_CASE("prefixes split across one-byte WebSocket messages still separate the streams") {
  DaytonaCli t;
  t.fault([](auto& f) { f.max_frame_bytes = 1; });
  CliResult r = t.run_script("echo out; echo err >&2; echo out2");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "out\nout2\n");
  CHECK(r.err.find("err\n") != std::string::npos);
  CHECK(r.err.find("out") == std::string::npos);
  CHECK(t.alive().empty());
}

TEST_CASE("large output streams through unchanged") {
  DaytonaCli t;
  CliResult r = t.run_script("seq 1 200000");
  CHECK(r.exit_code == 0);
  CHECK(r.out.size() == 1288895);
  CHECK(r.out.substr(r.out.size() - 7) == "200000\n");
  CHECK(t.alive().empty());
}

TEST_CASE("binary output arrives byte for byte: every byte value, NULs and bytes that look like log prefixes") {
  // Daytona's log drops NUL bytes and reads 01 01 01 / 02 02 02 in output as stream
  // prefixes; the wrapper's encoding must carry them all, on both streams.
  std::string blob;
  for (int i = 0; i < 256; ++i) blob += static_cast<char>(i);
  const char lookalikes[] = "\0\0\0\x01\x01\x01stdout?\x02\x02\x02stderr?\n\0";
  blob.append(lookalikes, sizeof lookalikes - 1);
  std::uint32_t x = 2463534242u;
  for (int i = 0; i < 100000; ++i) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    blob += static_cast<char>(x & 0xff);
  }
  blob += std::string("\xff\xfe\0", 3);  // ends without a newline
  DaytonaCli t;
  t.cli.root().write("work/blob.bin", blob);
  CliResult r = t.run_script("cat blob.bin; cat blob.bin >&2; exit 3");
  CHECK(r.exit_code == 3);
  CHECK(r.out.size() == blob.size());
  CHECK(r.out == blob);
  CHECK(r.err.find(blob) != std::string::npos);
  CHECK(t.alive().empty());
}

TEST_CASE("only the forwarded environment reaches the command, and never through the command text") {
  DaytonaCli t;
  t.cli.env["CORRAL_TEST_FORWARDED"] = "it's a \"secret\" $value";
  t.cli.env["CORRAL_TEST_NOT_FORWARDED"] = "hidden";
  CliResult r = t.run_script("printf '%s|%s' \"$CORRAL_TEST_FORWARDED\" \"${CORRAL_TEST_NOT_FORWARDED-unset}\"",
                             {"--env", "CORRAL_TEST_FORWARDED"});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "it's a \"secret\" $value|unset");
  auto texts = t.server.with([](auto& st) { return st.exec_commands; });
  for (const auto& text : texts) CHECK(text.find("secret") == std::string::npos);
  CHECK(r.err.find(t.server.api_key()) == std::string::npos);
  CHECK(t.alive().empty());
}

TEST_CASE("the command runs in the sandbox's copy of the folder corral was started in") {
  DaytonaCli t;
  // A git checkout: the workspace is its top level, wherever corral starts.
  auto git = os::capture_process({{"git", "init", "-q"}, std::nullopt, t.cli.workspace().string()}, 30);
  REQUIRE(git.exit_code == 0);
  CliResult r = t.run({"run", "--provider", "daytona", "--", "sh", "-c", "pwd; ls"},
                      (t.cli.workspace() / "src").string());
  CHECK(r.exit_code == 0);
  INFO(r.out, r.err);
  CHECK(r.out.find("/home/daytona/workspace/src\nmain.c\n") != std::string::npos);
  CHECK(t.alive().empty());
}

TEST_CASE("--timeout stops the remote command with its children and exits 124") {
  DaytonaCli t;
  auto begin = Clock::now();
  CliResult r = t.run_script("sleep 60 & echo $! > bg.pid; wait", {"--timeout", "1s", "--keep"});
  CHECK(r.exit_code == 124);
  CHECK(Clock::now() - begin < std::chrono::seconds(15));
  auto h = t.handle();
  const pid_t bg = pid_written(t, str(h, "sandboxId"), "bg.pid");
  REQUIRE(bg > 0);
  CHECK(gone_within(bg, std::chrono::seconds(5)));  // the sandbox was kept: only deleting the session can have ended it
  CHECK(t.run({"stop", "--id", str(h, "leaseId")}).exit_code == 0);
  CHECK(t.alive().empty());
}

namespace {

// Starts a long run in the background, waits until its command runs in the stand-in,
// then sends SIGINT like Ctrl-C; returns corral's exit code.
int interrupt_run(DaytonaCli& t, std::vector<std::string> flags,
                  const std::string& script = "echo started; sleep 60") {
  Background b = t.cli.start(t.script_args(script, std::move(flags)));
  for (int i = 0; i < 200 && !command_running(t); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(command_running(t));
  for (int i = 0; i < 100 && read_file(b.out).empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ::kill(b.pid, SIGINT);
  int code = b.wait(std::chrono::seconds(30));
  t.seen.push_back(read_file(b.out));
  t.seen.push_back(read_file(b.err));
  CHECK(read_file(b.out) == "started\n");
  return code;
}

}  // namespace

TEST_CASE("Ctrl-C stops the remote command, then applies the keep rules") {
  DaytonaCli t;
  SUBCASE("plain run: deleted") {
    CHECK(interrupt_run(t, {}) == 130);
    CHECK(t.alive().empty());
  }
  SUBCASE("--keep: kept, with its background child stopped too") {
    CHECK(interrupt_run(t, {"--keep"}, "sleep 60 & echo $! > bg.pid; echo started; wait") == 130);
    auto h = t.handle();
    CHECK(json::get_bool(h, "kept"));
    const std::string id = str(h, "sandboxId");
    REQUIRE(t.alive() == std::vector<std::string>{id});
    const pid_t bg = pid_written(t, id, "bg.pid");
    REQUIRE(bg > 0);
    CHECK(gone_within(bg, std::chrono::seconds(5)));
    CHECK(t.run({"stop", "--id", str(h, "leaseId")}).exit_code == 0);
    CHECK(t.alive().empty());
  }
}

TEST_CASE("what is piped into corral is the command's stdin in the sandbox, to its end; a command that stops reading ends the run") {
  DaytonaCli t;
  auto with_input = [&](const std::string& script, const std::string& input, std::vector<std::string> flags = {}) {
    CliResult r = t.cli.run_with_input(t.script_args(script, std::move(flags)), input);
    t.seen.push_back(r.out.size() < 4096 ? r.out : "");
    t.seen.push_back(r.err);
    return r;
  };
  CliResult lines = with_input("cat", "a\nb\n");
  CHECK_MESSAGE(lines.exit_code == 0, lines.err);
  CHECK(lines.out == "a\nb\n");  // not echoed into the output, and its end reached
  // More than the pipes and one input call hold, every byte value and lines that look like
  // the input's own end line: all of it arrives, and its end.
  const std::string big = random_bytes(512 << 10) + "\n.\n-%s\\\n";
  CliResult echoed = with_input("cat", big);
  CHECK_MESSAGE(echoed.exit_code == 0, echoed.err);
  CHECK(echoed.out.size() == big.size());
  CHECK((echoed.out == big));
  // head stops reading after 5 bytes: the run ends by its exit, nothing waits for the rest.
  CliResult head = with_input("head -c 5; echo done", big);
  CHECK_MESSAGE(head.exit_code == 0, head.err);
  CHECK(head.out == big.substr(0, 5) + "done\n");
  CHECK(head.err.find("could not pass the input") == std::string::npos);
  // An empty pipe is an empty stdin; --no-stdin closes it.
  CHECK(with_input("wc -c", "").out == "0\n");
  CHECK(with_input("wc -c", "abc", {"--no-stdin"}).out == "0\n");
  auto calls = t.server.with([](auto& st) { return st.calls; });
  CHECK(calls["toolbox POST process/session/*/command/*/input"] > 0);
  CHECK(t.alive().empty());
}

TEST_CASE("Ctrl-C and SIGTERM reach the command in the sandbox as that signal: its trap runs and its exit code is kept") {
  DaytonaCli t;
  int sig = SIGINT;
  std::string name = "INT";
  SUBCASE("SIGINT") {}
  SUBCASE("SIGTERM") {
    sig = SIGTERM;
    name = "TERM";
  }
  Background b = t.cli.start(t.script_args(
      "trap 'echo got INT; exit 3' INT; trap 'echo got TERM; exit 4' TERM; echo started; while :; do sleep 0.1; done"));
  for (int i = 0; i < 300 && read_file(b.out).empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(read_file(b.out) == "started\n");
  ::kill(b.pid, sig);
  CHECK(b.wait(std::chrono::seconds(60)) == 130);
  CHECK(read_file(b.out) == "started\ngot " + name + "\n");  // after its trap, the output still arrives
  const std::string err = read_file(b.err);
  t.seen.push_back(err);
  CHECK(err.find("--stop-timeout") == std::string::npos);  // ended by its trap, not killed
  auto h = t.handle();
  CHECK(h["exitCode"].GetInt() == (sig == SIGINT ? 3 : 4));
  CHECK(t.alive().empty());
}

TEST_CASE("a command in the sandbox that ignores its signal is killed once --stop-timeout has passed") {
  DaytonaCli t;
  Background b = t.cli.start(
      t.script_args("trap '' INT; sleep 60 & echo $! > bg.pid; echo started; wait", {"--stop-timeout", "1s", "--keep"}));
  for (int i = 0; i < 300 && read_file(b.out).empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(read_file(b.out) == "started\n");
  ::kill(b.pid, SIGINT);
  CHECK(b.wait(std::chrono::seconds(60)) == 130);
  const std::string err = read_file(b.err);
  t.seen.push_back(err);
  CHECK(err.find("--stop-timeout") != std::string::npos);
  auto h = t.handle();
  const std::string id = str(h, "sandboxId");
  REQUIRE(t.alive() == std::vector<std::string>{id});
  const pid_t bg = pid_written(t, id, "bg.pid");
  REQUIRE(bg > 0);
  CHECK(gone_within(bg, std::chrono::seconds(10)));  // kept: only the kill in the sandbox can have ended it
  CHECK(t.run({"stop", "--id", str(h, "leaseId")}).exit_code == 0);
  CHECK(t.alive().empty());
}

TEST_CASE("snapshot, region, organization and resources reach the API as the SDK sends them") {
  DaytonaCli t;
  t.cli.env["DAYTONA_ORGANIZATION_ID"] = "org-123";
  t.cli.env["DAYTONA_TARGET"] = "eu";
  CliResult r = t.run_script("true", {"--daytona-snapshot", "my-snap", "--daytona-cpu", "2", "--daytona-memory", "4",
                                      "--daytona-disk", "8", "--daytona-auto-stop", "0"});
  CHECK(r.exit_code == 0);
  auto bodies = t.server.with([](auto& st) { return st.create_bodies; });
  REQUIRE(bodies.size() == 1);
  json::Document body = json::parse(bodies[0], "create body");
  CHECK(json::get_string(body, "snapshot") == "my-snap");
  CHECK(json::get_string(body, "target") == "eu");
  CHECK(json::get_int(body, "cpu") == 2);
  CHECK(json::get_int(body, "memory") == 4);
  CHECK(json::get_int(body, "disk") == 8);
  CHECK(json::get_int(body, "autoStopInterval") == 0);
  auto orgs = t.server.with([](auto& st) { return st.header_values["X-Daytona-Organization-ID"]; });
  REQUIRE_FALSE(orgs.empty());
  CHECK(std::all_of(orgs.begin(), orgs.end(), [](const std::string& o) { return o == "org-123"; }));
  CHECK(t.alive().empty());

  CliResult missing = t.run_script("true", {"--daytona-snapshot", "missing-snapshot"});
  CHECK(missing.exit_code == 66);
  CHECK(missing.err.find("missing-snapshot") != std::string::npos);
  CHECK(t.alive().empty());
}

TEST_CASE("stop --orphans removes corral sandboxes no local lease claims, and only those; listing pages") {
  DaytonaCli t;
  t.server.with([](auto& st) { return st.page_size = 2; });  // several pages
  REQUIRE(t.run_script("true", {"--keep"}).exit_code == 0);
  const std::string kept = str(t.handle(), "sandboxId");
  std::vector<std::string> orphans, foreign;
  t.server.with([&](auto& st) {
    // Orphans: corral's, from this host (the label core puts on every sandbox), but no
    // local lease claims them. Foreign: not corral's, or another host's.
    const std::string host = st.sandboxes.at(kept).labels.at("corral-host");
    auto& other_host = st.add_sandbox();
    other_host.state = "started";
    other_host.labels = {{"corral-owner", "corral"}, {"corral-lease", "x"}, {"corral-host", "another-host"}};
    foreign.push_back(other_host.id);
    for (int i = 0; i < 3; ++i) {
      auto& o = st.add_sandbox();
      o.state = "started";
      o.labels = {{"corral-owner", "corral"}, {"corral-lease", "elsewhere" + std::to_string(i)},
                  {"corral-slug", "lost"}, {"corral-host", host}};
      orphans.push_back(o.id);
      auto& f = st.add_sandbox();
      f.state = "started";
      foreign.push_back(f.id);
    }
    return 0;
  });
  CliResult r = t.run({"stop", "--orphans", "--provider", "daytona"});
  INFO(r.out, r.err);
  CHECK(r.exit_code == 0);
  auto left = t.alive();
  for (const auto& o : orphans) CHECK(std::find(left.begin(), left.end(), o) == left.end());
  CHECK(std::find(left.begin(), left.end(), kept) != left.end());
  for (const auto& f : foreign) CHECK(std::find(left.begin(), left.end(), f) != left.end());
  t.run({"stop", "--all"});
  left = t.alive();
  std::sort(left.begin(), left.end());
  std::sort(foreign.begin(), foreign.end());
  CHECK(left == foreign);
}

TEST_CASE("doctor checks the key and the API") {
  DaytonaCli t;
  CliResult ok = t.run({"doctor", "--provider", "daytona"});
  CHECK(ok.out.find("[ok] Daytona API key") != std::string::npos);
  CHECK(ok.out.find("[ok] Daytona API") != std::string::npos);
  t.fault([](auto& f) { f.reject_api_key = true; });
  CliResult bad = t.run({"doctor", "--provider", "daytona"});
  CHECK(bad.exit_code != 0);
  CHECK(bad.out.find("[FAIL] Daytona API") != std::string::npos);
  CHECK((bad.out + bad.err).find("DAYTONA_API_KEY") != std::string::npos);
}

TEST_CASE("a re-sync removes files deleted locally and keeps what the sandbox made") {
  DaytonaCli t;
  t.cli.root().write("work/old/gone.txt", "soon gone\n");
  REQUIRE(t.run_script("echo made > made.txt", {"--keep"}).exit_code == 0);
  auto h = t.handle();
  const std::string id = str(h, "sandboxId");
  REQUIRE(std::filesystem::exists(t.workdir(id) / "old/gone.txt"));
  std::filesystem::remove_all(t.cli.workspace() / "old");
  std::filesystem::remove(t.cli.workspace() / "src/main.c");
  CliResult r = t.run_script("ls -R", {"--id", str(h, "leaseId")});
  CHECK(r.exit_code == 0);
  INFO(r.out);
  CHECK(r.out.find("gone.txt") == std::string::npos);
  CHECK(r.out.find("main.c") == std::string::npos);
  CHECK(r.out.find("made.txt") != std::string::npos);
  CHECK(r.out.find("hello.txt") != std::string::npos);
  CHECK(t.run({"stop", "--id", str(h, "leaseId")}).exit_code == 0);
  CHECK(t.alive().empty());
}

TEST_CASE("daytona passes the conformance kit against the stand-in, no sandbox left and no key shown") {
  DaytonaCli t;
  auto r = conformance_recorded(t.cli, "daytona");
  t.seen.push_back(r.cli.out);
  t.seen.push_back(r.cli.err);
  check_passed(r, {"argv", "keep-reuse", "sync-deletions", "url", "extend", "listing", "interrupt", "output-large",
                   "workdir", "network-none", "network-allowlist", "destroy-twice", "pause-resume", "fork",
                   "shards-from", "stdin", "signals"});
}

TEST_CASE("a sandbox whose toolbox URL is refused after it started is deleted, not left behind") {
  DaytonaCli t;
  // Plain http to a non-loopback host would carry the API key unencrypted: refused.
  t.server.with([](auto& st) {
    st.toolbox_url = "http://toolbox.example.com";
    return 0;
  });
  CliResult r = t.run_script("true");
  CHECK(r.exit_code == 64);
  CHECK(r.err.find("credentials would travel unencrypted") != std::string::npos);
  CHECK(t.server.calls("create") == 1);
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("--network none blocks all of the sandbox's network, and its commands reach nothing") {
  DaytonaCli t;
  LoopbackListener listener;
  auto open = t.run_script(listener.probe_script());
  CHECK_MESSAGE(open.exit_code == 0, open.err);
  CHECK(open.out == "reached\n");
  auto body = json::parse(t.server.with([](auto& st) { return st.create_bodies.back(); }), "create");
  CHECK_FALSE(body.HasMember("networkBlockAll"));  // open: the organization's default, nothing sent
  CHECK_FALSE(body.HasMember("networkAllowList"));

  auto cut = t.run_script(listener.probe_script(), {"--network", "none"});
  CHECK_MESSAGE(cut.exit_code == 0, cut.err);
  CHECK(cut.out == "unreachable\n");
  body = json::parse(t.server.with([](auto& st) { return st.create_bodies.back(); }), "create");
  REQUIRE(body.HasMember("networkBlockAll"));
  CHECK(body["networkBlockAll"].GetBool());
  CHECK_FALSE(body.HasMember("networkAllowList"));
  CHECK(str(t.handle(), "network") == "none");
  CHECK(t.alive().empty());
}

TEST_CASE("--network allow: sends addresses and CIDRs in networkAllowList and domains in domainAllowList") {
  DaytonaCli t;
  auto last_create = [&] { return json::parse(t.server.with([](auto& st) { return st.create_bodies.back(); }), "create"); };
  SUBCASE("addresses and domains together") {
    auto r = t.run_script("echo ran", {"--keep", "--network", "allow:pypi.org,10.0.0.0/8,*.github.com,192.0.2.7"});
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out == "ran\n");
    auto body = last_create();
    CHECK(str(body, "networkAllowList") == "10.0.0.0/8,192.0.2.7/32");
    CHECK(str(body, "domainAllowList") == "pypi.org,*.github.com");
    CHECK_FALSE(body.HasMember("networkBlockAll"));
    // The stand-in took both as api.json defines them and reports them back on the sandbox.
    const std::string id = str(t.handle(), "sandboxId");
    CHECK(t.server.with([&](auto& st) { return st.sandboxes.at(id).domain_allow_list; }) == "pypi.org,*.github.com");
    CHECK(t.server.with([&](auto& st) { return st.sandboxes.at(id).network_allow_list; }) == "10.0.0.0/8,192.0.2.7/32");
    CHECK(str(t.handle(), "network") == "allow:pypi.org,10.0.0.0/8,*.github.com,192.0.2.7");
    CHECK(t.run({"stop", "--id", str(t.handle(), "leaseId")}).exit_code == 0);
  }
  SUBCASE("addresses only: no domainAllowList") {
    auto r = t.run_script("true", {"--network", "allow:10.0.0.0/8,192.0.2.7,2001:db8::/32"});
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    auto body = last_create();
    CHECK(str(body, "networkAllowList") == "10.0.0.0/8,192.0.2.7/32,2001:db8::/32");
    CHECK_FALSE(body.HasMember("domainAllowList"));
  }
  SUBCASE("domains only: no networkAllowList") {
    auto r = t.run_script("true", {"--network", "allow:pypi.org"});
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    auto body = last_create();
    CHECK(str(body, "domainAllowList") == "pypi.org");
    CHECK_FALSE(body.HasMember("networkAllowList"));
  }
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("the stand-in refuses allow lists api.json does not allow: an address in domainAllowList, a domain in networkAllowList") {
  DaytonaCli t;
  httplib::Client api(t.server.api_origin());
  const httplib::Headers auth = {{"Authorization", "Bearer " + t.server.api_key()}};
  for (const char* body : {R"({"domainAllowList":"pypi.org,10.0.0.1"})", R"({"domainAllowList":"a..b"})",
                           R"({"domainAllowList":"http://pypi.org"})", R"({"networkAllowList":"pypi.org"})",
                           R"({"domainAllowList":["pypi.org"]})"}) {
    CAPTURE(body);
    auto res = api.Post("/api/sandbox", auth, body, "application/json");
    REQUIRE(res);
    CHECK(res->status == 400);
  }
  auto ok = api.Post("/api/sandbox", auth, R"({"domainAllowList":"example.com,*.daytona.io"})", "application/json");
  REQUIRE(ok);
  CHECK(ok->status == 200);
  CHECK(json::get_string(json::parse(ok->body, "sandbox"), "domainAllowList") == "example.com,*.daytona.io");
  CHECK(t.alive().size() == 1);  // only the valid create made a sandbox
}

TEST_CASE("four shards on Daytona: each its own sandbox, index and count; all deleted afterwards") {
  DaytonaCli t;
  CliResult r = t.run_script(corral::test::four_shard_script(2, 5), {"--shards", "4"});
  std::string text = read_file(t.handle_path());
  t.seen.push_back(text);
  corral::test::check_four_shards(r, text, 2, 5);
  CHECK(t.server.with([](auto& st) { return st.create_bodies.size(); }) == 4u);
  CHECK(t.server.calls("delete") == 4);
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}

namespace {

// A call safe to repeat, and the corral command that reaches it on a kept lease.
struct ReadCall {
  const char* route;  // as the stand-in counts it
  int calls;          // how often the command makes that call when nothing fails
};
// A reuse after a command sends the tree again: its unpack opens a session, then the
// command opens its own.
const ReadCall kReadCalls[] = {{"get", 1},         {"list", 1},    {"start", 1}, {"autostop", 1},
                               {"preview-url", 1}, {"toolbox-proxy-url", 1}, {"session", 2}};

// The stand-in's count of `route`, toolbox routes included.
int calls_of(DaytonaCli& t, const std::string& route) {
  return t.server.calls(route == "session" ? "toolbox POST process/session" : route);
}

// Runs the corral command that makes `route`'s call on the kept `lease` (a reuse for the
// toolbox routes and start, with the sandbox stopped first for start).
CliResult reach(DaytonaCli& t, const std::string& route, const std::string& lease, const std::string& id) {
  if (route == "get") return t.run({"status", "--id", lease});
  if (route == "list") return t.run({"list", "--remote", "--provider", "daytona", "--json"});
  if (route == "autostop") return t.run({"extend", "--id", lease, "--by", "1h"});
  if (route == "preview-url") return t.run({"url", "--id", lease, "--port", "3000"});
  if (route == "start") t.server.with([&](auto& st) { return st.sandboxes.at(id).state = "stopped"; });
  t.fault([&](auto& f) { f.no_toolbox_proxy_url = route == "toolbox-proxy-url"; });
  return t.run_script("echo ok", {"--id", lease});
}

// Arms `times` answers of `status` (with `retry_after`) on `route`.
void fail_next(DaytonaCli& t, const std::string& route, int status, int times, const std::string& retry_after = "0") {
  t.fault([&](auto& f) {
    f.fail_route = route;
    f.fail_status = status;
    f.fail_times = times;
    f.retry_after = retry_after;
  });
}

int fails_left(DaytonaCli& t) {
  return t.server.with([](auto& st) { return st.faults.fail_times; });
}

// A kept sandbox to aim read faults at: {lease, sandbox id}.
std::pair<std::string, std::string> kept_lease(DaytonaCli& t) {
  REQUIRE(t.run_script("true", {"--keep"}).exit_code == 0);
  auto h = t.handle();
  return {str(h, "leaseId"), str(h, "sandboxId")};
}

// Stops the lease and checks that nothing is left at the stand-in or in the claims.
void stop_and_check_empty(DaytonaCli& t, const std::string& lease) {
  t.fault([](auto& f) { f = daytona::standin::Faults{}; });
  CHECK(t.run({"stop", "--id", lease}).exit_code == 0);
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}

}  // namespace

namespace {

// Fails each call safe to repeat twice with status_of(its index), then checks corral
// retried it to success (exactly two calls more) and the lease still ends cleanly.
void check_retried_then_succeeds(const std::function<int(int)>& status_of) {
  DaytonaCli t;
  auto [lease, id] = kept_lease(t);
  int n = 0;
  for (const ReadCall& c : kReadCalls) {
    const int status = status_of(n++);
    const std::string route = c.route;
    CAPTURE(route);
    CAPTURE(status);
    const int before = calls_of(t, c.route);
    fail_next(t, c.route, status, 2);
    CliResult r = reach(t, c.route, lease, id);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(fails_left(t) == 0);
    CHECK(calls_of(t, c.route) - before == c.calls + 2);
  }
  CHECK(t.alive() == std::vector<std::string>{id});
  stop_and_check_empty(t, lease);
}

}  // namespace

TEST_CASE("429 on every call safe to repeat is retried after its Retry-After, then succeeds") {
  check_retried_then_succeeds([](int) { return 429; });
}

TEST_CASE("502, 503 and 504 on every call safe to repeat are retried, then succeed") {
  check_retried_then_succeeds([](int n) { return 502 + n % 3; });
}

TEST_CASE("500 on any call safe to repeat is not retried: exit 69 after one call, the lease still usable") {
  DaytonaCli t;
  auto [lease, id] = kept_lease(t);
  for (const ReadCall& c : kReadCalls) {
    const std::string route = c.route;
    CAPTURE(route);
    const int before = calls_of(t, c.route);
    fail_next(t, c.route, 500, 5);
    CliResult r = reach(t, c.route, lease, id);
    INFO(r.err);
    CHECK(r.exit_code == 69);
    CHECK(r.err.find("HTTP 500") != std::string::npos);
    CHECK(fails_left(t) == 4);
    CHECK(calls_of(t, c.route) - before == 1);
  }
  t.fault([](auto& f) { f = daytona::standin::Faults{}; });
  CHECK(reach(t, "get", lease, id).exit_code == 0);
  CHECK(t.alive() == std::vector<std::string>{id});
  stop_and_check_empty(t, lease);
}

TEST_CASE("a 500 on pausing a kept sandbox is sent again (a pause is safe to repeat, one left undone costs money)") {
  DaytonaCli t;
  auto [lease, id] = kept_lease(t);
  // A container sandbox pauses by Daytona's stop.
  fail_next(t, "stop", 500, 1);
  CliResult r = t.run({"pause", "--id", lease});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(fails_left(t) == 0);
  CHECK(t.server.calls("stop") == 2);
  const std::string sandbox = id;  // a structured binding cannot be captured (clang 14)
  CHECK(t.server.with([&](auto& st) { return st.sandboxes.at(sandbox).state; }) == "stopped");
  stop_and_check_empty(t, lease);
}

TEST_CASE("5xx during a plain run: create and exec are sent once, reads and deletes are retried within bounds") {
  DaytonaCli t;
  SUBCASE("503 on create: one create, no sandbox") {
    fail_next(t, "create", 503, 5);
    CliResult r = t.run_script("echo never");
    CHECK(r.exit_code == 69);
    CHECK(r.err.find("HTTP 503") != std::string::npos);
    CHECK(t.server.calls("create") == 1);
  }
  SUBCASE("500 on create: one create, no sandbox") {
    fail_next(t, "create", 500, 5);
    CHECK(t.run_script("echo never").exit_code == 69);
    CHECK(t.server.calls("create") == 1);
  }
  SUBCASE("503 on starting a command: sent once, the command never runs, the sandbox is deleted") {
    fail_next(t, "exec", 503, 5);
    CliResult r = t.run_script("echo never");
    CHECK(r.exit_code == 69);
    CHECK(r.out.empty());
    CHECK(fails_left(t) == 4);
    CHECK(t.server.with([](auto& st) { return st.exec_commands.size(); }) == 0u);
  }
  SUBCASE("503 on the workspace upload: sent once, the sandbox is deleted") {
    fail_next(t, "upload", 503, 5);
    CliResult r = t.run_script("echo never");
    CHECK(r.exit_code == 69);
    CHECK(r.out.empty());
    CHECK(fails_left(t) == 4);
  }
  SUBCASE("500 while waiting for the sandbox to start: one get, the sandbox is deleted") {
    fail_next(t, "get", 500, 5);
    CHECK(t.run_script("echo never").exit_code == 69);
    CHECK(t.server.calls("get") == 1);
    CHECK(t.server.calls("delete") == 1);
  }
  SUBCASE("502 twice on get and 504 twice on delete: retried, the run succeeds") {
    fail_next(t, "get", 502, 2);
    CliResult r = t.run_script("echo ok");
    CHECK(r.exit_code == 0);
    CHECK(r.out == "ok\n");
    CHECK(fails_left(t) == 0);
    fail_next(t, "delete", 504, 2);
    CHECK(t.run_script("echo ok").exit_code == 0);
    CHECK(fails_left(t) == 0);
    CHECK(t.server.calls("delete") == 1 + 3);
  }
  SUBCASE("503 on every delete: given up after four retries; the lease is kept for stop --id") {
    fail_next(t, "delete", 503, 100);
    CliResult r = t.run_script("echo ok");
    CHECK(r.exit_code == 0);
    CHECK(r.out == "ok\n");
    CHECK(r.err.find("corral stop --provider daytona --id") != std::string::npos);
    CHECK(t.server.calls("delete") == 5);
    REQUIRE(t.alive().size() == 1u);
    stop_and_check_empty(t, str(t.handle(), "leaseId"));
  }
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("a Retry-After above corral's 10 s cap is not waited for: the answer is reported at once") {
  DaytonaCli t;
  auto [lease, id] = kept_lease(t);
  SUBCASE("429 on get: exit 75 after one call") {
    const int before = t.server.calls("get");
    fail_next(t, "get", 429, 5, "3600");
    CliResult r = reach(t, "get", lease, id);
    CHECK(r.exit_code == 75);
    CHECK(r.err.find("HTTP 429") != std::string::npos);
    CHECK(t.server.calls("get") - before == 1);
  }
  SUBCASE("503 on creating a session: exit 69 after one call") {
    fail_next(t, "session", 503, 5, "3600");
    CliResult r = reach(t, "session", lease, id);
    CHECK(r.exit_code == 69);
    CHECK(r.out.empty());
    CHECK(fails_left(t) == 4);
  }
  CHECK(t.alive() == std::vector<std::string>{id});
  stop_and_check_empty(t, lease);
}

TEST_CASE("answers that are not JSON or cut short are Daytona's fault (exit 69); a garbled create's sandbox is swept") {
  DaytonaCli t;
  // Not JSON, JSON cut short, and 400,000 nested '[' (which once overflowed the parser's stack).
  for (int kind : {0, 1, 2}) {
    CAPTURE(kind);
    const bool cut = kind == 1, deep = kind == 2;
    t.fault([&](auto& f) {
      f = daytona::standin::Faults{};
      f.truncate_answer = cut;
      f.deep_answer = deep;
      f.malformed_route = "create";
    });
    const int deletes = t.server.calls("delete");
    std::filesystem::remove(t.handle_path());
    CliResult r = t.run_script("echo never");
    CHECK(r.exit_code == 69);
    CHECK(r.out.empty());
    CHECK(r.err.find("unexpected answer") != std::string::npos);
    // The create made a sandbox nobody owns: found by its lease label and deleted.
    auto filters = t.server.with([](auto& st) { return st.list_label_filters; });
    REQUIRE_FALSE(filters.empty());
    CHECK(json::get_string(json::parse(filters.back(), "filter"), "corral-lease").size() > 0);
    CHECK(t.server.calls("delete") == deletes + 1);
    CHECK(t.alive().empty());
    CHECK(t.cli.claims().empty());

    t.fault([](auto& f) { f.malformed_route = "get"; });
    r = t.run_script("echo never");
    CHECK(r.exit_code == 69);
    CHECK(r.err.find("unexpected answer") != std::string::npos);
    CHECK(t.alive().empty());  // it never started as far as corral knows: deleted

    t.fault([](auto& f) { f.malformed_route = "list"; });
    r = t.run({"list", "--remote", "--provider", "daytona"});
    CHECK(r.exit_code == 69);
    CHECK(r.err.find("unexpected answer") != std::string::npos);
    CHECK(t.alive().empty());
    CHECK(t.cli.claims().empty());
  }
}

TEST_CASE("a control-plane connection that breaks mid-answer: a call safe to repeat is sent again, else exit 69; nothing is left behind") {
  DaytonaCli t;
  SUBCASE("create: its sandbox is found by its lease and deleted") {
    t.fault([](auto& f) { f.cut_route = "create"; });
    CliResult r = t.run_script("echo never");
    CHECK(r.exit_code == 69);
    CHECK(r.out.empty());
    CHECK(r.err.find("Daytona create sandbox: request to") != std::string::npos);
    CHECK(t.server.calls("create") == 1);
    CHECK(t.server.calls("delete") == 1);
  }
  SUBCASE("get while starting, once: sent again, and the run goes on") {
    t.fault([](auto& f) { f.cut_route = "get"; f.cut_times = 1; });
    CliResult r = t.run_script("echo ran");
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out == "ran\n");
    CHECK(t.server.calls("get") >= 2);
    CHECK(t.server.calls("delete") == 1);
  }
  SUBCASE("get while starting, every time: sent 5 times in all, then exit 69; the sandbox is deleted") {
    t.fault([](auto& f) { f.cut_route = "get"; });
    CliResult r = t.run_script("echo never");
    CHECK(r.exit_code == 69);
    CHECK(r.out.empty());
    CHECK_MESSAGE(r.err.find("(sent 5 times)") != std::string::npos, r.err);
    CHECK(t.server.calls("get") == 5);
    CHECK(t.server.calls("delete") == 1);
  }
  SUBCASE("delete, once: sent again, finds the sandbox gone, and the run ends clean") {
    t.fault([](auto& f) { f.cut_route = "delete"; f.cut_times = 1; });
    CliResult r = t.run_script("echo ok");
    CHECK(r.exit_code == 0);
    CHECK(r.out == "ok\n");
    CHECK_MESSAGE(r.err.find("could not") == std::string::npos, r.err);
    CHECK(t.server.calls("delete") == 2);
  }
  SUBCASE("delete, every time: the lease is kept, and stop --id finishes the job") {
    t.fault([](auto& f) { f.cut_route = "delete"; });
    CliResult r = t.run_script("echo ok");
    CHECK(r.exit_code == 0);
    CHECK(r.out == "ok\n");
    CHECK(r.err.find("corral stop --provider daytona --id") != std::string::npos);
    CHECK(t.cli.claims().size() == 1u);
    stop_and_check_empty(t, str(t.handle(), "leaseId"));
  }
  SUBCASE("list, once: sent again, and listed") {
    t.fault([](auto& f) { f.cut_route = "list"; f.cut_times = 1; });
    CHECK(t.run({"list", "--remote", "--provider", "daytona"}).exit_code == 0);
    CHECK(t.server.calls("list") == 2);
  }
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}

namespace {


int commands_started(DaytonaCli& t) {
  return static_cast<int>(t.server.with([](auto& st) { return st.exec_commands.size(); }));
}

// True when `err` tells the user which setting allows more time, by flag and variable.
bool names_setting(const std::string& err, const std::string& option) {
  std::string env = "CORRAL_DAYTONA_";
  for (char c : option) env += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return err.find("--daytona-" + option) != std::string::npos && err.find(env) != std::string::npos;
}

}  // namespace

TEST_CASE("a Daytona call or start past its time limit is exit 69 naming the setting to raise; nothing is left") {
  DaytonaCli t;
  const auto begin = Clock::now();
  // Each slow answer comes 10 s late, the sandbox starts after 30 s: the 1 s limits run out
  // first, and the stand-in ends its late answers when it stops.
  SUBCASE("create past --daytona-create-timeout: its sandbox is found by its lease and deleted") {
    t.fault([](auto& f) {
      f.slow_route = "create";
      f.slow_ms = 10000;
    });
    CliResult r = t.run_script("echo never", {"--daytona-create-timeout", "1s"});
    INFO(r.err);
    CHECK(r.exit_code == 69);
    CHECK(r.out.empty());
    CHECK(r.err.find("Daytona create sandbox: no complete answer") != std::string::npos);
    CHECK(r.err.find("within 1 s") != std::string::npos);
    CHECK(names_setting(r.err, "create-timeout"));
    CHECK(t.server.calls("create") == 1);
    CHECK(commands_started(t) == 0);
    auto filters = t.server.with([](auto& st) { return st.list_label_filters; });
    REQUIRE(filters.size() == 1u);
    CHECK(json::get_string(json::parse(filters[0], "filter"), "corral-lease").size() > 0);
    CHECK(t.server.calls("delete") == 1);
  }
  SUBCASE("get while starting past --daytona-request-timeout: not sent again; the sandbox is deleted") {
    t.fault([](auto& f) {
      f.slow_route = "get";
      f.slow_ms = 10000;
    });
    CliResult r = t.run_script("echo never", {"--daytona-request-timeout", "1s"});
    INFO(r.err);
    CHECK(r.exit_code == 69);
    CHECK(r.err.find("Daytona get sandbox") != std::string::npos);
    CHECK(r.err.find("within 1 s") != std::string::npos);
    CHECK(names_setting(r.err, "request-timeout"));
    CHECK(commands_started(t) == 0);
    CHECK(t.server.calls("get") == 1);
    CHECK(t.server.calls("delete") == 1);
  }
  SUBCASE("a toolbox call (creating a session) past --daytona-request-timeout: not sent again; the sandbox is deleted") {
    t.fault([](auto& f) {
      f.slow_route = "session";
      f.slow_ms = 10000;
    });
    CliResult r = t.run_script("echo never", {"--daytona-request-timeout", "1s"});
    INFO(r.err);
    CHECK(r.exit_code == 69);
    CHECK(r.err.find("create a process session: no complete answer") != std::string::npos);
    CHECK(r.err.find("within 1 s") != std::string::npos);
    CHECK(names_setting(r.err, "request-timeout"));
    CHECK(commands_started(t) == 0);
    CHECK(t.server.calls("toolbox POST process/session") == 1);
    CHECK(t.server.calls("delete") == 1);
  }
  SUBCASE("a new sandbox not started within --daytona-start-timeout: deleted") {
    t.fault([](auto& f) { f.start_delay_ms = 30000; });
    CliResult r = t.run_script("echo never", {"--daytona-start-timeout", "1s"});
    INFO(r.err);
    CHECK(r.exit_code == 69);
    CHECK(r.err.find("did not start within 1s (state creating)") != std::string::npos);
    CHECK(names_setting(r.err, "start-timeout"));
    CHECK(commands_started(t) == 0);
    CHECK(t.server.calls("create") == 1);
    CHECK(t.server.calls("delete") == 1);
  }
  SUBCASE("delete past --daytona-request-timeout: the result stands; the lease is listed abandoned for stop --id") {
    t.fault([](auto& f) {
      f.slow_route = "delete";
      f.slow_ms = 10000;
    });
    CliResult r = t.run_script("echo ok", {"--daytona-request-timeout", "1s"});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out == "ok\n");
    CHECK(r.err.find("corral stop --provider daytona --id") != std::string::npos);
    CHECK(t.server.calls("delete") == 1);
    CHECK(t.cli.lease_states() == std::vector<std::string>{"abandoned"});
    CHECK(commands_started(t) == 2);  // the workspace unpacking, then the command
    stop_and_check_empty(t, str(t.handle(), "leaseId"));
  }
  CHECK(Clock::now() - begin < std::chrono::seconds(8));  // the limits ended it, not the late answers
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("a kept sandbox not started again within --daytona-start-timeout stays kept, and stop --id removes it") {
  DaytonaCli t;
  const auto kept = kept_lease(t);  // not a structured binding: clang 14 cannot capture one
  const std::string& lease = kept.first;
  const std::string& id = kept.second;
  t.server.with([&](auto& st) { return st.sandboxes.at(id).state = "stopped"; });  // auto-stopped
  t.fault([](auto& f) { f.start_delay_ms = 30000; });
  const int commands = commands_started(t);
  CliResult r = t.run_script("echo never", {"--id", lease, "--daytona-start-timeout", "1s"});
  INFO(r.err);
  CHECK(r.exit_code == 69);
  CHECK(r.err.find("did not start within 1s (state starting)") != std::string::npos);
  CHECK(names_setting(r.err, "start-timeout"));
  CHECK(t.server.calls("start") == 1);
  CHECK(commands_started(t) == commands);
  CHECK(t.alive() == std::vector<std::string>{id});
  CHECK(t.cli.lease_states() == std::vector<std::string>{"kept"});
  stop_and_check_empty(t, lease);
}

TEST_CASE("a control-plane connection reset (TCP RST): a call safe to repeat is sent again, else exit 69; nothing is left behind") {
  DaytonaCli t;
  SUBCASE("create: not sent again; its sandbox is found by its lease and deleted") {
    t.fault([](auto& f) { f.reset_route = "create"; });
    CliResult r = t.run_script("echo never");
    INFO(r.err);
    CHECK(r.exit_code == 69);
    CHECK(r.out.empty());
    CHECK(r.err.find("Daytona create sandbox: request to") != std::string::npos);
    CHECK(r.err.find("Connection reset by peer") != std::string::npos);
    CHECK(commands_started(t) == 0);
    CHECK(t.server.calls("create") == 1);
    CHECK(t.server.calls("delete") == 1);
  }
  SUBCASE("get while starting, once: sent again, and the run goes on") {
    t.fault([](auto& f) { f.reset_route = "get"; f.reset_times = 1; });
    CliResult r = t.run_script("echo ran");
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out == "ran\n");
    CHECK(t.server.calls("get") >= 2);
    CHECK(commands_started(t) == 2);  // the workspace unpacking, then the command: once each
    CHECK(t.server.calls("delete") == 1);
  }
  SUBCASE("delete, once: sent again, finds the sandbox gone, and the run ends clean") {
    t.fault([](auto& f) { f.reset_route = "delete"; f.reset_times = 1; });
    CliResult r = t.run_script("echo ok");
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out == "ok\n");
    CHECK(r.err.find("corral stop") == std::string::npos);
    CHECK(t.server.calls("delete") == 2);
    CHECK(commands_started(t) == 2);
  }
  SUBCASE("list, once: sent again, and listed") {
    t.fault([](auto& f) { f.reset_route = "list"; f.reset_times = 1; });
    CliResult r = t.run({"list", "--remote", "--provider", "daytona"});
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    CHECK(t.server.calls("list") == 2);
  }
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("a log message over Beast's 16 MiB limit is read in pieces: the output arrives whole, nothing runs twice") {
  DaytonaCli t;
  t.fault([](auto& f) { f.whole_log_message = true; });
  // 17 MiB of output reaches corral as one message (more once encoded by the wrapper).
  CliResult r = t.run_script("head -c 17825792 /dev/zero | tr '\\0' x; exit 3");
  INFO(r.err);
  CHECK(r.exit_code == 3);
  CHECK(r.out.size() == 17825792u);
  CHECK(r.out.find_first_not_of('x') == std::string::npos);
  CHECK(t.server.calls("follow") == 2);  // the workspace unpacking, then the command: never followed again
  CHECK(t.server.with([](auto& st) { return st.exec_commands.size(); }) == 2u);
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("a sandbox deleted while its command runs ends the run with exit 66, naming it; nothing is left") {
  DaytonaCli t;
  Background b = t.cli.start(t.script_args("echo started; sleep 60"));
  for (int i = 0; i < 200 && !command_running(t); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(command_running(t));
  const std::string id = t.alive().at(0);
  t.server.with([&](auto& st) {
    st.remove(id);
    return 0;
  });
  const int code = b.wait(std::chrono::seconds(30));
  const std::string err = read_file(b.err);
  t.seen.push_back(read_file(b.out));
  t.seen.push_back(err);
  INFO(err);
  CHECK(code == 66);
  CHECK(err.find(id) != std::string::npos);
  // Whichever call meets the deletion first (the log stream or the command's status) says so.
  CHECK(err.find("HTTP 404") != std::string::npos);
  CHECK(err.find("not found") != std::string::npos);
  CHECK(t.server.with([](auto& st) { return st.exec_commands.size(); }) == 2u);
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("SIGKILL while Daytona holds create, upload or exec: the next stop leaves no sandbox and no claim") {
  struct Phase {
    const char* route;    // the call the stand-in holds when corral is killed
    const char* counted;  // the stand-in's count of that call
    int skip;             // calls let through first (the workspace unpacking is an exec too)
    bool claim;           // a claim is left (abandoned)
    bool by_id;           // cleaned up with stop --id (else stop --orphans)
  };
  for (const Phase& p : {Phase{"create", "create", 0, false, false},
                         Phase{"upload", "toolbox POST files/upload-v2", 0, true, false},
                         Phase{"exec", "toolbox POST process/session/*/exec", 1, true, true}}) {
    const std::string route = p.route;
    CAPTURE(route);
    DaytonaCli t;
    t.fault([&](auto& f) {
      f.hold_route = p.route;
      f.hold_skip = p.skip;
    });
    Background b = t.cli.start(t.script_args("echo started; sleep 60"));
    for (int i = 0; i < 300 && t.server.calls(p.counted) <= p.skip; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(t.server.calls(p.counted) == p.skip + 1);
    if (p.route == std::string("exec")) CHECK(command_running(t));
    ::kill(b.pid, SIGKILL);
    b.wait();
    t.fault([](auto& f) { f.hold_route.clear(); });
    CHECK(t.alive().size() == 1u);
    // Nothing is left to stop the command: it runs on in the sandbox until the next stop.
    if (p.route == std::string("exec")) CHECK(command_running(t));
    CliResult list = t.run({"list", "--json"});
    REQUIRE(list.exit_code == 0);
    json::Document leases = json::parse(list.out, "list");
    REQUIRE(leases.Size() == (p.claim ? 1u : 0u));
    std::string lease;
    for (const auto& l : leases.GetArray()) {
      CHECK(str(l, "state") == "abandoned");
      lease = str(l, "leaseId");
    }
    CliResult stop = p.by_id ? t.run({"stop", "--id", lease}) : t.run({"stop", "--orphans", "--provider", "daytona"});
    INFO(stop.out, stop.err);
    CHECK(stop.exit_code == 0);
    CHECK(t.alive().empty());
    CHECK(t.cli.claims().empty());
    CHECK_FALSE(command_running(t));
    // corral keeps working afterwards.
    CHECK(t.run_script("echo again").out == "again\n");
    CHECK(t.alive().empty());
  }
}

TEST_CASE("the real daytona plugin crashing in its helper process during exec is named, and stop --id deletes the sandbox") {
  DaytonaCli t;
  t.cli.add_registry("daytona", {CORRAL_DAYTONA_PLUGIN}, {{"isolation", "process"}});
  Background b = t.cli.start(t.script_args("echo started; sleep 60"));
  REQUIRE(eventually([&] { return read_file(b.out) == "started\n"; }));  // the log stream is open
  const std::vector<int> helpers = children_named(b.pid, "corral-plugin-host");
  REQUIRE(helpers.size() == 1);
  ::kill(helpers[0], SIGSEGV);
  CHECK(b.wait(std::chrono::seconds(30)) == 70);
  const std::string err = read_file(b.err);
  t.seen.push_back(err);
  CHECK_MESSAGE(err.find("provider plugin 'daytona' crashed during 'exec' (SIGSEGV)") != std::string::npos, err);

  CliResult list = t.run({"list", "--json"});
  REQUIRE(list.exit_code == 0);
  json::Document leases = json::parse(list.out, "list");
  REQUIRE(leases.Size() == 1);
  const std::string lease = str(leases[0], "leaseId");
  CHECK(err.find("`corral stop --id " + lease + "` cleans up once the plugin is fixed") != std::string::npos);
  CHECK(t.alive().size() == 1u);
  CHECK(command_running(t));  // the crash took the helper, not the sandbox's command

  CliResult stop = t.run({"stop", "--id", lease});
  CHECK_MESSAGE(stop.exit_code == 0, stop.err);
  CHECK(t.alive().empty());
  CHECK_FALSE(command_running(t));
  CHECK(t.cli.claims().empty());
  CHECK(t.server.calls("create") == 1);
}

TEST_CASE("a 429 names Daytona's rate limit, not its ThrottlerException, and says what corral already did; exit 75") {
  DaytonaCli t;
  const char* limit = "Daytona's rate limit was reached (HTTP 429)";
  SUBCASE("create, every time: asked again by corral after a wait, until --timeout") {
    t.fault([](auto& f) {
      f.rate_limit_route = "create";
      f.rate_limit_count = 100;
      f.retry_after.clear();  // no Retry-After: corral waits 1 s, then 2 s, which --timeout does not leave
    });
    CliResult r = t.run_script("echo never", {"--timeout", "3"});
    CHECK(r.exit_code == 75);
    CHECK(r.out.empty());
    CHECK_MESSAGE(r.err.find(std::string("corral: error: Daytona create sandbox: ") + limit) != std::string::npos, r.err);
    CHECK(r.err.find("not sent again by the plugin") != std::string::npos);
    CHECK(r.err.find("corral waited and asked again 1 time") != std::string::npos);
    CHECK(r.err.find("hint: wait a minute and rerun") != std::string::npos);
    CHECK(r.err.find("lower --max-parallel") != std::string::npos);
    CHECK(r.err.find("ask Daytona to raise your organization's rate limit") != std::string::npos);
    CHECK(r.err.find("ThrottlerException") == std::string::npos);
    CHECK(t.server.calls("create") == 2);
  }
  SUBCASE("get, every time (status --id): retried four times, then reported") {
    REQUIRE(t.run_script("true", {"--keep"}).exit_code == 0);
    const std::string lease = str(t.handle(), "leaseId");
    const int gets = t.server.calls("get");
    t.fault([](auto& f) {
      f.rate_limit_route = "get";
      f.rate_limit_count = 100;
      f.retry_after = "0";
    });
    CliResult r = t.run({"status", "--id", lease});
    CHECK(r.exit_code == 75);
    CHECK_MESSAGE(r.err.find(limit) != std::string::npos, r.err);
    CHECK(r.err.find("corral already retried it 4 times") != std::string::npos);
    CHECK(r.err.find("ThrottlerException") == std::string::npos);
    CHECK(t.server.calls("get") == gets + 5);
    t.fault([](auto& f) { f.rate_limit_count = 0; });
    CHECK(t.run({"stop", "--id", lease}).exit_code == 0);
  }
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("a kept sandbox deleted behind corral's back says how to forget the lease, whether found gone at get, upload or mid-command") {
  DaytonaCli t;
  REQUIRE(t.run_script("true", {"--keep"}).exit_code == 0);
  auto h = t.handle();
  const std::string lease = str(h, "leaseId"), id = str(h, "sandboxId");
  std::filesystem::remove(t.handle_path());
  auto remove_sandbox = [&] {
    t.server.with([&](auto& st) {
      st.remove(id);
      return 0;
    });
  };
  CliResult r;
  SUBCASE("at get") {
    remove_sandbox();
    r = t.run_script("echo never", {"--id", lease});
  }
  SUBCASE("at the upload of a changed workspace") {
    t.cli.root().write("work/new.txt", "changed\n");
    t.fault([](auto& f) { f.vanish_route = "upload"; });
    r = t.run_script("echo never", {"--id", lease});
    CHECK(t.server.with([](auto& st) { return st.faults.vanish_route; }).empty());  // it struck
  }
  SUBCASE("while the command runs") {
    Background b = t.cli.start(t.script_args("echo started; sleep 60", {"--id", lease}));
    for (int i = 0; i < 200 && !command_running(t); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(command_running(t));
    remove_sandbox();
    r.exit_code = b.wait(std::chrono::seconds(30));
    r.out = read_file(b.out);
    r.err = read_file(b.err);
    t.seen.push_back(r.out);
    t.seen.push_back(r.err);
  }
  INFO(r.err);
  CHECK(r.exit_code == 66);
  CHECK(r.out.find("never") == std::string::npos);
  // One message however the run found out: the lease, the sandbox, Daytona's reason, and
  // the command that forgets the lease.
  CHECK(r.err.find("the sandbox of lease '") != std::string::npos);
  CHECK(r.err.find("(" + id + ") no longer exists at daytona") != std::string::npos);
  CHECK(r.err.find("deleted, in the Daytona dashboard") != std::string::npos);
  CHECK(r.err.find("forget this lease with `corral stop --provider daytona --id " + lease + "`") != std::string::npos);
  auto h2 = t.handle();
  CHECK(json::get_bool(h2, "reused"));
  CHECK(str(h2["error"], "code") == "not-found");
  CHECK(t.alive().empty());
  CHECK(t.run({"stop", "--id", lease}).exit_code == 0);
  CHECK(t.cli.claims().empty());
}

TEST_CASE("the workspace is packed while Daytona creates the sandbox, and nothing is left after") {
  DaytonaCli t;
  t.fault([](auto& f) { f.hold_route = "create"; });
  Background b = t.cli.start(t.script_args("cat hello.txt"));
  // The sandbox exists at the stand-in, its create not answered yet.
  REQUIRE(eventually([&] { return t.alive().size() == 1u; }));
  // An archive exists only if packing began before create ended.
  CHECK(eventually([&] { return !t.cli.staged_archives().empty(); }));
  t.fault([](auto& f) { f.hold_route.clear(); });
  CHECK(b.wait() == 0);
  CHECK(read_file(b.out) == "hello from the workspace\n");
  t.seen.push_back(read_file(b.err));
  CHECK(t.handle()["timingsMs"].HasMember("pack"));
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
  CHECK(t.cli.staged_archives().empty());
}

TEST_CASE("a warm Daytona pool waits stopped; a run starts the pooled sandbox and syncs what changed since the fill") {
  DaytonaCli t;
  CliResult r = t.run({"pool", "fill", "--provider", "daytona", "--size", "1"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::set<std::string> ids = t.cli.pooled_sandboxes();
  REQUIRE(ids.size() == 1);
  CHECK(t.server.with([&](auto& st) { return st.sandboxes.at(*ids.begin()).state; }) != "started");

  t.cli.root().write("work/hello.txt", "changed after the fill\n");
  r = t.run_script("cat hello.txt");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "changed after the fill\n");
  auto h = t.handle();
  CHECK(json::get_bool(h, "pooled"));
  CHECK(ids.count(json::get_string(h, "sandboxId")) == 1);
  CHECK(t.cli.pool_settles_at(1));
  REQUIRE(t.run({"pool", "drain", "--provider", "daytona"}).exit_code == 0);
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}
