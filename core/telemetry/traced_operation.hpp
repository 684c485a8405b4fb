// One operation a front end traces (a run, a warmup, a fork, an MCP tool call): its root
// span, the PhaseTracer its phases report to, and the trace sent at its end. Made only
// when the environment asks for traces (otlp_exporter.hpp); the root continues the
// caller's TRACEPARENT when it names one.
//
// Threads: phases() may be used from the operation's threads at once; the rest belongs
// to the thread that started it.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "telemetry/otlp_exporter.hpp"
#include "telemetry/tracer.hpp"

namespace corral::telemetry {

class TracedOperation {
 public:
  using Warn = std::function<void(const std::string&)>;
  // The operation `name`, traced when `env` asks for it (nullptr otherwise); what of the
  // settings cannot be followed is told to `warn`, once.
  static std::unique_ptr<TracedOperation> start(const std::string& name, const EnvLookup& env,
                                                const std::string& version, const Warn& warn);
  // A trace sent to `settings`, for tests and front ends that have settings already.
  TracedOperation(const std::string& name, OtlpSettings settings, Resource resource,
                  std::optional<RemoteParent> parent, Warn warn);
  // Sends nothing unless finish() was called.
  ~TracedOperation();

  PhaseTracer& phases() { return phases_; }
  Span& root() { return *root_; }
  // Marks the operation failed with `message` (the first failure said is kept).
  void fail(std::string_view message);
  // Ends the operation with `exit_code` (its status an error unless it is 0, or fail()
  // said so), sends the trace and waits for the collector at most `bound` (never longer
  // than the exporter's timeout); warns once when the trace could not be sent.
  void finish(int exit_code, std::chrono::milliseconds bound = std::chrono::milliseconds(1000));

 private:
  Tracer tracer_;
  std::unique_ptr<Span> root_;
  OperationTracer phases_;
  OtlpSettings settings_;
  Resource resource_;
  Warn warn_;
  std::string failure_;
  bool finished_ = false;
};

}  // namespace corral::telemetry
