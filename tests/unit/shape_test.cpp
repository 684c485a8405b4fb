// JSON shapes: the text each declared shape writes is exactly what corral wrote before
// shapes (plugins of older SDKs, claims on disk and scripts reading handles depend on
// it), and the one template's rules hold: omitted members, required members refused when
// absent, wrong types named, nested shapes, checks after reading.
#include <doctest/doctest.h>

#include "corral/shape.hpp"
#include "corral/wire.hpp"
#include "lease/claims.hpp"
#include "lease/handle.hpp"

using namespace corral;

namespace {

Sandbox sample_sandbox() {
  Sandbox sb;
  sb.id = "x";
  sb.labels = {{"corral-lease", "l"}};
  sb.secrets = {{"t", "v"}};
  return sb;
}
constexpr const char* kSandbox = R"({"id":"x","state":"","details":{},"labels":{"corral-lease":"l"},"secrets":{"t":"v"}})";
constexpr const char* kPublicSandbox = R"({"id":"x","state":"","details":{},"labels":{"corral-lease":"l"}})";

std::string with_sandbox(const std::string& rest) { return std::string(R"({"sandbox":)") + kSandbox + rest; }

}  // namespace

TEST_CASE("the wire's messages are written as before shapes, byte for byte") {
  const Sandbox sb = sample_sandbox();
  CHECK(wire::to_json(sb) == kSandbox);
  CHECK(wire::to_json(wire::Empty{}) == "{}");
  CHECK(wire::to_json(wire::OpenRequest{{{"k", "v"}}}) == R"({"options":{"k":"v"}})");
  CHECK(wire::to_json(wire::OpenResult{}) == "{}");
  CHECK(wire::to_json(wire::OpenResult{"t"}) == R"({"target":"t"})");
  CHECK(wire::to_json(wire::DoctorResult{}) == R"({"checks":[]})");
  CHECK(wire::to_json(wire::DoctorResult{{{"n", true, "d", "h"}}}) ==
        R"({"checks":[{"name":"n","ok":true,"detail":"d","hint":"h"}]})");

  CreateRequest create{.lease_id = "l", .slug = "s", .labels = {{"a", "b"}}, .workspace = "/w"};
  CHECK(wire::to_json(create) == R"({"leaseId":"l","slug":"s","labels":{"a":"b"},"workspace":"/w"})");
  create = {.lease_id = "l",
            .slug = "s",
            .workspace = "/w",
            .network = parse_network_policy("none"),
            .idle = "pause",
            .ephemeral = true,
            .workspace_bytes = 5};
  CHECK(wire::to_json(create) ==
        R"({"leaseId":"l","slug":"s","labels":{},"workspace":"/w","network":"none","idle":"pause","ephemeral":true,)"
        R"("workspaceBytes":5})");

  CHECK(wire::to_json(wire::GetRequest{"i"}) == R"({"id":"i"})");
  CHECK(wire::to_json(wire::ListRequest{}) == R"({"labels":{}})");
  CHECK(wire::to_json(wire::ListResult{{sb}}) == std::string(R"({"sandboxes":[)") + kPublicSandbox + "]}");
  CHECK(wire::to_json(wire::SandboxRequest{sb}) == with_sandbox("}"));

  Command argv;
  argv.argv = {"a", "b c"};
  argv.timeout_seconds = 3;
  CHECK(wire::to_json(wire::ExecRequest{sb, argv}) ==
        with_sandbox(R"(,"command":{"argv":["a","b c"],"cwd":"","env":{},"timeoutSeconds":3}})"));
  Command shell;
  shell.shell = "echo hi";
  shell.cwd = "sub";
  shell.env = {{"A", "1"}};
  CHECK(wire::to_json(wire::ExecRequest{sb, shell}) ==
        with_sandbox(R"(,"command":{"shell":"echo hi","cwd":"sub","env":{"A":"1"},"timeoutSeconds":0}})"));
  Command bytes;
  bytes.argv = {"\xff"};
  // Bad bytes: U+FFFD in argv (an SDK from before reads that), the exact bytes in hex.
  CHECK(wire::to_json(wire::ExecRequest{sb, bytes}) ==
        with_sandbox(",\"command\":{\"argv\":[\"\xEF\xBF\xBD\"],\"argvHex\":[\"ff\"],\"cwd\":\"\",\"env\":{},"
                     "\"timeoutSeconds\":0}}"));
  CHECK(wire::to_json(ExecResult{7}) == R"({"exitCode":7})");

  CHECK(wire::to_json(wire::UploadCall{sb, {"/a.tgz", 7, {"r"}}}) ==
        with_sandbox(R"(,"archive":"/a.tgz","size":7,"removed":["r"]})"));
  UploadRequest tree{"", 7, {}, "/r", {{"a"}, {"b", true}, {"c", false, true}}};
  CHECK(wire::to_json(wire::UploadCall{sb, tree}) ==
        with_sandbox(R"(,"archive":"","size":7,"tree":{"root":"/r","files":[{"path":"a"},)"
                     R"({"path":"b","executable":true},{"path":"c","symlink":true}]}})"));
  CHECK(wire::to_json(wire::DownloadCall{sb, {"c", {"*.xml"}, "/o.tgz", 9}}) ==
        with_sandbox(R"(,"cwd":"c","patterns":["*.xml"],"archive":"/o.tgz","maxBytes":9})"));
  CHECK(wire::to_json(DownloadResult{3, {"m"}}) == R"({"size":3,"missing":["m"]})");
  CHECK(wire::to_json(DownloadResult{}) == R"({"size":0})");
  CHECK(wire::to_json(wire::ExtendRequest{sb, 60}) == with_sandbox(R"(,"seconds":60})"));
  CHECK(wire::to_json(wire::UrlRequest{sb, 80}) == with_sandbox(R"(,"port":80})"));
  CHECK(wire::to_json(wire::UrlResult{"u"}) == R"({"url":"u"})");
  CHECK(wire::to_json(wire::ForkRequest{sb, {{"l", "s", {}}}}) ==
        with_sandbox(R"(,"forks":[{"leaseId":"l","slug":"s","labels":{}}]})"));

  wire::ForkResult forks;
  forks.forks.push_back({sb, std::nullopt});
  forks.forks.push_back({std::nullopt, Error(ErrorCode::not_found, "gone", "h")});
  forks.forks.push_back({std::nullopt, Error(ErrorCode::quota, "q")});
  CHECK(wire::to_json(forks) == std::string(R"({"forks":[{"sandbox":)") + kSandbox +
                                    R"(},{"error":{"code":"not-found","message":"gone","hint":"h"}},)"
                                    R"({"error":{"code":"quota","message":"q"}}]})");
  const wire::ForkResult back = wire::read<wire::ForkResult>(wire::to_json(forks), "t");
  REQUIRE(back.forks.size() == 3);
  CHECK(back.forks[0].sandbox->secrets.at("t") == "v");
  CHECK(back.forks[1].error->code() == ErrorCode::not_found);
  CHECK(back.forks[1].error->hint() == "h");
  CHECK(back.forks[2].error->code() == ErrorCode::quota);
  // An outcome that is neither a fork nor an error is refused; an unknown code is internal.
  CHECK_THROWS_WITH_AS(wire::read<wire::ForkResult>(R"({"forks":[{}]})", "t"), doctest::Contains("has no 'sandbox'"),
                       Error);
  CHECK(wire::read<wire::ForkResult>(R"({"forks":[{"error":{"code":"config","message":"m"}}]})", "t")
            .forks[0]
            .error->code() == ErrorCode::internal);
}

