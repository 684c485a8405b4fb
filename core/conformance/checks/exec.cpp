// Checks of exec-stdin and exec-signals: the user's input reaches the command to its end,
// and Ctrl-C reaches it as a signal it can trap before --stop-timeout kills it.
#include "conformance/checks/checks.hpp"

#include <fmt/format.h>

#include "base/hash.hpp"
#include "base/printable.hpp"

namespace corral::conformance {

namespace {

// How long a run that must end by its input or its signal may take before it counts as hung.
constexpr std::int64_t kHungSeconds = 60;
constexpr std::int64_t kPromptMs = 30'000;  // as run.cpp's: how long a stop may take to act

std::string sha256_of(std::string_view data) {
  Sha256 digest;
  digest.update(data);
  return digest.hex();
}

void stdin_input(CheckContext& cx) {
  // Every byte value, in more than a pipe holds: the command must get it all and its end.
  std::string input = "first line\n";
  for (int i = 0; i < 4096; ++i)
    for (int b = 0; b < 256; ++b) input += static_cast<char>(b);
  Observed o = cx.kit.run({.argv = {"cat"}, .timeout_seconds = kHungSeconds, .input = input});
  if (o.result.error && o.result.error->code() == ErrorCode::timeout)
    fail(fmt::format("cat was still reading {} s later: the command never saw the input's end (close its stdin "
                     "when read_input returns 0)",
                     kHungSeconds));
  o.expect_exit(0);
  if (o.out_size != input.size() || o.out_sha != sha256_of(input))
    fail(fmt::format("cat gave back {} bytes (sha256 {}) of the {} piped in{}: input must reach the command byte "
                     "for byte, in order",
                     o.out_size, o.out_sha.substr(0, 12), input.size(),
                     o.out_size == 0 ? "; its stdin looked empty" : ""));
  // A command that stops reading early ends the run; nothing waits for the rest.
  Observed head = cx.kit.run({.argv = {"head", "-c", "5"}, .timeout_seconds = kHungSeconds, .input = input});
  head.expect_exit(0);
  head.expect_out("first");
}

void signals(CheckContext& cx) {
  if (std::string why = cx.streaming_problem(); !why.empty())
    fail("Ctrl-C could not be pressed while the command ran: " + why + " (see output-streams)");
  Observed o = cx.kit.run({.shell = "trap 'echo trapped; exit 3' INT TERM; echo started; while :; do sleep 0.1; done",
                           .cancel_marker = "started",
                           .stop_timeout_ms = kPromptMs});
  if (o.out.find("trapped") == std::string::npos)
    fail(fmt::format("the command's trap never ran (stdout was {}): pass the signal take_signal() returns to the "
                     "command's process group",
                     literal(o.out)) +
         o.why());
  if (!o.result.error || o.result.error->code() != ErrorCode::cancelled || o.result.exit_code != kExitCancelled)
    fail(fmt::format("the run ended with exit code {} instead of as interrupted (130)", o.result.exit_code) + o.why());
  if (o.handle().exit_code != 3)
    fail(fmt::format("the handle's exit code is {}, not the 3 the command's trap exited with",
                     o.handle().exit_code ? std::to_string(*o.handle().exit_code) : std::string("missing")));
  if (o.ms > kPromptMs) fail(fmt::format("the run took {} ms to end after its trap ran", o.ms));
  cx.kit.expect_cleaned_up(o);
  // A command that ignores it is killed once --stop-timeout has passed.
  Observed ignoring = cx.kit.run(
      {.shell = "trap '' INT TERM; echo started; sleep 120; echo not-reached", .cancel_marker = "started", .stop_timeout_ms = 1000});
  if (!ignoring.result.error || ignoring.result.error->code() != ErrorCode::cancelled)
    fail(fmt::format("a command ignoring its signal ended with exit code {} instead of being killed after "
                     "--stop-timeout",
                     ignoring.result.exit_code) +
         ignoring.why());
  expect_stopped_in_time(ignoring);
  if (ignoring.out.find("not-reached") != std::string::npos) fail("the command ran on past --stop-timeout");
  if (ignoring.ms > 1000 + kPromptMs)
    fail(fmt::format("the run took {} ms to end with a 1 s --stop-timeout", ignoring.ms));
  cx.kit.expect_cleaned_up(ignoring);
}

}  // namespace

std::vector<CheckDef> exec_checks() {
  using F = Feature;
  return {
      {"stdin", "input piped into corral reaches the command byte for byte, and its end", {F::exec_stdin}, {},
       &stdin_input},
      {"signals", "Ctrl-C reaches the command as a signal its trap can act on; one that ignores it is killed after "
                  "--stop-timeout",
       {F::exec_signals}, {}, &signals},
  };
}

}  // namespace corral::conformance
