// Traces of corral's own operations (OpenTelemetry): each run, warmup, fork or MCP tool
// call is one trace, a root span named after the operation and a child span per phase it
// waited for. The tracer only collects finished spans; otlp_exporter.hpp sends them.
//
// Threads: a Tracer may be used from several threads at once (spans start and end on a
// fan-out's threads); a Span belongs to one thread at a time.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "base/phase_trace.hpp"

namespace corral::telemetry {

using TraceId = std::array<std::uint8_t, 16>;
using SpanId = std::array<std::uint8_t, 8>;

// A span of another process that this trace continues (W3C Trace Context).
struct RemoteParent {
  TraceId trace{};
  SpanId span{};
  std::uint8_t flags = 1;  // sampled
};
// The parent a `traceparent` value names ("00-<32 hex>-<16 hex>-<2 hex>"); nullopt for
// anything the W3C format refuses (wrong length, upper-case or non-hex digits, an all-zero
// id, version ff).
std::optional<RemoteParent> parse_traceparent(std::string_view text);
// "00-<trace>-<span>-<flags>".
std::string format_traceparent(const TraceId& trace, const SpanId& span, std::uint8_t flags);
std::string hex(const std::uint8_t* bytes, std::size_t size);

using AttributeValue = std::variant<std::string, std::int64_t, bool>;
using Attributes = std::vector<std::pair<std::string, AttributeValue>>;

struct SpanData {
  std::string name;
  TraceId trace{};
  SpanId id{};
  std::optional<SpanId> parent;
  bool remote_parent = false;  // the parent is another process's span (TRACEPARENT)
  std::uint8_t flags = 1;
  std::int64_t start_ns = 0;  // Unix nanoseconds
  std::int64_t end_ns = 0;
  Attributes attributes;
  bool error = false;
  std::string status_message;  // with error
};

class Tracer;

// One span being timed; ended (with the status set so far) when end() is called or it is
// destroyed.
class Span : public PhaseSpan {
 public:
  ~Span() override;
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

  void attribute(std::string_view key, std::int64_t value) override;
  void attribute(std::string_view key, std::string_view value) override;
  void attribute(std::string_view key, bool value);
  // A literal is text, never the bool a pointer would convert to.
  void attribute(std::string_view key, const char* value) { attribute(key, std::string_view(value)); }
  void end(std::string_view error = {}) override;
  std::string traceparent() const override;
  const SpanData& data() const { return data_; }

 private:
  friend class Tracer;
  Span(Tracer& tracer, SpanData data) : tracer_(tracer), data_(std::move(data)) {}
  Tracer& tracer_;
  SpanData data_;
  bool ended_ = false;
};

class Tracer {
 public:
  // A tracer whose root spans continue `parent` (the caller's TRACEPARENT) when given,
  // else start traces of their own.
  explicit Tracer(std::optional<RemoteParent> parent = std::nullopt);
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // A span named `name` under `parent`, or a root span when null.
  std::unique_ptr<Span> start(std::string name, const Span* parent = nullptr);
  // The spans ended so far, taken out.
  std::vector<SpanData> take();

 private:
  friend class Span;
  void finished(SpanData data);

  std::optional<RemoteParent> parent_;
  std::mutex mutex_;
  std::vector<SpanData> done_;
};

// A PhaseTracer (what core's phases report to) whose spans are children of `root`, or, in
// a fan-out, of one span per shard ("shard 3") made on first use.
class OperationTracer : public PhaseTracer {
 public:
  OperationTracer(Tracer& tracer, Span& root) : tracer_(tracer), root_(root) {}
  std::unique_ptr<PhaseSpan> start(std::string_view phase, int shard) override;
  // Ends the shard spans (at the end of the operation).
  void end_shards();

 private:
  Tracer& tracer_;
  Span& root_;
  std::mutex mutex_;
  std::vector<std::pair<int, std::unique_ptr<Span>>> shards_;
};

}  // namespace corral::telemetry
