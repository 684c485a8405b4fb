// `corral run --provider e2b` with the user's input, signals and terminal, against the
// stand-in E2B: what is piped into corral reaches the command through envd's SendInput and
// its end through CloseStdin; Ctrl-C and SIGTERM reach the command's process group as the
// signal itself, which its trap can act on before --stop-timeout kills it; `-t` runs it on
// a terminal of envd's (a PTY) sized and resized as the user's.
#include <doctest/doctest.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "cli.hpp"
#include "corral/json.hpp"
#include "e2b_cli.hpp"

using namespace corral;
using namespace corral::test;

namespace {

using Clock = std::chrono::steady_clock;

// `corral run --provider e2b [flags] --lease-output H -- argv...` with `input` piped in.
CliResult run_with_input(E2bCli& t, std::vector<std::string> argv, const std::string& input,
                         std::vector<std::string> flags = {}) {
  std::vector<std::string> args = {"run", "--provider", "e2b", "--lease-output", t.handle_path()};
  args.insert(args.end(), flags.begin(), flags.end());
  args.push_back("--");
  args.insert(args.end(), argv.begin(), argv.end());
  CliResult r = t.cli.run_with_input(args, input);
  t.seen.push_back(r.out);
  t.seen.push_back(r.err);
  return r;
}

// Starts `corral run --provider e2b [flags] --lease-output H -- sh -c SCRIPT` in the
// background and waits until its stdout says "started"; false when it never did.
bool start_script(E2bCli& t, Background& bg, const std::string& script, std::vector<std::string> flags = {}) {
  std::vector<std::string> args = {"run", "--provider", "e2b", "--lease-output", t.handle_path()};
  args.insert(args.end(), flags.begin(), flags.end());
  args.insert(args.end(), {"--", "sh", "-c", script});
  bg = t.cli.start(args);
  return eventually([&] { return read_file(bg.out).find("started") != std::string::npos; });
}

// What a background run printed, kept for the fixture's check that no secret leaked.
void keep_output(E2bCli& t, const Background& bg) {
  t.seen.push_back(read_file(bg.out));
  t.seen.push_back(read_file(bg.err));
}

}  // namespace

TEST_CASE("what is piped into corral reaches the E2B command, to its end") {
  E2bCli t;
  auto lines = run_with_input(t, {"cat"}, "a\nb\n");
  CHECK_MESSAGE(lines.exit_code == 0, lines.err);
  CHECK(lines.out == "a\nb\n");
  const int lines_inputs = t.server.calls("input");
  CHECK(lines_inputs >= 1);
  CHECK(t.server.calls("close-stdin") == 1);
  // More than one call carries, and more than a pipe holds: every byte arrives, in order.
  const std::string big = random_bytes(3 << 20);
  auto copied = run_with_input(t, {"cat"}, big);
  CHECK_MESSAGE(copied.exit_code == 0, copied.err);
  CHECK(copied.out.size() == big.size());
  CHECK(copied.out == big);
  CHECK(t.server.calls("input") - lines_inputs >= 48);  // 3 MiB in calls of at most 64 KiB
  CHECK(t.server.calls("close-stdin") == 2);
  // Each call carries its bytes as proto3 JSON does: base64, to the process by its pid.
  const auto bodies = t.server.with([](auto& st) { return st.input_bodies; });
  REQUIRE(!bodies.empty());
  auto first = json::parse(bodies.front(), "SendInput");
  CHECK(first["process"]["pid"].IsUint());
  CHECK(json::get_string(first["input"], "stdin") == "YQpiCg==");
  CHECK(t.alive().empty());
}

