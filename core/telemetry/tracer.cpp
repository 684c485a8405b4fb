#include "telemetry/tracer.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iterator>

#include "corral/os/random.hpp"

namespace corral::telemetry {
namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Random bytes for an id; never all zero (an invalid id in W3C Trace Context).
template <std::size_t N>
std::array<std::uint8_t, N> random_id() {
  std::array<std::uint8_t, N> id{};
  do {
    const std::string bytes = os::random_bytes(N);
    std::memcpy(id.data(), bytes.data(), N);
  } while (std::all_of(id.begin(), id.end(), [](std::uint8_t b) { return b == 0; }));
  return id;
}

// `text` as lower-case hex of exactly `out.size()` bytes, not all zero.
template <std::size_t N>
bool parse_hex_id(std::string_view text, std::array<std::uint8_t, N>& out) {
  if (text.size() != 2 * N) return false;
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  bool any = false;
  for (std::size_t i = 0; i < N; ++i) {
    const int hi = digit(text[2 * i]), lo = digit(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<std::uint8_t>(hi * 16 + lo);
    any = any || out[i] != 0;
  }
  return any;
}

}  // namespace

std::string hex(const std::uint8_t* bytes, std::size_t size) {
  static const char* const kDigits = "0123456789abcdef";
  std::string out;
  out.reserve(2 * size);
  for (std::size_t i = 0; i < size; ++i) {
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 15];
  }
  return out;
}

std::optional<RemoteParent> parse_traceparent(std::string_view text) {
  // version "-" trace-id "-" parent-id "-" flags; a later version may append fields after
  // another "-", which a reader of version 00 ignores.
  if (text.size() < 55 || text[2] != '-' || text[35] != '-' || text[52] != '-') return std::nullopt;
  std::array<std::uint8_t, 1> version{}, flags{};
  const std::string_view v = text.substr(0, 2);
  if (v == "ff" || (!parse_hex_id(v, version) && v != "00")) return std::nullopt;
  if (v == "00" && text.size() != 55) return std::nullopt;
  if (text.size() > 55 && text[55] != '-') return std::nullopt;
  RemoteParent p;
  if (!parse_hex_id(text.substr(3, 32), p.trace) || !parse_hex_id(text.substr(36, 16), p.span)) return std::nullopt;
  if (!parse_hex_id(text.substr(53, 2), flags) && text.substr(53, 2) != "00") return std::nullopt;
  p.flags = flags[0];
  return p;
}

std::string format_traceparent(const TraceId& trace, const SpanId& span, std::uint8_t flags) {
  return "00-" + hex(trace.data(), trace.size()) + "-" + hex(span.data(), span.size()) + "-" + hex(&flags, 1);
}

Span::~Span() { end(); }

void Span::attribute(std::string_view key, std::int64_t value) {
  data_.attributes.emplace_back(std::string(key), value);
}
void Span::attribute(std::string_view key, std::string_view value) {
  data_.attributes.emplace_back(std::string(key), std::string(value));
}
void Span::attribute(std::string_view key, bool value) { data_.attributes.emplace_back(std::string(key), value); }

void Span::end(std::string_view error) {
  if (ended_) return;
  ended_ = true;
  data_.end_ns = now_ns();
  if (!error.empty()) {
    data_.error = true;
    data_.status_message = std::string(error.substr(0, 1024));
  }
  tracer_.finished(data_);
}

std::string Span::traceparent() const { return format_traceparent(data_.trace, data_.id, data_.flags); }

Tracer::Tracer(std::optional<RemoteParent> parent) : parent_(parent) {}

std::unique_ptr<Span> Tracer::start(std::string name, const Span* parent) {
  SpanData d;
  d.name = std::move(name);
  d.id = random_id<8>();
  if (parent) {
    d.trace = parent->data().trace;
    d.parent = parent->data().id;
    d.flags = parent->data().flags;
  } else if (parent_) {
    d.trace = parent_->trace;
    d.parent = parent_->span;
    d.remote_parent = true;
    d.flags = parent_->flags;
  } else {
    d.trace = random_id<16>();
  }
  d.start_ns = now_ns();
  return std::unique_ptr<Span>(new Span(*this, std::move(d)));
}

void Tracer::finished(SpanData data) {
  std::lock_guard lock(mutex_);
  done_.push_back(std::move(data));
}

std::vector<SpanData> Tracer::take() {
  std::lock_guard lock(mutex_);
  return std::exchange(done_, {});
}

std::unique_ptr<PhaseSpan> OperationTracer::start(std::string_view phase, int shard) {
  const Span* parent = &root_;
  if (shard >= 0) {
    std::lock_guard lock(mutex_);
    auto it = std::find_if(shards_.begin(), shards_.end(), [&](const auto& s) { return s.first == shard; });
    if (it == shards_.end()) {
      shards_.emplace_back(shard, tracer_.start("shard " + std::to_string(shard), &root_));
      shards_.back().second->attribute("corral.shard", static_cast<std::int64_t>(shard));
      it = std::prev(shards_.end());
    }
    parent = it->second.get();
  }
  return tracer_.start(std::string(phase), parent);
}

void OperationTracer::end_shards() {
  std::lock_guard lock(mutex_);
  for (auto& [index, span] : shards_) span->end();
}

}  // namespace corral::telemetry
