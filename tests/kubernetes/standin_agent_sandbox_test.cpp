// The agent-sandbox CRDs as a client sees them: a SandboxWarmPool keeps ready pods from a
// SandboxTemplate; a SandboxClaim is bound to a Sandbox that adopts one of them (the
// annotation agents.x-k8s.io/pod-name names it) or makes its own; the claim's Ready
// condition follows; a missing pool says so; deleting the claim takes the rest with it.
#include <doctest/doctest.h>

#include "agent_sandbox.hpp"
#include "cli.hpp"
#include "cluster_fixture.hpp"
#include "object.hpp"

using namespace corral;
using namespace corral::kubernetes::test;
using corral::kubernetes::standin::string_at;

namespace {

const std::string kExt = "/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/corral/";
const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/corral/sandboxes";

void make_pool(Cluster& c, int replicas) {
  Answer t = c.api.post(kExt + "sandboxtemplates",
                        R"({"apiVersion":"extensions.agents.x-k8s.io/v1beta1","kind":"SandboxTemplate","metadata":{"name":"py"},)"
                        R"("spec":{"podTemplate":{"metadata":{"labels":{"app":"agent"}},"spec":{"containers":[)"
                        R"({"name":"main","image":"python:3.12","command":["sleep","600"]}]}}}})");
  REQUIRE_MESSAGE(t.status == 201, t.body);
  Answer p = c.api.post(kExt + "sandboxwarmpools",
                        R"({"apiVersion":"extensions.agents.x-k8s.io/v1beta1","kind":"SandboxWarmPool","metadata":{"name":"pool"},)"
                        R"("spec":{"replicas":)" + std::to_string(replicas) + R"(,"sandboxTemplateRef":{"name":"py"}}})");
  REQUIRE_MESSAGE(p.status == 201, p.body);
}

json::Document claim(Cluster& c, const std::string& name, const std::string& pool) {
  Answer a = c.api.post(kExt + "sandboxclaims",
                        R"({"apiVersion":"extensions.agents.x-k8s.io/v1beta1","kind":"SandboxClaim","metadata":{"name":")" +
                            name + R"("},"spec":{"warmPoolRef":{"name":")" + pool + R"("}}})");
  REQUIRE_MESSAGE(a.status == 201, a.body);
  return a.json();
}

// Watches the claim until its Ready condition has `reason`.
json::Document claim_until(Cluster& c, const std::string& name, const std::string& reason) {
  json::Document found;
  c.api.stream(kExt + "sandboxclaims?watch=true&fieldSelector=metadata.name%3D" + name, [&](const std::string& line) {
    json::Document e = parse(line);
    if (condition(e["object"], "Ready", "reason") != reason) return true;
    found.CopyFrom(e["object"], found.GetAllocator());
    return false;
  });
  REQUIRE_MESSAGE(found.IsObject(), "claim " << name << " never reached " << reason);
  return found;
}

int ready_warm_pods(Cluster& c) {
  json::Document pool = c.api.get(kExt + "sandboxwarmpools/pool").json();
  return static_cast<int>(kubernetes::standin::int_at(pool, {"status", "readyReplicas"}).value_or(0));
}

}  // namespace

TEST_CASE("a claim on a warm pool is bound to a Sandbox that adopts a ready warm pod, named by agents.x-k8s.io/pod-name") {
  Cluster c;
  make_pool(c, 2);
  REQUIRE(corral::test::eventually([&] { return ready_warm_pods(c) == 2; }));
  json::Document bound = (claim(c, "job-1", "pool"), claim_until(c, "job-1", "DependenciesReady"));
  CHECK(condition(bound, "Ready") == "True");
  CHECK(string_at(bound, {"status", "sandbox", "name"}) == "job-1");
  json::Document sandbox = c.api.get(kSandboxes + "/job-1").json();
  const std::string pod_name = string_at(sandbox, {"metadata", "annotations", kubernetes::standin::kPodNameAnnotation});
  REQUIRE(pod_name.rfind("pool-", 0) == 0);  // one of the warm pool's
  json::Document pod = c.api.get(c.pod(pod_name)).json();
  CHECK(is_ready(pod));
  CHECK(string_at(pod, {"metadata", "labels", kubernetes::standin::kClaimUidLabel}) == string_at(bound, {"metadata", "uid"}));
  CHECK_FALSE(pod["metadata"]["labels"].HasMember(kubernetes::standin::kWarmPoolLabel));
  CHECK(string_at(pod["metadata"]["ownerReferences"][0], {"kind"}) == "Sandbox");
  // The pool makes up for the pod it gave away.
  REQUIRE(corral::test::eventually([&] { return ready_warm_pods(c) == 2; }));

  // Deleting the claim takes its Sandbox and pod with it.
  REQUIRE(c.api.del(kExt + "sandboxclaims/job-1").status == 200);
  c.wait_deleted(pod_name);
  CHECK(c.api.get(kSandboxes + "/job-1").status == 404);
}

TEST_CASE("with no warm pod ready the Sandbox makes its own pod; a claim on a missing pool says WarmPoolNotFound") {
  Cluster c;
  make_pool(c, 0);
  json::Document bound = (claim(c, "cold", "pool"), claim_until(c, "cold", "DependenciesReady"));
  json::Document sandbox = c.api.get(kSandboxes + "/cold").json();
  CHECK(string_at(sandbox, {"metadata", "annotations", kubernetes::standin::kPodNameAnnotation}).empty());
  CHECK(is_ready(c.api.get(c.pod("cold")).json()));  // the pod has the Sandbox's name
  json::Document lost = (claim(c, "lost", "no-such-pool"), claim_until(c, "lost", "WarmPoolNotFound"));
  CHECK(condition(lost, "Ready") == "False");
  CHECK(condition(lost, "Ready", "message") == "SandboxWarmPool \"no-such-pool\" not found");
}

TEST_CASE("a claim is checked against its CRD schema: warmPoolRef is required") {
  Cluster c;
  Answer a = c.api.post(kExt + "sandboxclaims", R"({"apiVersion":"extensions.agents.x-k8s.io/v1beta1","kind":"SandboxClaim",)"
                                                R"("metadata":{"name":"x"},"spec":{}})");
  CHECK(a.status == 422);
  CHECK(string_at(a.json(), {"message"}) == "SandboxClaim \"x\" is invalid: spec.warmPoolRef: Required value");
}
