// The pieces of a fan-out that need no sandbox: substitution, the shard Ui's line
// buffering and files, the summary and the handles file.
#include <doctest/doctest.h>

#include <thread>

#include "cli.hpp"
#include "corral/json.hpp"
#include "lease/fanout.hpp"
#include "lease/shard_ui.hpp"

using corral::test::read_file;
using corral::test::TempDir;

namespace {

// A Ui that records what reaches the terminal.
struct RecordingUi : corral::Ui {
  std::vector<std::string> outs, errs, notes;
  bool stop = false;
  void out(std::string_view d) override { outs.emplace_back(d); }
  void err(std::string_view d) override { errs.emplace_back(d); }
  void info(const std::string&) override {}
  void note(const std::string& m) override { notes.push_back(m); }
  void warn(const std::string& m) override { notes.push_back(m); }
  void progress(const std::string&) override {}
  bool cancelled() override { return stop; }
};

}  // namespace

TEST_CASE("{shard} and {shards} are replaced in every argv word and in the shell text") {
  corral::Command c;
  c.argv = {"run", "--part={shard}/{shards}", "{shard}{shard}", "{shar}", "{SHARD}"};
  c.shell = "echo {shard} of {shards}";
  corral::Command s = corral::shard_command(c, 2, 8);
  CHECK(s.argv == std::vector<std::string>{"run", "--part=2/8", "22", "{shar}", "{SHARD}"});
  CHECK(s.shell == "echo 2 of 8");
  CHECK(c.argv[1] == "--part={shard}/{shards}");  // the shared request is left alone
}

TEST_CASE("a shard's output reaches the terminal as whole prefixed lines, per stream") {
  RecordingUi user;
  corral::ShardTerminal terminal(user);
  corral::ShardUi ui(terminal, 1, 3, {});
  ui.out("ab");
  CHECK(user.outs.empty());  // nothing until the line is complete
  ui.err("e1\ne");
  ui.out("c\nde");
  ui.out("f\n");
  ui.out("g");
  CHECK(user.outs == std::vector<std::string>{"[1/3] abc\n", "[1/3] def\n"});
  CHECK(user.errs == std::vector<std::string>{"[1/3] e1\n"});
  ui.flush();
  CHECK(user.outs.back() == "[1/3] g\n");
  CHECK(user.errs.back() == "[1/3] e\n");
  ui.note("creating");
  CHECK(user.notes.back() == "[1/3] creating");
}

TEST_CASE("a line longer than the bound is written as a line of its own") {
  RecordingUi user;
  corral::ShardTerminal terminal(user);
  corral::ShardUi ui(terminal, 0, 1, {});
  ui.out(std::string(corral::ShardUi::kMaxLine, 'x'));
  REQUIRE(user.outs.size() == 1);
  CHECK(user.outs[0].size() == corral::ShardUi::kMaxLine + 7);
}

TEST_CASE("a shard stops when the user or the fan-out asks") {
  RecordingUi user;
  corral::ShardTerminal terminal(user);
  corral::ShardUi ui(terminal, 0, 2, {});
  CHECK_FALSE(ui.cancelled());
  terminal.stop = true;
  CHECK(ui.cancelled());
  terminal.stop = false;
  user.stop = true;
  CHECK(ui.cancelled());
}

TEST_CASE("--shard-output files get the bytes unchanged; an unwritable folder is refused clearly") {
  TempDir t;
  RecordingUi user;
  corral::ShardTerminal terminal(user);
  {
    corral::ShardUi ui(terminal, 3, 4, t.path());
    ui.out("a\nb");
    ui.err("x");
    ui.flush();
  }
  CHECK(read_file(t.path() / "shard-3.stdout") == "a\nb");
  CHECK(read_file(t.path() / "shard-3.stderr") == "x");
  CHECK(user.outs.empty());
  try {
    corral::ShardUi bad(terminal, 0, 1, t.path() / "missing" / "deeper");
    FAIL("no error");
  } catch (const corral::Error& e) {
    CHECK(e.code() == corral::ErrorCode::invalid_argument);
    CHECK(std::string(e.what()).find("shard-0.stdout") != std::string::npos);
  }
}

TEST_CASE("the summary names each failing shard and why; stopped shards say so") {
  corral::FanoutResult r;
  r.shards.resize(4);
  r.shards[1].result.exit_code = 3;
  r.shards[1].started = true;
  r.shards[2].result.exit_code = 75;
  r.shards[2].result.error = corral::Error(corral::ErrorCode::quota, "limit reached", "stop some");
  r.shards[3].result.exit_code = 130;
  r.shards[3].stopped = true;
  auto lines = corral::fanout_summary(r);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].text == "shard 1/4 failed with exit code 3");
  CHECK(lines[1].text == "shard 2/4 could not start: limit reached");
  CHECK(lines[1].hint == "stop some");
  CHECK(lines[2].text == "shard 3/4 cancelled: stopped because another shard failed");
  CHECK(lines[2].stopped);
}

TEST_CASE("the handles file lists every shard by index, null where no sandbox was made") {
  corral::SessionHandle h;
  h.provider = "local";
  h.lease_id = "abc";
  std::string text = corral::shard_handles_to_json({h, std::nullopt, h});
  auto doc = corral::json::parse(text, "handles");
  REQUIRE(doc["shards"].Size() == 3);
  CHECK(doc["shards"][0]["leaseId"].GetString() == std::string("abc"));
  CHECK(doc["shards"][1].IsNull());
  CHECK(text.back() == '\n');
}

TEST_CASE("bad fan-outs are refused before any provider is asked") {
  TempDir t;
  RecordingUi user;
  corral::Config config = corral::Config::from(std::nullopt, std::nullopt);
  corral::Providers providers([]() -> const corral::Registry& { throw std::logic_error("no registry needed"); },
                              config, [](const std::string&) { return std::optional<std::string>(); });
  corral::ClaimStore claims(t.path());
  corral::LeaseContext ctx{claims, providers, user};
  auto refusal = [&](int shards, int parallel, const std::string& lease) {
    corral::FanoutRequest r;
    r.shards = shards;
    r.max_parallel = parallel;
    r.run.lease = lease;
    try {
      corral::check_fanout(ctx, r);
    } catch (const corral::Error& e) {
      CHECK(e.code() == corral::ErrorCode::invalid_argument);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refusal(0, 4, "") == "--shards 0: a fan-out runs 1 to 64 sandboxes");
  CHECK(refusal(65, 4, "") == "--shards 65: a fan-out runs 1 to 64 sandboxes");
  CHECK(refusal(4, 0, "").find("--max-parallel 0") == 0);
  CHECK(refusal(4, 4, "calm-otter").find("--shards cannot reuse a lease (--id)") == 0);
}