TEST_CASE("an E2B command that stops reading early ends the run at once; one that closes its stdin runs on") {
  E2bCli t;
  const std::string big = random_bytes(8 << 20);
  auto head = run_with_input(t, {"head", "-c", "5"}, big);
  CHECK_MESSAGE(head.exit_code == 0, head.err);
  CHECK(head.out == big.substr(0, 5));
  CHECK(head.err.find("warning") == std::string::npos);
  // A refused input is the command's choice, not a failure: it runs to its own end.
  auto closing = run_with_input(t, {"sh", "-c", "head -c 3; exec 0<&-; sleep 0.5; echo; echo still-here"}, big);
  CHECK_MESSAGE(closing.exit_code == 0, closing.err);
  CHECK(closing.out == big.substr(0, 3) + "\nstill-here\n");
  CHECK(t.alive().empty());
}

TEST_CASE("--no-stdin and an empty pipe give an E2B command an empty stdin") {
  E2bCli t;
  auto closed = run_with_input(t, {"wc", "-c"}, "abc", {"--no-stdin"});
  CHECK(closed.exit_code == 0);
  CHECK(closed.out == "0\n");
  CHECK(t.server.calls("input") == 0);
  CHECK(t.server.calls("close-stdin") == 0);  // started with stdin: false, nothing to close
  auto empty = run_with_input(t, {"wc", "-c"}, "");
  CHECK(empty.exit_code == 0);
  CHECK(empty.out == "0\n");
  CHECK(t.server.calls("close-stdin") == 1);
}

TEST_CASE("input E2B cannot take is a failure of the run, and its command is stopped") {
  E2bCli t;
  // envd's edge answers 502 to the input: the command would never get the rest of it.
  t.fault([](auto& f) {
    f.fail_route = "input";
    f.fail_status = 502;
  });
  auto r = run_with_input(t, {"sh", "-c", "cat > /dev/null; echo not-reached"}, "data\n", {"--keep"});
  CHECK(r.exit_code == 69);
  CHECK(r.err.find("the input piped into corral could not all reach the command") != std::string::npos);
  CHECK(r.out.find("not-reached") == std::string::npos);
  auto h = t.handle();
  const std::string id = json::get_string(h, "sandboxId");
  CHECK(eventually([&] { return t.server.with([&](auto& st) { return st.sandboxes.at(id).processes.empty(); }); }));
  CHECK(t.run({"stop", "--id", json::get_string(h, "leaseId")}).exit_code == 0);
  CHECK(t.alive().empty());
}

TEST_CASE("an envd too old to end a command's input: an empty stdin is fine, input fails the run") {
  E2bCli t;
  t.fault([](auto& f) { f.envd_version = "0.4.1"; });
  auto empty = run_with_input(t, {"wc", "-c"}, "");
  CHECK_MESSAGE(empty.exit_code == 0, empty.err);
  CHECK(empty.out == "0\n");
  auto refused = run_with_input(t, {"sh", "-c", "sleep 10; echo not-reached"}, "data\n");
  CHECK(refused.exit_code == 64);
  CHECK(refused.err.find("is older than 0.5.2 and cannot end a command's input") != std::string::npos);
  CHECK(refused.err.find("--no-stdin") != std::string::npos);
  CHECK(refused.out.find("not-reached") == std::string::npos);
  CHECK(t.server.calls("input") == 0);
  CHECK(t.server.calls("close-stdin") == 0);
  CHECK(t.alive().empty());
}

TEST_CASE("Ctrl-C reaches the E2B command as SIGINT: its trap writes a report, which is downloaded") {
  E2bCli t;
  Background bg;
  REQUIRE(start_script(t, bg,
                       "trap 'echo interrupted > report.txt; echo trapped; exit 3' INT; echo started; "
                       "while :; do sleep 0.1; done",
                       {"--download", "report.txt"}));
  ::kill(bg.pid, SIGINT);
  CHECK(bg.wait() == 130);
  keep_output(t, bg);
  CHECK(read_file(bg.out) == "started\ntrapped\n");
  CHECK(read_file(bg.err).find("--stop-timeout") == std::string::npos);  // ended by its trap, not the kill
  auto h = t.handle();
  CHECK(h["exitCode"].GetInt() == 3);
  CHECK(json::get_string(h["error"], "code") == "cancelled");
  CHECK(json::get_string(h["error"], "message").find("exit code 3") != std::string::npos);
  const std::string lease = json::get_string(h, "leaseId");
  CHECK(read_file(t.cli.workspace() / ".corral/runs" / lease / "report.txt") == "interrupted\n");
  // SIGINT went to the process group by a second Start of kill: envd's SendSignal has none.
  CHECK(t.server.calls("signal") == 0);
  CHECK(t.alive().empty());
}

