// The plugin's exec client against the stand-in's exec WebSocket, below corral: stdin
// closed by v5's [255, 0] (a `cat` that reads to its end finishes), v4's lack of it, the
// exit status from channel 3 (kept when the server holds the connection open after its
// close frame; refused, named, when its code is no number), a cut stream reported as one,
// and a stream gone silent (its pings unanswered) ended after the request timeout, while a
// merely quiet one lives on.
#include "exec_stream.hpp"

#include <doctest/doctest.h>

#include "cli.hpp"
#include "cluster_fixture.hpp"
#include "kubeconfig.hpp"

using namespace corral;
using namespace corral::kubernetes;
using corral::kubernetes::test::Cluster;

namespace {

struct Exec {
  Cluster cluster;
  sdk::Redactor secrets;
  Api api;
  std::string out, err;
  sdk::remote::CommandHooks hooks;
  bool stop_now = false;

  explicit Exec(std::int64_t request_timeout_seconds = 30)
      : api(find_cluster({cluster.server.kubeconfig().string(), "", ""}), request_timeout_seconds,
            "--kubernetes-request-timeout", secrets) {
    cluster.create_pod("p");
    cluster.wait_ready("p");
    hooks.on_stdout = [this](std::string_view d) { out.append(d); };
    hooks.on_stderr = [this](std::string_view d) { err.append(d); };
    hooks.stop = [this] { return stop_now; };
  }
  ExecEnd run(const std::vector<std::string>& argv, const std::string& stdin_path = {}) {
    return exec_in_pod(api, "corral", "p", "main", argv, hooks, ExecInput{stdin_path}, "test exec");
  }
};

}  // namespace

TEST_CASE("v5 closes stdin with [255, 0]: a command that reads stdin to its end finishes, with every byte") {
  Exec e;
  corral::test::TempDir dir;
  const std::string data = corral::test::random_bytes(100000);
  auto input = dir.write("in.bin", data);
  ExecEnd end = e.run({"cat"}, input.string());
  CHECK(end.protocol == "v5.channel.k8s.io");
  REQUIRE(end.exit_code);
  CHECK(*end.exit_code == 0);
  CHECK(e.out == data);
}

TEST_CASE("v4 cannot close stdin: a bounded reader (head -c) still gets every byte; the exit status arrives") {
  Exec e;
  e.cluster.server.with([](auto& s) { return s.faults.exec_v4_only = true; });
  corral::test::TempDir dir;
  auto input = dir.write("in.txt", "twelve bytes");
  ExecEnd end = e.run({"/bin/sh", "-c", "head -c 12; echo; echo err >&2; exit 9"}, input.string());
  CHECK(end.protocol == "v4.channel.k8s.io");
  REQUIRE(end.exit_code);
  CHECK(*end.exit_code == 9);
  CHECK(e.out == "twelve bytes\n");
  CHECK(e.err == "err\n");
}

TEST_CASE("a stream cut with no status ends with no exit code; stop closes it as cancelled") {
  Exec e;
  SUBCASE("cut") {
    e.cluster.server.with([](auto& s) {
      s.faults.exec_cut_times = 1;
      s.faults.exec_cut_after_bytes = 2;
      return 0;
    });
    ExecEnd end = e.run({"/bin/sh", "-c", "echo hello; sleep 5"});
    CHECK_FALSE(end.exit_code);
  }
  SUBCASE("stopped") {
    e.stop_now = true;
    try {
      e.run({"sleep", "30"});
      FAIL("a stopped exec returned");
    } catch (const Error& err) {
      CHECK(err.code() == ErrorCode::cancelled);
    }
  }
}

TEST_CASE("a quiet command outlives the request timeout: the API server answers the pings") {
  Exec e(1);
  ExecEnd end = e.run({"/bin/sh", "-c", "sleep 3; echo done"});
  REQUIRE(end.exit_code);
  CHECK(*end.exit_code == 0);
  CHECK(e.out == "done\n");
}

TEST_CASE("a stream gone silent, its pings unanswered, ends unavailable after the request timeout") {
  Exec e(1);
  e.cluster.server.with([](auto& s) {
    s.faults.exec_stall_times = 1;
    s.faults.exec_stall_after_bytes = 1;
    return 0;
  });
  try {
    e.run({"/bin/sh", "-c", "echo first; sleep 30"});
    FAIL("a silent stream returned");
  } catch (const Error& err) {
    CHECK(err.code() == ErrorCode::unavailable);
    CHECK_MESSAGE(std::string(err.what()).find("nor an answer to a ping; the connection looks stalled") !=
                      std::string::npos,
                  err.what());
  }
  CHECK(e.out == "first\n");
}

TEST_CASE("a server that sends the status and a close frame but keeps the connection open: the exit code stands") {
  Exec e(3);
  e.cluster.server.with([](auto& s) { return s.faults.exec_linger_times = 1; });
  // Before: Beast waited for the server to hang up, until the request timeout said "stalled".
  ExecEnd end = e.run({"/bin/sh", "-c", "echo out; exit 7"});
  REQUIRE(end.exit_code);
  CHECK(*end.exit_code == 7);
  CHECK(e.out == "out\n");
}

TEST_CASE("an exit status whose code is no number is the API server's fault, quoting what it sent") {
  Exec e;
  e.cluster.server.with([](auto& s) { return s.faults.exec_exit_cause = "one\ncorral: forged"; });
  try {
    e.run({"/bin/sh", "-c", "exit 3"});
    FAIL("an exit status without a number returned");
  } catch (const Error& err) {
    const std::string message = err.what();
    CHECK(err.code() == ErrorCode::unavailable);
    CHECK_MESSAGE(message.find("NonZeroExitCode with the exit code 'one\\x0acorral: forged', which is none from 1 "
                               "to 255") != std::string::npos,
                  message);
    CHECK(message.find('\n') == std::string::npos);  // the server's newline makes no line of its own
    CHECK(err.hint().find("/bin/sh") == std::string::npos);
  }
}
