// What core tells the user. The CLI writes it to the terminal; tests capture it.
#pragma once

#include <csignal>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/phase_trace.hpp"

namespace corral {

// A step of a phase the user waits for ("pack", "create", "resume", "upload", "exec",
// "download"). Phases may overlap (a pack while the sandbox is created, shards side by
// side): each is reported on its own, by name and shard. README.md (Progress) names the
// phases and the JSON keys front-ends rely on.
struct PhaseEvent {
  enum class State { start, bytes, done, failed };
  std::string phase;
  State state = State::start;
  std::uint64_t bytes = 0;  // bytes: moved so far; start: 0
  std::uint64_t total = 0;  // start and bytes: of this many (0 = a wait, or not known yet)
  std::int64_t ms = 0;      // done and failed: how long the phase took
  int shard = -1;           // the fan-out shard it belongs to; -1 = the run itself
  // "slot-wait" only: whose slot, how many of the limit are in use, and why it waits
  // ("limit": every slot taken; "rate": creates per minute; "backoff": the provider
  // asked to wait).
  std::string provider;
  int in_use = -1;
  int limit = -1;
  std::string reason;
};

// The user's stop as a message names it: "Ctrl-C" (SIGINT), "SIGTERM", "SIGHUP".
inline const char* stop_signal_words(int signal) {
  return signal == SIGTERM ? "SIGTERM" : signal == SIGHUP ? "SIGHUP" : signal == SIGINT ? "Ctrl-C" : "a signal";
}

class Ui {
 public:
  virtual ~Ui() = default;
  virtual void out(std::string_view data) = 0;        // the command's stdout, byte for byte
  virtual void err(std::string_view data) = 0;        // the command's stderr, byte for byte
  virtual void info(const std::string& message) = 0;  // shown with --verbose
  virtual void note(const std::string& message) = 0;  // always shown
  virtual void warn(const std::string& message) = 0;
  virtual void progress(const std::string& message) = 0;
  // A phase started, moved bytes or ended; shown live on a terminal, or as JSON lines
  // (--progress). Ignored by default. May be called from a plugin's threads.
  virtual void phase(const PhaseEvent&) {}
  virtual bool cancelled() = 0;  // true once the user asked to stop (Ctrl-C)
  // How often the user asked to stop so far: a second ask kills a command still ending by
  // the signal it was passed, and stops a download begun after the first.
  virtual int stop_requests() { return cancelled() ? 1 : 0; }
  // The signal of the user's first ask, passed on to a command that can trap it: SIGINT
  // (Ctrl-C), SIGTERM or SIGHUP; 0 before any.
  virtual int stop_signal() { return cancelled() ? 2 /* SIGINT */ : 0; }
  // The command's input (what is piped into corral): up to `capacity` bytes, waiting at
  // most `timeout_ms`; 0 at its end, -1 when none came in time. None by default. Called
  // from one thread at a time, beside the other methods.
  virtual long read_input(char* /*buffer*/, std::size_t /*capacity*/, int /*timeout_ms*/) { return 0; }
  // Whether input is waiting to be read now (a run that cannot pass it on refuses it).
  virtual bool input_waiting() { return false; }
  // The size of the user's terminal (`run -t`); false when there is none.
  virtual bool window_size(std::uint16_t& /*rows*/, std::uint16_t& /*cols*/) { return false; }
  // A command on a terminal of its own starts (true) or ended (false): the user's terminal
  // passes every key on (raw) meanwhile, and nothing of corral's is drawn over it.
  virtual void command_terminal(bool /*on*/) {}
  // Where the phases become trace spans (phase_trace.hpp); null when nobody traces.
  virtual PhaseTracer* tracer() { return nullptr; }
};

}  // namespace corral
