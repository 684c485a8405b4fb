// An OTLP/HTTP traces request (ExportTraceServiceRequest, opentelemetry/proto/collector/
// trace/v1/trace_service.proto) in its two encodings: binary protobuf, written here by
// hand (a few message types, no generated code and no protobuf library in corral), and
// OTLP's JSON (lowerCamelCase keys, hex ids, integer enums, 64-bit numbers as strings).
//
// Threads: pure functions.
#pragma once

#include <string>
#include <vector>

#include "telemetry/tracer.hpp"

namespace corral::telemetry {

// Who sent the spans: the resource's attributes (service.name, ...) and the
// instrumentation scope's name and version.
struct Resource {
  Attributes attributes;
  std::string scope_name = "corral";
  std::string scope_version;
};

std::string encode_protobuf(const Resource& resource, const std::vector<SpanData>& spans);
std::string encode_json(const Resource& resource, const std::vector<SpanData>& spans);

}  // namespace corral::telemetry
