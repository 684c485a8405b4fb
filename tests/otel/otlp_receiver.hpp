// A stand-in OpenTelemetry collector: OTLP/HTTP on 127.0.0.1, taking traces as
// http/protobuf or http/json (../shared/specs/otel/otlp-specification.md) and decoding
// each with the official protos, so a test reads what corral sent as the collector would.
// It can also be a collector that takes the connection and never answers.
//
// Threads: its server runs on a thread of its own; every method may be called from the test's.
#pragma once

#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "opentelemetry/proto/collector/trace/v1/trace_service.pb.h"

namespace corral::test {

namespace otlp = opentelemetry::proto;

// OTLP JSON as the protobuf library's JSON parser reads it: trace and span ids are hex in
// OTLP, base64 in protobuf's own JSON mapping (the specification's one difference besides
// integer enums, which the parser takes as they are).
std::string otlp_json_to_proto_json(const std::string& json);

class OtlpReceiver {
 public:
  enum class Mode { answer, never_answer };
  explicit OtlpReceiver(Mode mode = Mode::answer);
  ~OtlpReceiver();

  std::string endpoint() const;  // http://127.0.0.1:PORT, for OTEL_EXPORTER_OTLP_ENDPOINT

  struct Received {
    std::string path;
    std::string content_type;
    std::vector<std::pair<std::string, std::string>> headers;
    otlp::collector::trace::v1::ExportTraceServiceRequest request;
    bool decoded = false;
    std::string problem;  // why it could not be decoded
  };
  // Every request so far.
  std::vector<Received> received() const;
  // Waits (bounded) until `n` requests came; false if they did not.
  bool wait_for(std::size_t n) const;

 private:
  Mode mode_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  std::vector<Received> received_;
  std::atomic<bool> stopping_{false};
};

// The spans of a request, flattened.
std::vector<otlp::trace::v1::Span> spans_of(const otlp::collector::trace::v1::ExportTraceServiceRequest& request);
// The value of `key` among `attributes` as text (string, int or bool), or "" when absent.
std::string attribute(const google::protobuf::RepeatedPtrField<otlp::common::v1::KeyValue>& attributes,
                      const std::string& key);
// Bytes as lower-case hex.
std::string hex_of(const std::string& bytes);

}  // namespace corral::test
