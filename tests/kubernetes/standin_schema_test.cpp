// The stand-in held to the official API documents: its answers are checked against the
// OpenAPI schemas on the way out, so an answer that drops a required field, has a field
// of the wrong type or one the API does not define is caught; and the checker itself
// catches each of those.
#include <doctest/doctest.h>

#include "cluster_fixture.hpp"
#include "object.hpp"
#include "schema.hpp"

using namespace corral;
using namespace corral::kubernetes::test;
using corral::kubernetes::standin::Schemas;
using corral::kubernetes::standin::SchemaIssue;

namespace {

Schemas load() {
  Schemas s;
  for (const char* file : {"core-v1.json", "networking-v1.json", "agents-v1beta1.json"})
    s.load(kubernetes::standin::schema_dir() / file);
  return s;
}

}  // namespace

TEST_CASE("the schema check catches a missing required field, a wrong type, an unknown field and a bad enum value") {
  Cluster c;
  c.create_pod("p", {.command = {"sleep", "600"}});
  json::Document pod = c.wait_ready("p");
  const Schemas schemas = load();
  const std::string kPod = "io.k8s.api.core.v1.Pod";
  CHECK(schemas.check(pod, kPod).empty());  // a real answer of the stand-in passes

  json::Document dropped = kubernetes::standin::copy_of(pod);
  dropped["status"]["containerStatuses"][0].RemoveMember("imageID");
  auto issues = schemas.check(dropped, kPod);
  REQUIRE(issues.size() == 1);
  CHECK(issues[0].kind == SchemaIssue::Kind::required);
  CHECK(issues[0].path == "status.containerStatuses[0].imageID");

  json::Document typed = kubernetes::standin::copy_of(pod);
  typed["status"]["containerStatuses"][0]["restartCount"].SetString("0");
  issues = schemas.check(typed, kPod);
  REQUIRE(issues.size() == 1);
  CHECK(issues[0].kind == SchemaIssue::Kind::type);
  CHECK(issues[0].path == "status.containerStatuses[0].restartCount");

  json::Document unknown = kubernetes::standin::copy_of(pod);
  unknown["spec"].AddMember("sandboxed", true, unknown.GetAllocator());
  issues = schemas.check(unknown, kPod);
  REQUIRE(issues.size() == 1);
  CHECK(issues[0].kind == SchemaIssue::Kind::unknown_field);

  json::Document policy = parse(R"({"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"name":"x"},)"
                                R"("spec":{"policyTypes":["Outbound"],"egress":[{"to":[{"ipBlock":{}}]}]}})");
  issues = schemas.check(policy, "io.k8s.api.networking.v1.NetworkPolicy");
  REQUIRE(issues.size() == 2);
  CHECK(issues[0].kind == SchemaIssue::Kind::enum_value);
  CHECK(issues[1].path == "spec.egress[0].to[0].ipBlock.cidr");

  // A watch event and a Status are checked too: WatchEvent requires type and object.
  CHECK(schemas.check(parse(R"({"type":"ADDED"})"), "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent").size() == 1);
}

TEST_CASE("fault: an answer that drops a required field is caught by the stand-in's own check of its answers") {
  Cluster c;
  c.expect_violations = true;
  c.create_pod("p");
  c.wait_ready("p");
  REQUIRE(c.server.answer_violations().empty());
  c.server.with([](auto& s) { s.faults.corrupt_answer_field = "status.containerStatuses.0.imageID"; });
  Answer a = c.api.get(c.pod("p"));
  CHECK(a.status == 200);
  CHECK_FALSE(a.json()["status"]["containerStatuses"][0].HasMember("imageID"));
  auto violations = c.server.answer_violations();
  REQUIRE(violations.size() == 1);
  CHECK(violations[0] == "get pods: io.k8s.api.core.v1.Pod: status.containerStatuses[0].imageID: Required value");
  c.api.get(c.pods());  // a list's items are checked as well
  CHECK(c.server.answer_violations().size() == 2);
}

TEST_CASE("the schemas served at /openapi/v3 are the ones checked, each group version's document whole") {
  Cluster c;
  Answer index = c.api.get("/openapi/v3");
  REQUIRE(index.status == 200);
  CHECK(index.json()["paths"].HasMember("api/v1"));
  Answer core = c.api.get("/openapi/v3/api/v1");
  json::Document doc = core.json();
  CHECK(doc["components"]["schemas"].HasMember("io.k8s.api.core.v1.Pod"));
  CHECK(doc["paths"].HasMember("/api/v1/namespaces/{namespace}/pods/{name}/exec"));
  Answer net = c.api.get("/openapi/v3/apis/networking.k8s.io/v1");
  json::Document nd = net.json();
  CHECK(nd["components"]["schemas"].HasMember("io.k8s.api.networking.v1.NetworkPolicy"));
  CHECK(nd["components"]["schemas"].HasMember("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"));  // its references resolve
}
