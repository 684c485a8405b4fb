// Traced runs end to end: the built corral on the local provider (real bubblewrap), told
// by OTEL_EXPORTER_OTLP_ENDPOINT to send its traces to a stand-in collector that decodes
// them with the official protos.
#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <set>

#include "cli.hpp"
#include "corral/json.hpp"
#include "otlp_receiver.hpp"

using corral::test::attribute;
using corral::test::CliEnv;
using corral::test::CliResult;
using corral::test::hex_of;
using corral::test::OtlpReceiver;
using corral::test::spans_of;
using Span = opentelemetry::proto::trace::v1::Span;

namespace {

// The spans of the one trace `receiver` got, by name (a name seen twice keeps the last).
std::map<std::string, Span> one_trace(const OtlpReceiver& receiver) {
  REQUIRE(receiver.wait_for(1));
  const auto got = receiver.received();
  REQUIRE(got.size() == 1);
  REQUIRE_MESSAGE(got[0].decoded, got[0].problem);
  std::map<std::string, Span> by_name;
  for (const Span& s : spans_of(got[0].request)) by_name[s.name()] = s;
  return by_name;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a traced local run: a root span 'run', a span per phase under it, and the command continues the trace") {
  OtlpReceiver receiver;
  CliEnv env;
  env.root().write("work/file.txt", "synced\n");
  env.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint();
  env.env["OTEL_SERVICE_NAME"] = "ci-job";
  CliResult r = env.run({"run", "--", "sh", "-c", "echo \"$TRACEPARENT\""});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto spans = one_trace(receiver);
  const auto received = receiver.received();
  CHECK(received[0].path == "/v1/traces");
  CHECK(received[0].content_type == "application/x-protobuf");
  CHECK(attribute(received[0].request.resource_spans(0).resource().attributes(), "service.name") == "ci-job");
  REQUIRE(spans.count("run"));
  const Span& run = spans["run"];
  CHECK(run.parent_span_id().empty());
  CHECK(attribute(run.attributes(), "corral.provider") == "local");
  CHECK(attribute(run.attributes(), "corral.lease").size() == 12);
  CHECK_FALSE(attribute(run.attributes(), "corral.sandbox").empty());
  CHECK(attribute(run.attributes(), "corral.exit_code") == "0");
  CHECK(run.status().code() != opentelemetry::proto::trace::v1::Status::STATUS_CODE_ERROR);
  for (const char* phase : {"prepare", "acquire", "create", "sync", "exec", "cleanup"}) {
    CAPTURE(phase);
    REQUIRE(spans.count(phase));
    CHECK(spans[phase].parent_span_id() == run.span_id());
    CHECK(spans[phase].trace_id() == run.trace_id());
    CHECK(spans[phase].start_time_unix_nano() >= run.start_time_unix_nano());
    CHECK(spans[phase].end_time_unix_nano() <= run.end_time_unix_nano());
  }
  // The command's TRACEPARENT names the exec span, so its own spans nest under it.
  CHECK(r.out == "00-" + hex_of(run.trace_id()) + "-" + hex_of(spans["exec"].span_id()) + "-01\n");
  CHECK(r.err.find("warning") == std::string::npos);
}

TEST_CASE("TRACEPARENT in corral's environment continues the caller's trace; http/json; a failing command is an error") {
  OtlpReceiver receiver;
  CliEnv env;
  env.env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = receiver.endpoint() + "/custom/path";
  env.env["OTEL_EXPORTER_OTLP_PROTOCOL"] = "http/json";
  env.env["TRACEPARENT"] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  CliResult r = env.run({"run", "--", "sh", "-c", "exit 3"});
  CHECK(r.exit_code == 3);
  auto spans = one_trace(receiver);
  CHECK(receiver.received()[0].path == "/custom/path");
  CHECK(receiver.received()[0].content_type == "application/json");
  const Span& run = spans["run"];
  CHECK(hex_of(run.trace_id()) == "4bf92f3577b34da6a3ce929d0e0e4736");
  CHECK(hex_of(run.parent_span_id()) == "00f067aa0ba902b7");
  CHECK(run.status().code() == opentelemetry::proto::trace::v1::Status::STATUS_CODE_ERROR);
  CHECK(run.status().message() == "exit code 3");
  CHECK(attribute(run.attributes(), "corral.exit_code") == "3");
  CHECK(spans["exec"].trace_id() == run.trace_id());
}

TEST_CASE("a fan-out's trace has a span per shard, each shard's phases under it") {
  OtlpReceiver receiver;
  CliEnv env;
  env.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint();
  CliResult r = env.run({"run", "--shards", "2", "--", "true"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  REQUIRE(receiver.wait_for(1));
  const auto got = receiver.received();
  REQUIRE(got[0].decoded);
  std::map<std::string, Span> shards;
  std::string root_id;
  std::vector<Span> execs;
  for (const Span& s : spans_of(got[0].request)) {
    if (s.name() == "run") root_id = s.span_id();
    if (s.name().rfind("shard ", 0) == 0) shards[s.name()] = s;
    if (s.name() == "exec") execs.push_back(s);
  }
  REQUIRE(shards.size() == 2);
  for (auto& [name, s] : shards) CHECK(s.parent_span_id() == root_id);
  REQUIRE(execs.size() == 2);
  std::set<std::string> parents;
  for (const Span& e : execs) parents.insert(e.parent_span_id());
  CHECK(parents == std::set<std::string>{shards["shard 0"].span_id(), shards["shard 1"].span_id()});
}

TEST_CASE("a collector that never answers costs the run at most a second, and is said once; no collector, no trace") {
  SUBCASE("silent") {
    OtlpReceiver silent(OtlpReceiver::Mode::never_answer);
    CliEnv env;
    env.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = silent.endpoint();
    const auto started = std::chrono::steady_clock::now();
    CliResult r = env.run({"run", "--", "sh", "-c", "exit 4"});
    CHECK(r.exit_code == 4);
    // A bound, not a speed: the exporter's own timeout (10 s) is never waited for.
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(8));
    CHECK_MESSAGE(count_of(r.err, "did not answer within 1000 ms; the trace of this run was not sent") == 1, r.err);
  }
  SUBCASE("not asked for: nothing sent, and the command gets no TRACEPARENT") {
    OtlpReceiver receiver;
    CliEnv env;
    env.env["TRACEPARENT"] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    CliResult r = env.run({"run", "--", "sh", "-c", "echo \"[$TRACEPARENT]\""});
    CHECK(r.exit_code == 0);
    CHECK(r.out == "[]\n");
    CHECK(receiver.received().empty());
  }
}

TEST_CASE("warmup and fork are traces of their own, named so, their phases under them") {
  OtlpReceiver receiver;
  CliEnv env;
  env.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint();
  CliResult warmed = env.run({"warmup"});
  REQUIRE_MESSAGE(warmed.exit_code == 0, warmed.err);
  const std::string lease = corral::json::get_string(corral::json::parse(warmed.out, "handle"), "leaseId");
  auto spans = one_trace(receiver);
  REQUIRE(spans.count("warmup"));
  CHECK(attribute(spans["warmup"].attributes(), "corral.lease") == lease);
  CHECK(attribute(spans["warmup"].attributes(), "corral.provider") == "local");
  REQUIRE(spans.count("create"));
  CHECK(spans["create"].parent_span_id() == spans["warmup"].span_id());

  CliResult forked = env.run({"fork", "--id", lease, "--count", "1"});
  REQUIRE_MESSAGE(forked.exit_code == 0, forked.err);
  REQUIRE(receiver.wait_for(2));
  const auto got = receiver.received();
  REQUIRE(got[1].decoded);
  std::map<std::string, std::vector<Span>> by_name;
  for (const Span& s : spans_of(got[1].request)) by_name[s.name()].push_back(s);
  REQUIRE(by_name["fork"].size() == 2);  // the operation, and the provider's fork under it
  const Span& root = by_name["fork"][0].parent_span_id().empty() ? by_name["fork"][0] : by_name["fork"][1];
  const Span& step = &root == &by_name["fork"][0] ? by_name["fork"][1] : by_name["fork"][0];
  CHECK(step.parent_span_id() == root.span_id());
  CHECK(attribute(root.attributes(), "corral.exit_code") == "0");
  CHECK(env.run({"stop", "--all"}).exit_code == 0);
}