TEST_CASE("SIGTERM reaches the E2B command as SIGTERM") {
  E2bCli t;
  Background bg;
  REQUIRE(start_script(t, bg,
                       "trap 'echo got TERM; exit 0' TERM; trap 'echo got INT; exit 0' INT; echo started; "
                       "while :; do sleep 0.1; done"));
  ::kill(bg.pid, SIGTERM);
  CHECK(bg.wait() == 130);
  keep_output(t, bg);
  CHECK(read_file(bg.out) == "started\ngot TERM\n");
  CHECK(t.handle()["exitCode"].GetInt() == 0);
  CHECK(t.alive().empty());
}

TEST_CASE("an E2B command that ignores its signal is killed after --stop-timeout") {
  E2bCli t;
  Background bg;
  REQUIRE(start_script(t, bg, "trap '' INT; echo started; sleep 60; echo not-reached", {"--stop-timeout", "1500ms"}));
  const auto t0 = Clock::now();
  ::kill(bg.pid, SIGINT);
  CHECK(bg.wait() == 130);
  keep_output(t, bg);
  const auto took = Clock::now() - t0;
  CHECK(took >= std::chrono::milliseconds(1400));  // not before the grace it was given
  CHECK(read_file(bg.out) == "started\n");
  CHECK(read_file(bg.err).find("had not ended 1.5s after the signal it was passed (--stop-timeout)") !=
        std::string::npos);
  CHECK(t.alive().empty());
}

TEST_CASE("run -t on E2B: a terminal sized as the user's, every key, Ctrl-C as a key, and a resize") {
  E2bCli t;
  // The user's terminal is 33 rows by 100 columns before corral starts: not a default.
  auto r = t.cli.run_on_terminal(
      {"run", "--provider", "e2b", "-t", "--", "sh", "-c",
       "test -t 0 && test -t 1 && test -t 2 && echo on-a-terminal; stty size; echo \"TERM=$TERM\"; "
       "printf 'name? '; read name; echo \"hello-$name\"; "
       "trap 'stty size; echo resized' WINCH; trap 'echo caught-int; exit 7' INT; echo ready; "
       "while :; do sleep 0.1; done"},
      100, {{"", "", 33, 100}, {"name? ", "corral\r"}, {"ready", "", 30, 120}, {"resized", "\x03"}});
  t.seen.push_back(r.out);
  CHECK_MESSAGE(r.exit_code == 7, r.out);  // the command's own end: Ctrl-C was a key, not corral's stop
  CHECK(r.out.find("on-a-terminal") != std::string::npos);
  CHECK(r.out.find("33 100") != std::string::npos);
  CHECK(r.out.find("TERM=\r") == std::string::npos);  // the user's TERM, never empty
  CHECK(r.out.find("hello-corral") != std::string::npos);
  CHECK(r.out.find("30 120") != std::string::npos);
  CHECK(r.out.find("caught-int") != std::string::npos);
  // The keys went as terminal input, the size by Update; a terminal's stdin is never closed.
  CHECK(t.server.calls("input") >= 1);
  CHECK(t.server.calls("update") >= 1);
  CHECK(t.server.calls("close-stdin") == 0);
  CHECK(t.alive().empty());
}

TEST_CASE("corral shell on E2B opens a login shell on a terminal, and its exit code is the run's") {
  E2bCli t;
  auto r = t.cli.run_on_terminal({"shell", "--provider", "e2b"}, 80,
                                 {{"", "echo marker-$((6*7))\r"}, {"marker-42", "exit 3\r"}});
  t.seen.push_back(r.out);
  CHECK_MESSAGE(r.exit_code == 3, r.out);
  CHECK(t.alive().empty());
}
