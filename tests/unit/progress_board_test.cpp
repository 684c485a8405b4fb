// The live progress line's layout and the --progress json objects, without a terminal.
#include <doctest/doctest.h>

#include "corral/errors.hpp"
#include "corral/json.hpp"
#include "progress_board.hpp"

using corral::PhaseEvent;
using corral::cli::PhaseBoard;

namespace {

PhaseEvent event(const char* phase, PhaseEvent::State state, std::uint64_t bytes = 0, std::uint64_t total = 0,
                 int shard = -1) {
  PhaseEvent e;
  e.phase = phase;
  e.state = state;
  e.bytes = bytes;
  e.total = total;
  e.shard = shard;
  return e;
}

std::size_t columns(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

}  // namespace

TEST_CASE("the live line shows a bar for byte-counted phases and the time of waits, side by side") {
  PhaseBoard board;
  const auto t0 = PhaseBoard::Clock::now();
  board.update(event("pack", PhaseEvent::State::start, 0, 4 << 20), t0);
  board.update(event("create", PhaseEvent::State::start), t0);
  board.update(event("pack", PhaseEvent::State::bytes, 1 << 20, 4 << 20), t0 + std::chrono::seconds(1));
  const std::string line = board.line(t0 + std::chrono::seconds(1), 200);
  CHECK(line.find("pack [===>") != std::string::npos);
  CHECK(line.find("25%") != std::string::npos);
  CHECK(line.find("/s") != std::string::npos);
  CHECK(line.find("create 1.0s") != std::string::npos);
  board.update(event("pack", PhaseEvent::State::done), t0 + std::chrono::seconds(2));
  board.update(event("create", PhaseEvent::State::done), t0 + std::chrono::seconds(2));
  CHECK(board.idle());
  CHECK(board.line(t0, 200).empty());
}

TEST_CASE("the line fits the width given at each draw: narrower drops the bars, too narrow draws nothing") {
  PhaseBoard board;
  const auto t0 = PhaseBoard::Clock::now();
  board.update(event("upload", PhaseEvent::State::start, 0, 100 << 20), t0);
  board.update(event("upload", PhaseEvent::State::bytes, 30 << 20, 100 << 20), t0 + std::chrono::seconds(3));
  board.set_note("waiting for Kubernetes Pod corral-abc to be Ready");
  const auto now = t0 + std::chrono::seconds(3);
  for (std::size_t width = 20; width <= 200; ++width) {
    const std::string line = board.line(now, width);
    CHECK_MESSAGE(columns(line) <= width - 1, width);
    CHECK_MESSAGE(line.rfind("corral:", 0) == 0, width);
  }
  CHECK(board.line(now, 200).find("[") != std::string::npos);
  CHECK(board.line(now, 60).find("[") == std::string::npos);
  for (std::size_t width : {0, 1, 10, 19}) CHECK(board.line(now, width).empty());
}

TEST_CASE("a line cut at the edge is cut after a whole word, and says so") {
  PhaseBoard board;
  const auto t0 = PhaseBoard::Clock::now();
  board.update(event("create", PhaseEvent::State::start), t0);
  board.set_note("waiting for Kubernetes Pod corral-abc to be Ready");
  // "corral: create 1.0s | waiting for Kubernetes Pod corral-abc to be Ready..." is 75.
  for (std::size_t width = 30; width < 76; ++width) {
    const std::string line = board.line(t0 + std::chrono::seconds(1), width);
    CAPTURE(width);
    CAPTURE(line);
    CHECK(columns(line) <= width - 1);
    REQUIRE(line.size() > 3);
    CHECK(line.substr(line.size() - 3) == "...");
    // What is left before the mark ends a word of the full line.
    const std::string kept = line.substr(0, line.size() - 3);
    const std::string full = "corral: create 1.0s | waiting for Kubernetes Pod corral-abc to be Ready";
    CHECK(full.rfind(kept, 0) == 0);
    CHECK((full.size() == kept.size() || full[kept.size()] == ' '));
  }
}

TEST_CASE("a fan-out's shards in one phase are summed up on the line") {
  PhaseBoard board;
  const auto t0 = PhaseBoard::Clock::now();
  for (int shard = 0; shard < 3; ++shard) board.update(event("create", PhaseEvent::State::start, 0, 0, shard), t0);
  board.update(event("upload", PhaseEvent::State::start, 0, 100, 1), t0);
  const std::string line = board.line(t0 + std::chrono::seconds(2), 200);
  CHECK(line.find("create x3 2.0s") != std::string::npos);
  CHECK(line.find("upload [") != std::string::npos);
  board.update(event("create", PhaseEvent::State::done, 0, 0, 0), t0);
  CHECK(board.line(t0 + std::chrono::seconds(2), 200).find("create x2") != std::string::npos);
}

TEST_CASE("the wait for the command ends with its first output; other phases still show") {
  PhaseBoard board;
  const auto t0 = PhaseBoard::Clock::now();
  board.update(event("exec", PhaseEvent::State::start), t0);
  CHECK(board.line(t0, 100).find("exec") != std::string::npos);
  board.output_started();
  CHECK(board.idle());
  board.update(event("download", PhaseEvent::State::start), t0);
  CHECK(board.line(t0, 100).find("download") != std::string::npos);
  CHECK(board.line(t0, 100).find("exec") == std::string::npos);
}

TEST_CASE("--progress json objects carry the documented keys") {
  auto parsed = [](const PhaseEvent& e) { return corral::json::parse(corral::cli::phase_json_line(e), "line"); };
  auto start = parsed(event("create", PhaseEvent::State::start));
  CHECK(std::string(start["phase"].GetString()) == "create");
  CHECK(std::string(start["state"].GetString()) == "start");
  CHECK(!start.HasMember("bytes"));
  CHECK(!start.HasMember("shard"));
  auto moving = parsed(event("upload", PhaseEvent::State::bytes, 5, 10, 2));
  CHECK(std::string(moving["state"].GetString()) == "progress");
  CHECK(moving["bytes"].GetUint64() == 5);
  CHECK(moving["total"].GetUint64() == 10);
  CHECK(moving["shard"].GetInt() == 2);
  PhaseEvent done = event("upload", PhaseEvent::State::done, 10, 10);
  done.ms = 42;
  auto ended = parsed(done);
  CHECK(std::string(ended["state"].GetString()) == "done");
  CHECK(ended["ms"].GetInt64() == 42);
  CHECK(corral::cli::phase_json_line(done).back() == '\n');
}

TEST_CASE("--progress names a mode; anything else is refused saying which are") {
  CHECK(corral::cli::parse_progress_mode("auto") == corral::cli::ProgressMode::automatic);
  CHECK(corral::cli::parse_progress_mode("never") == corral::cli::ProgressMode::never);
  CHECK(corral::cli::parse_progress_mode("json") == corral::cli::ProgressMode::json);
  try {
    corral::cli::parse_progress_mode("bogus");
    FAIL("accepted");
  } catch (const corral::Error& e) {
    CHECK(e.code() == corral::ErrorCode::invalid_argument);
    CHECK(std::string(e.hint()).find("json") != std::string::npos);
  }
}