TEST_CASE("a claim and a handle are written as before shapes, and a claim reads back whole") {
  Claim c;
  c.lease_id = "abc";
  c.provider = "local";
  c.sandbox_id = "sb";
  CHECK(claim_to_json(c) ==
        R"({"version":1,"leaseId":"abc","slug":"","provider":"local","sandboxId":"sb","details":{},"workspace":"",)"
        R"("fingerprint":"","createdAt":"","kept":false})"
        "\n");
  c.slug = "s";
  c.details = {{"k", "v"}};
  c.workspace = "/w";
  c.fingerprint = "f";
  c.created_at = "2026-01-01T00:00:00Z";
  c.kept = true;
  c.paused = true;
  c.network = parse_network_policy("allow:a.com");
  c.target = "t";
  c.pool = PoolTag{"k", 2, 1, 2};
  const std::string text = claim_to_json(c);
  CHECK(text ==
        R"({"version":1,"leaseId":"abc","slug":"s","provider":"local","sandboxId":"sb","details":{"k":"v"},)"
        R"("workspace":"/w","fingerprint":"f","createdAt":"2026-01-01T00:00:00Z","kept":true,"paused":true,)"
        R"("network":"allow:a.com","target":"t","pool":{"key":"k","size":2,"filledAt":1,"expiresAt":2}})"
        "\n");
  CHECK(claim_to_json(claim_from_json(text, "t")) == text);

  SessionHandle h;
  h.provider = "local";
  h.lease_id = "l";
  h.slug = "s";
  h.sandbox_id = "sb";
  h.kept = true;
  h.cleanup_command = "corral stop --id l";
  h.network = parse_network_policy("none");
  h.exit_code = 3;
  h.downloads = DownloadSummary{"d", {"f"}, {}, {"x: why"}, 4, std::nullopt};
  h.timings = {{"prepare", 1}, {"exec", 2}};
  CHECK(handle_to_json(h) ==
        R"({"provider":"local","leaseId":"l","slug":"s","sandboxId":"sb","reused":false,"kept":true,)"
        R"("cleanupCommand":"corral stop --id l","network":"none","exitCode":3,)"
        R"("downloads":{"dir":"d","files":["f"],"bytes":4,"refused":["x: why"]},"timingsMs":{"prepare":1,"exec":2}})"
        "\n");
  SessionHandle failed;
  failed.pooled = true;
  failed.error = Error(ErrorCode::timeout, "m", "h");
  CHECK(handle_to_json(failed) ==
        R"({"provider":"","leaseId":"","slug":"","sandboxId":"","reused":false,"pooled":true,"kept":false,)"
        R"("cleanupCommand":"","error":{"code":"timeout","message":"m","hint":"h"},"timingsMs":{}})"
        "\n");
}

