#include "telemetry/traced_operation.hpp"

namespace corral::telemetry {

std::unique_ptr<TracedOperation> TracedOperation::start(const std::string& name, const EnvLookup& env,
                                                        const std::string& version, const Warn& warn) {
  OtlpChoice choice = otlp_settings(env);
  for (const std::string& w : choice.warnings) warn(w);
  if (!choice.settings) return nullptr;
  std::optional<RemoteParent> parent;
  if (std::optional<std::string> traceparent = env("TRACEPARENT")) {
    parent = parse_traceparent(*traceparent);
    if (!parent) warn("TRACEPARENT is not a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>); a new trace is started");
  }
  return std::make_unique<TracedOperation>(name, std::move(*choice.settings), resource_of(env, version), parent, warn);
}

TracedOperation::TracedOperation(const std::string& name, OtlpSettings settings, Resource resource,
                                 std::optional<RemoteParent> parent, Warn warn)
    : tracer_(parent),
      root_(tracer_.start(name)),
      phases_(tracer_, *root_),
      settings_(std::move(settings)),
      resource_(std::move(resource)),
      warn_(std::move(warn)) {}

// An operation that never finished (its front end failed past every catch) sends nothing:
// a partial trace would only say less than the error already said.
TracedOperation::~TracedOperation() = default;

void TracedOperation::fail(std::string_view message) {
  if (failure_.empty()) failure_ = std::string(message);
}

void TracedOperation::finish(int exit_code, std::chrono::milliseconds bound) {
  if (finished_) return;
  finished_ = true;
  phases_.end_shards();
  root_->attribute("corral.exit_code", static_cast<std::int64_t>(exit_code));
  if (failure_.empty() && exit_code != 0) failure_ = "exit code " + std::to_string(exit_code);
  root_->end(failure_);
  std::vector<SpanData> spans = tracer_.take();
  std::string body = settings_.json ? encode_json(resource_, spans) : encode_protobuf(resource_, spans);
  TraceExport send(settings_, std::move(body));
  const std::chrono::milliseconds wait = std::min(bound, settings_.timeout);
  if (!send.wait(wait)) {
    warn_("the OpenTelemetry collector at " + settings_.url + " did not answer within " +
          std::to_string(wait.count()) + " ms; the trace of this " + root_->data().name + " was not sent");
  } else if (std::optional<std::string> problem = send.problem()) {
    warn_("the trace of this " + root_->data().name + " was not sent to " + settings_.url + ": " + *problem);
  }
}

}  // namespace corral::telemetry
