// What core tells the user. The CLI writes it to the terminal; tests capture it.
#pragma once

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
  // Where the phases become trace spans (phase_trace.hpp); null when nobody traces.
  virtual PhaseTracer* tracer() { return nullptr; }
};

}  // namespace corral