namespace {
struct Inner {
  std::string name;
  int count = 0;
};
struct Outer {
  std::string id;
  std::optional<Inner> inner;
  std::vector<Inner> list;
  std::uint64_t size = 0;
  Inner flat_part;
};
}  // namespace

template <>
struct corral::shape::Shape<Inner> {
  static constexpr auto fields = std::tuple{field("name", &Inner::name, required), field("count", &Inner::count, omitted)};
  static void check(Inner& i, std::string_view what) {
    if (i.count < 0) throw Error(ErrorCode::invalid_argument, std::string(what) + ": count is negative");
  }
};
template <>
struct corral::shape::Shape<Outer> {
  static constexpr auto fields =
      std::tuple{field("id", &Outer::id, required), field("inner", &Outer::inner, omitted),
                 field("list", &Outer::list, omitted), field("size", &Outer::size), flat(&Outer::flat_part)};
};

TEST_CASE("the shape template: omitted and required members, nesting, flat members, checks, wrong types") {
  Outer o;
  o.id = "a";
  o.flat_part.name = "f";
  CHECK(shape::to_json(o) == R"({"id":"a","size":0,"name":"f"})");
  o.inner = Inner{"i", 2};
  o.list = {{"x"}, {"y", 1}};
  const std::string text = shape::to_json(o);
  CHECK(text == R"({"id":"a","inner":{"name":"i","count":2},"list":[{"name":"x"},{"name":"y","count":1}],"size":0,"name":"f"})");
  const Outer back = shape::from_json<Outer>(text, "t");
  CHECK(back.inner->count == 2);
  CHECK(back.list[1].name == "y");
  CHECK(back.flat_part.name == "f");

  CHECK_THROWS_WITH_AS(shape::from_json<Outer>(R"({"name":"f"})", "the thing"),
                       doctest::Contains("the thing has no 'id'"), Error);
  CHECK_THROWS_WITH_AS(shape::from_json<Outer>(R"({"id":null,"name":"f"})", "t"), doctest::Contains("has no 'id'"),
                       Error);
  CHECK_THROWS_WITH_AS(shape::from_json<Outer>(R"({"id":1,"name":"f"})", "t"),
                       doctest::Contains("field 'id' must be a string"), Error);
  CHECK_THROWS_WITH_AS(shape::from_json<Outer>(R"({"id":"a","inner":[],"name":"f"})", "t"),
                       doctest::Contains("field 'inner' must be an object"), Error);
  CHECK_THROWS_WITH_AS(shape::from_json<Outer>(R"({"id":"a","inner":{},"name":"f"})", "t"),
                       doctest::Contains("has no 'name'"), Error);
  CHECK_THROWS_WITH_AS(shape::from_json<Outer>(R"({"id":"a","inner":{"name":"i","count":-1},"name":"f"})", "t"),
                       doctest::Contains("count is negative"), Error);
  CHECK_THROWS_WITH_AS(shape::from_json<Outer>(R"({"id":"a","inner":{"name":"i","count":"2"},"name":"f"})", "t"),
                       doctest::Contains("field 'count' must be a whole number"), Error);
  CHECK_THROWS_WITH_AS(shape::from_json<Outer>(R"({"id":"a","size":-1,"name":"f"})", "t"),
                       doctest::Contains("field 'size' must be a size, not negative"), Error);
  CHECK_THROWS_WITH_AS(shape::from_json<Outer>(R"({"id":"a","list":{},"name":"f"})", "t"),
                       doctest::Contains("field 'list' must be a list"), Error);
  CHECK_THROWS_WITH_AS(shape::from_json<Outer>(R"({"id":"a"})", "t"), doctest::Contains("has no 'name'"), Error);
  // Not an object at all: only the required members refuse it.
  CHECK_THROWS_WITH_AS(shape::from_json<Outer>("[]", "t"), doctest::Contains("t has no 'id'"), Error);
  CHECK(shape::from_json<Inner>(R"({"name":"n","unknown":1})", "t").name == "n");  // extra keys: a newer writer
}
