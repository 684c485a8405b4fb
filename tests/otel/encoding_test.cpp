// corral's OTLP side without a run: the W3C traceparent it reads and writes, the
// exporter settings it takes from the OTEL_* variables, and its hand-written protobuf and
// JSON encodings, each decoded with the official protos as a collector would.
#include <doctest/doctest.h>

#include <google/protobuf/util/json_util.h>

#include <map>

#include "otlp_receiver.hpp"
#include "telemetry/otlp_encoding.hpp"
#include "telemetry/otlp_exporter.hpp"
#include "telemetry/traced_operation.hpp"
#include "telemetry/tracer.hpp"

using namespace corral::telemetry;
using corral::test::attribute;
using corral::test::hex_of;
using corral::test::OtlpReceiver;
using corral::test::spans_of;

namespace {

corral::EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

// Two spans of one trace, a root that failed and a child with every kind of attribute.
std::vector<SpanData> sample_spans() {
  Tracer tracer(parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
  auto root = tracer.start("run");
  {
    auto child = tracer.start("upload", root.get());
    child->attribute("corral.bytes", static_cast<std::int64_t>(1) << 40);
    child->attribute("corral.provider", "local");
    child->attribute("corral.kept", true);
    child->attribute("corral.empty", "");
  }
  root->end("exit code 3");
  return tracer.take();
}

}  // namespace

TEST_CASE("traceparent: W3C's form read and written; anything else refused") {
  auto p = parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  REQUIRE(p);
  CHECK(hex(p->trace.data(), 16) == "4bf92f3577b34da6a3ce929d0e0e4736");
  CHECK(hex(p->span.data(), 8) == "00f067aa0ba902b7");
  CHECK(p->flags == 1);
  CHECK(format_traceparent(p->trace, p->span, p->flags) == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  // A later version may carry more after another dash.
  CHECK(parse_traceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-extra"));
  for (const char* bad : {"", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
                          "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
                          "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                          "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
                          "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                          "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
                          "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
                          "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_traceparent(bad));
  }
}

TEST_CASE("exporter settings: the OTEL_* variables as the specification reads them") {
  SUBCASE("nothing set: no traces") { CHECK_FALSE(otlp_settings(env_of({})).settings); }
  SUBCASE("the base endpoint gets /v1/traces; the traces endpoint is used as it is") {
    CHECK(otlp_settings(env_of({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"}})).settings->url ==
          "http://collector:4318/v1/traces");
    CHECK(otlp_settings(env_of({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/mine/"}})).settings->url ==
          "http://collector:4318/mine/v1/traces");
    CHECK(otlp_settings(env_of({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:1"},
                                {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://b:2"}}))
              .settings->url == "http://b:2/");
    CHECK(otlp_settings(env_of({{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://b:2/custom"}})).settings->url ==
          "http://b:2/custom");
  }
  SUBCASE("protocol, headers, timeout") {
    OtlpChoice c = otlp_settings(env_of({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://[::1]:4318"},
                                         {"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"},
                                         {"OTEL_EXPORTER_OTLP_HEADERS", "api-key=s%3Dcret , x-team=a b,broken"},
                                         {"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "250"}}));
    REQUIRE(c.settings);
    CHECK(c.settings->json);
    CHECK(c.settings->headers == std::vector<std::pair<std::string, std::string>>{{"api-key", "s=cret"},
                                                                                   {"x-team", "a b"}});
    CHECK(c.settings->timeout == std::chrono::milliseconds(250));
    REQUIRE(c.warnings.size() == 1);
    CHECK(c.warnings[0].find("'broken' is not a header=value pair") != std::string::npos);
  }
  SUBCASE("what corral cannot send is said, and nothing is sent") {
    for (const auto& [name, value, said] : std::vector<std::tuple<std::string, std::string, std::string>>{
             {"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "corral sends traces over OTLP/HTTP only"},
             {"OTEL_EXPORTER_OTLP_ENDPOINT", "https://api.example.com", "is https"},
             {"OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318", "is not an http://HOST[:PORT][/PATH] URL"},
             {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://user:s3cret@c:4318", "'http://***@c:4318/v1/traces' is not"},
             {"OTEL_EXPORTER_OTLP_ENDPOINT", "https://user:s3cret@c", "https://***@c/v1/traces is https"}}) {
      const std::string given = value;  // a structured binding cannot be captured (clang 14)
      CAPTURE(given);
      std::map<std::string, std::string> vars{{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}};
      vars[name] = value;
      OtlpChoice c = otlp_settings(env_of(vars));
      CHECK_FALSE(c.settings);
      REQUIRE(c.warnings.size() == 1);
      CHECK_MESSAGE(c.warnings[0].find(said) != std::string::npos, c.warnings[0]);
      CHECK(c.warnings[0].find("s3cret") == std::string::npos);  // a password in the URL is never shown
    }
  }
  SUBCASE("disabled") {
    CHECK_FALSE(otlp_settings(env_of({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}, {"OTEL_SDK_DISABLED", "true"}}))
                    .settings);
    CHECK_FALSE(otlp_settings(env_of({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}, {"OTEL_TRACES_EXPORTER", "none"}}))
                    .settings);
  }
  SUBCASE("the resource: OTEL_SERVICE_NAME over OTEL_RESOURCE_ATTRIBUTES' service.name, the rest kept") {
    Resource r = resource_of(env_of({{"OTEL_RESOURCE_ATTRIBUTES", "service.name=ci,deployment.environment=st%20aging"},
                                     {"OTEL_SERVICE_NAME", "nightly"}}),
                             "1.2.3");
    CHECK(std::get<std::string>(r.attributes[0].second) == "nightly");
    CHECK(std::find(r.attributes.begin(), r.attributes.end(),
                    std::pair<std::string, AttributeValue>{"deployment.environment", std::string("st aging")}) !=
          r.attributes.end());
    CHECK(resource_of(env_of({}), "1").attributes[0] ==
          std::pair<std::string, AttributeValue>{"service.name", std::string("corral")});
  }
}

TEST_CASE("the protobuf corral writes by hand is an ExportTraceServiceRequest the official protos read back whole") {
  const std::vector<SpanData> spans = sample_spans();
  Resource resource = resource_of(env_of({{"OTEL_SERVICE_NAME", "ci"}}), "9.9.9");
  for (bool json : {false, true}) {
    CAPTURE(json);
    opentelemetry::proto::collector::trace::v1::ExportTraceServiceRequest request;
    if (json) {
      google::protobuf::util::JsonParseOptions strict;
      const std::string text = corral::test::otlp_json_to_proto_json(encode_json(resource, spans));
      REQUIRE(google::protobuf::util::JsonStringToMessage(text, &request, strict).ok());
    } else {
      REQUIRE(request.ParseFromString(encode_protobuf(resource, spans)));
    }
    REQUIRE(request.resource_spans_size() == 1);
    const auto& rs = request.resource_spans(0);
    CHECK(attribute(rs.resource().attributes(), "service.name") == "ci");
    CHECK(attribute(rs.resource().attributes(), "service.version") == "9.9.9");
    REQUIRE(rs.scope_spans_size() == 1);
    CHECK(rs.scope_spans(0).scope().name() == "corral");
    CHECK(rs.scope_spans(0).scope().version() == "9.9.9");
    auto got = spans_of(request);
    REQUIRE(got.size() == 2);
    const auto& upload = got[0];
    const auto& run = got[1];
    CHECK(upload.name() == "upload");
    CHECK(run.name() == "run");
    CHECK(hex_of(run.trace_id()) == "4bf92f3577b34da6a3ce929d0e0e4736");
    CHECK(hex_of(run.parent_span_id()) == "00f067aa0ba902b7");  // the caller's span
    CHECK(run.flags() == (0x01u | 0x100u | 0x200u));              // sampled, parent remote
    CHECK(upload.trace_id() == run.trace_id());
    CHECK(upload.parent_span_id() == run.span_id());
    CHECK(upload.flags() == (0x01u | 0x100u));
    CHECK(upload.span_id().size() == 8);
    CHECK(upload.kind() == opentelemetry::proto::trace::v1::Span::SPAN_KIND_INTERNAL);
    CHECK(upload.start_time_unix_nano() == static_cast<std::uint64_t>(spans[0].start_ns));
    CHECK(upload.end_time_unix_nano() >= upload.start_time_unix_nano());
    CHECK(attribute(upload.attributes(), "corral.bytes") == std::to_string(std::int64_t{1} << 40));
    CHECK(attribute(upload.attributes(), "corral.provider") == "local");
    CHECK(attribute(upload.attributes(), "corral.kept") == "true");
    REQUIRE(upload.attributes_size() == 4);
    CHECK(upload.attributes(3).value().has_string_value());  // an empty string is still a string
    CHECK(upload.status().code() == opentelemetry::proto::trace::v1::Status::STATUS_CODE_UNSET);
    CHECK(run.status().code() == opentelemetry::proto::trace::v1::Status::STATUS_CODE_ERROR);
    CHECK(run.status().message() == "exit code 3");
  }
}

TEST_CASE("a traced operation sends its trace to the collector; one that never answers costs the bound, once") {
  SUBCASE("answered") {
    OtlpReceiver receiver;
    OtlpSettings settings{receiver.endpoint() + "/v1/traces", false, {{"x-api-key", "k"}}, std::chrono::seconds(5)};
    std::vector<std::string> warnings;
    {
      TracedOperation op("warmup", settings, resource_of(env_of({}), "1"), std::nullopt,
                         [&](const std::string& w) { warnings.push_back(w); });
      op.phases().start("create", -1)->end();
      op.phases().start("exec", 2)->end();
      op.finish(0);
    }
    CHECK(warnings.empty());
    REQUIRE(receiver.wait_for(1));
    const auto got = receiver.received();
    CHECK(got[0].path == "/v1/traces");
    CHECK(got[0].content_type == "application/x-protobuf");
    REQUIRE_MESSAGE(got[0].decoded, got[0].problem);
    bool header = false;
    for (const auto& [k, v] : got[0].headers) header = header || (k == "x-api-key" && v == "k");
    CHECK(header);
    std::map<std::string, opentelemetry::proto::trace::v1::Span> by_name;
    for (const auto& s : spans_of(got[0].request)) by_name[s.name()] = s;
    REQUIRE(by_name.count("warmup"));
    REQUIRE(by_name.count("shard 2"));
    CHECK(by_name["create"].parent_span_id() == by_name["warmup"].span_id());
    CHECK(by_name["shard 2"].parent_span_id() == by_name["warmup"].span_id());
    CHECK(by_name["exec"].parent_span_id() == by_name["shard 2"].span_id());
    CHECK(attribute(by_name["warmup"].attributes(), "corral.exit_code") == "0");
    CHECK(by_name["warmup"].parent_span_id().empty());
  }
  SUBCASE("a collector that never answers: the wait ends at the bound, with one warning") {
    OtlpReceiver silent(OtlpReceiver::Mode::never_answer);
    OtlpSettings settings{silent.endpoint() + "/v1/traces", false, {}, std::chrono::seconds(10)};
    std::vector<std::string> warnings;
    const auto started = std::chrono::steady_clock::now();
    {
      TracedOperation op("run", settings, resource_of(env_of({}), "1"), std::nullopt,
                         [&](const std::string& w) { warnings.push_back(w); });
      op.finish(0, std::chrono::milliseconds(200));
    }
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("did not answer within 200 ms; the trace of this run was not sent") != std::string::npos);
  }
  SUBCASE("nobody listening: said, once") {
    OtlpSettings settings{"http://127.0.0.1:1/v1/traces", false, {}, std::chrono::seconds(2)};
    std::vector<std::string> warnings;
    TracedOperation op("fork", settings, resource_of(env_of({}), "1"), std::nullopt,
                       [&](const std::string& w) { warnings.push_back(w); });
    op.finish(1);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("was not sent to http://127.0.0.1:1/v1/traces: cannot connect") != std::string::npos);
  }
}
