// Sending a trace to an OpenTelemetry collector over OTLP/HTTP, configured as the
// exporter specification says (../shared/specs/otel/exporter.md): the OTEL_EXPORTER_OTLP_*
// variables (the traces-specific ones first), OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES, OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER. One POST per
// operation, made on a thread of its own over a plain socket (corral links no HTTP
// library: its start stays fast), so a slow or dead collector never holds the run: the
// caller waits for it a bounded time at its end.
//
// Threads: otlp_settings() and resource_of() are pure; a TraceExport is owned by one
// thread, and its sending thread lives on, detached, past it when the wait gave up.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/environment.hpp"
#include "telemetry/otlp_encoding.hpp"

namespace corral::telemetry {

struct OtlpSettings {
  std::string url;    // where traces go: http://host[:port]/path
  bool json = false;  // OTEL_EXPORTER_OTLP_PROTOCOL=http/json; else http/protobuf
  std::vector<std::pair<std::string, std::string>> headers;  // values may be secrets: never shown
  std::chrono::milliseconds timeout{10'000};                 // OTEL_EXPORTER_OTLP_TIMEOUT
};

struct OtlpChoice {
  std::optional<OtlpSettings> settings;  // nullopt: no traces are sent
  std::vector<std::string> warnings;     // settings corral could not follow, for the user
};
// What the environment asks for: traces only when an endpoint variable is set (and not
// disabled). A grpc protocol, an https endpoint (this exporter speaks plain HTTP), or a
// malformed endpoint, header or timeout is a warning, and what can be sent still is.
OtlpChoice otlp_settings(const EnvLookup& env);
// The resource: service.name (OTEL_SERVICE_NAME, else OTEL_RESOURCE_ATTRIBUTES' service.name,
// else "corral"), OTEL_RESOURCE_ATTRIBUTES' other key=value pairs (percent-decoded), and
// corral's version as service.version and the scope's version.
Resource resource_of(const EnvLookup& env, const std::string& version);

// One trace sent to the collector.
class TraceExport {
 public:
  // Starts sending `body` (encoded as `settings` says) on a thread of its own.
  TraceExport(const OtlpSettings& settings, std::string body);
  ~TraceExport();
  TraceExport(const TraceExport&) = delete;
  TraceExport& operator=(const TraceExport&) = delete;

  // Waits at most `bound` for the collector's answer; true when it came (or the send failed).
  bool wait(std::chrono::milliseconds bound);
  // After wait() returned true: why the collector did not take the trace, or nullopt when it did.
  std::optional<std::string> problem() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// Sends the OTLP/HTTP POST of `body` to `settings.url` and reads the status line of the
// answer, within `settings.timeout`; nullopt when it is 2xx, else why not (for tests and
// TraceExport's thread).
std::optional<std::string> post_otlp(const OtlpSettings& settings, const std::string& body);

}  // namespace corral::telemetry
