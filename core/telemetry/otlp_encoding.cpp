#include "telemetry/otlp_encoding.hpp"

#include "corral/json.hpp"

namespace corral::telemetry {
namespace {

// Protobuf's wire format: each field a key (number << 3 | wire type) and its value.
// Proto3 leaves a field at its default out, except a oneof member, which is always written.
class ProtoWriter {
 public:
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      out_ += static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    out_ += static_cast<char>(v);
  }
  void key(int field, int wire_type) {
    varint(static_cast<std::uint64_t>(field) << 3 | static_cast<unsigned>(wire_type));
  }
  void uint(int field, std::uint64_t v, bool always = false) {
    if (v == 0 && !always) return;
    key(field, 0);
    varint(v);
  }
  void fixed64(int field, std::uint64_t v) {
    if (v == 0) return;
    key(field, 1);
    for (int i = 0; i < 8; ++i) out_ += static_cast<char>(v >> (8 * i) & 0xff);
  }
  void fixed32(int field, std::uint32_t v) {
    if (v == 0) return;
    key(field, 5);
    for (int i = 0; i < 4; ++i) out_ += static_cast<char>(v >> (8 * i) & 0xff);
  }
  void bytes(int field, std::string_view v, bool always = false) {
    if (v.empty() && !always) return;
    key(field, 2);
    varint(v.size());
    out_ += v;
  }
  void message(int field, const ProtoWriter& m) { bytes(field, m.out_, true); }
  const std::string& str() const { return out_; }

 private:
  std::string out_;
};

// SpanFlags: the W3C trace flags in the low byte, and whether the parent is remote
// (bit 9), which is known (bit 8).
std::uint32_t span_flags(const SpanData& s) {
  return static_cast<std::uint32_t>(s.flags) | 0x100u | (s.remote_parent ? 0x200u : 0u);
}

std::string_view id_bytes(const std::uint8_t* id, std::size_t size) {
  return {reinterpret_cast<const char*>(id), size};
}

// KeyValue { string key = 1; AnyValue value = 2; } with AnyValue's oneof { string_value = 1;
// bool_value = 2; int_value = 3; } (common.proto).
ProtoWriter key_value(const std::string& key, const AttributeValue& value) {
  ProtoWriter any;
  if (const auto* s = std::get_if<std::string>(&value)) any.bytes(1, *s, true);
  else if (const auto* b = std::get_if<bool>(&value)) any.uint(2, *b ? 1 : 0, true);
  else any.uint(3, static_cast<std::uint64_t>(std::get<std::int64_t>(value)), true);
  ProtoWriter kv;
  kv.bytes(1, key);
  kv.message(2, any);
  return kv;
}

// Span (trace.proto): trace_id 1, span_id 2, parent_span_id 4, name 5, kind 6,
// start_time_unix_nano 7, end_time_unix_nano 8, attributes 9, status 15, flags 16.
ProtoWriter span_message(const SpanData& s) {
  ProtoWriter m;
  m.bytes(1, id_bytes(s.trace.data(), s.trace.size()));
  m.bytes(2, id_bytes(s.id.data(), s.id.size()));
  if (s.parent) m.bytes(4, id_bytes(s.parent->data(), s.parent->size()));
  m.bytes(5, s.name);
  m.uint(6, 1);  // SPAN_KIND_INTERNAL
  m.fixed64(7, static_cast<std::uint64_t>(s.start_ns));
  m.fixed64(8, static_cast<std::uint64_t>(s.end_ns));
  for (const auto& [key, value] : s.attributes) m.message(9, key_value(key, value));
  if (s.error) {
    ProtoWriter status;  // Status { string message = 2; StatusCode code = 3; }
    status.bytes(2, s.status_message);
    status.uint(3, 2);  // STATUS_CODE_ERROR
    m.message(15, status);
  }
  m.fixed32(16, span_flags(s));
  return m;
}

void write_value(json::Writer& w, const AttributeValue& value) {
  w.StartObject();
  if (const auto* s = std::get_if<std::string>(&value)) {
    json::write_string(w, "stringValue", *s);
  } else if (const auto* b = std::get_if<bool>(&value)) {
    w.Key("boolValue");
    w.Bool(*b);
  } else {
    json::write_string(w, "intValue", std::to_string(std::get<std::int64_t>(value)));
  }
  w.EndObject();
}

void write_attributes(json::Writer& w, const Attributes& attributes) {
  w.Key("attributes");
  w.StartArray();
  for (const auto& [key, value] : attributes) {
    w.StartObject();
    json::write_string(w, "key", key);
    w.Key("value");
    write_value(w, value);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

std::string encode_protobuf(const Resource& resource, const std::vector<SpanData>& spans) {
  ProtoWriter res;  // Resource { repeated KeyValue attributes = 1; }
  for (const auto& [key, value] : resource.attributes) res.message(1, key_value(key, value));
  ProtoWriter scope;  // InstrumentationScope { name = 1; version = 2; }
  scope.bytes(1, resource.scope_name);
  scope.bytes(2, resource.scope_version);
  ProtoWriter scope_spans;  // ScopeSpans { scope = 1; repeated Span spans = 2; }
  scope_spans.message(1, scope);
  for (const SpanData& s : spans) scope_spans.message(2, span_message(s));
  ProtoWriter resource_spans;  // ResourceSpans { resource = 1; repeated ScopeSpans scope_spans = 2; }
  resource_spans.message(1, res);
  resource_spans.message(2, scope_spans);
  ProtoWriter request;  // ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
  request.message(1, resource_spans);
  return request.str();
}

std::string encode_json(const Resource& resource, const std::vector<SpanData>& spans) {
  return json::text_of([&](json::Writer& w) {
    w.StartObject();
    w.Key("resourceSpans");
    w.StartArray();
    w.StartObject();
    w.Key("resource");
    w.StartObject();
    write_attributes(w, resource.attributes);
    w.EndObject();
    w.Key("scopeSpans");
    w.StartArray();
    w.StartObject();
    w.Key("scope");
    w.StartObject();
    json::write_string(w, "name", resource.scope_name);
    if (!resource.scope_version.empty()) json::write_string(w, "version", resource.scope_version);
    w.EndObject();
    w.Key("spans");
    w.StartArray();
    for (const SpanData& s : spans) {
      w.StartObject();
      json::write_string(w, "traceId", hex(s.trace.data(), s.trace.size()));
      json::write_string(w, "spanId", hex(s.id.data(), s.id.size()));
      if (s.parent) json::write_string(w, "parentSpanId", hex(s.parent->data(), s.parent->size()));
      json::write_string(w, "name", s.name);
      w.Key("kind");
      w.Int(1);
      json::write_string(w, "startTimeUnixNano", std::to_string(s.start_ns));
      json::write_string(w, "endTimeUnixNano", std::to_string(s.end_ns));
      write_attributes(w, s.attributes);
      if (s.error) {
        w.Key("status");
        w.StartObject();
        json::write_string(w, "message", s.status_message);
        w.Key("code");
        w.Int(2);
        w.EndObject();
      }
      w.Key("flags");
      w.Uint(span_flags(s));
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    w.EndArray();
    w.EndObject();
    w.EndArray();
    w.EndObject();
  });
}

}  // namespace corral::telemetry
