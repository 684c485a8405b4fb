// Where the phases a run waits for become trace spans, when the user traces corral
// (OpenTelemetry: core/telemetry/). Core reports phases through PhaseReport; a Ui that
// traces hands it a PhaseTracer, and each phase becomes a span of the operation's trace.
//
// Threads: start() may be called from several threads at once (a fan-out's shards, a
// pack beside a create); a PhaseSpan belongs to the thread that started it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace corral {

class PhaseSpan {
 public:
  virtual ~PhaseSpan() = default;
  // Records an attribute of the phase ("corral.bytes").
  virtual void attribute(std::string_view key, std::int64_t value) = 0;
  virtual void attribute(std::string_view key, std::string_view value) = 0;
  // Ends the span (once; later calls do nothing), as failed with `error` when not empty.
  virtual void end(std::string_view error = {}) = 0;
  // The W3C traceparent naming this span, for a process that continues the trace (the
  // sandboxed command's TRACEPARENT).
  virtual std::string traceparent() const = 0;
};

class PhaseTracer {
 public:
  virtual ~PhaseTracer() = default;
  // A span for `phase`, a child of the operation's span (of shard `shard`'s, in a fan-out).
  virtual std::unique_ptr<PhaseSpan> start(std::string_view phase, int shard) = 0;
};

}  // namespace corral
