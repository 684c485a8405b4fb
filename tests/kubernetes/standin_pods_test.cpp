// A pod's life as the scheduler and kubelet give it, and the faults on the way: 429 with
// Retry-After, 500, a pod that cannot be scheduled (and says why), an image that cannot be
// pulled, a pod that never becomes Ready, activeDeadlineSeconds (which only goes down),
// deletion with a grace period, a container that exits and its log.
#include <doctest/doctest.h>

#include "cluster_fixture.hpp"
#include "exec_client.hpp"
#include "object.hpp"

using namespace corral;
using namespace corral::kubernetes::test;
using corral::kubernetes::standin::int_at;
using corral::kubernetes::standin::string_at;

namespace {

std::string waiting_reason(const json::Value& pod) {
  const json::Value* statuses = corral::kubernetes::standin::at(pod, {"status", "containerStatuses"});
  if (!statuses || !statuses->IsArray() || statuses->Empty()) return "";
  return string_at((*statuses)[0], {"state", "waiting", "reason"});
}

bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

}  // namespace

TEST_CASE("fault: 429 TooManyRequests with Retry-After, then the real answer") {
  Cluster c;
  c.server.with([](auto& s) {
    s.faults.throttle_route = "list pods";
    s.faults.throttle_times = 2;
    s.faults.retry_after_seconds = 3;
  });
  for (int i = 0; i < 2; ++i) {
    Answer a = c.api.get(c.pods());
    REQUIRE(a.status == 429);
    CHECK(a.headers["retry-after"] == "3");
    json::Document d = a.json();
    CHECK(string_at(d, {"reason"}) == "TooManyRequests");
    CHECK(int_at(d, {"details", "retryAfterSeconds"}) == 3);
  }
  CHECK(c.api.get(c.pods()).status == 200);
  CHECK(c.server.calls("list pods") == 3);
}

TEST_CASE("fault: 500 InternalError to a route") {
  Cluster c;
  c.server.with([](auto& s) {
    s.faults.fail_route = "create pods";
    s.faults.fail_times = 1;
  });
  Answer a = c.api.post(c.pods(), pod_manifest("p"));
  CHECK(a.status == 500);
  CHECK(string_at(a.json(), {"reason"}) == "InternalError");
  CHECK(c.api.get(c.pod("p")).status == 404);  // nothing was made
  CHECK(c.api.post(c.pods(), pod_manifest("p")).status == 201);
}

TEST_CASE("a pod no node can take stays Pending and says why: PodScheduled False, Unschedulable, a FailedScheduling event") {
  Cluster c;
  SUBCASE("it asks for more cpu than any node has") {
    c.create_pod("big", {.container_extra = R"("resources":{"requests":{"cpu":"64","memory":"1Gi"}})"});
    json::Document pod = c.watch_pod("big", [](const json::Value& p) { return condition(p, "PodScheduled", "reason") == "Unschedulable"; });
    CHECK(string_at(pod, {"status", "phase"}) == "Pending");
    CHECK(condition(pod, "PodScheduled") == "False");
    CHECK(condition(pod, "PodScheduled", "message") ==
          "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.");
    CHECK(has(c.event_reasons("big"), "FailedScheduling"));
  }
  SUBCASE("its nodeSelector matches no node") {
    c.create_pod("gpu", {.extra_spec = R"("nodeSelector":{"accelerator":"h100"})"});
    json::Document pod = c.watch_pod("gpu", [](const json::Value& p) { return condition(p, "PodScheduled", "reason") == "Unschedulable"; });
    CHECK(condition(pod, "PodScheduled", "message") ==
          "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are "
          "available: 3 Preemption is not helpful for scheduling.");
  }
  SUBCASE("the cluster is full: the pod is scheduled once room is freed") {
    c.create_pod("a", {.container_extra = R"("resources":{"requests":{"cpu":"3"}})"});
    c.create_pod("b", {.container_extra = R"("resources":{"requests":{"cpu":"3"}})"});
    c.create_pod("c", {.container_extra = R"("resources":{"requests":{"cpu":"3"}})"});
    c.wait_ready("c");
    c.create_pod("d", {.container_extra = R"("resources":{"requests":{"cpu":"3"}})"});
    c.watch_pod("d", [](const json::Value& p) { return condition(p, "PodScheduled", "reason") == "Unschedulable"; });
    REQUIRE(c.api.del(c.pod("a") + "?gracePeriodSeconds=0").status == 200);
    c.wait_ready("d");
  }
  SUBCASE("fault: the scheduler's message, whatever the pod asks") {
    c.server.with([](auto& s) { s.faults.unschedulable_message = "0/3 nodes are available: 3 Insufficient cpu."; });
    c.create_pod("p");
    json::Document pod = c.watch_pod("p", [](const json::Value& p) { return condition(p, "PodScheduled", "reason") == "Unschedulable"; });
    CHECK(condition(pod, "PodScheduled", "message") == "0/3 nodes are available: 3 Insufficient cpu.");
  }
}

TEST_CASE("an image that cannot be pulled: ErrImagePull, then ImagePullBackOff, with the runtime's message and events") {
  Cluster c;
  c.server.with([](auto& s) { s.faults.unpullable_images.insert("ghcr.io/acme/nope:1.0"); });
  c.create_pod("p", {.image = "ghcr.io/acme/nope:1.0"});
  json::Document first = c.watch_pod("p", [](const json::Value& p) { return waiting_reason(p) == "ErrImagePull"; });
  CHECK(string_at(first["status"]["containerStatuses"][0], {"state", "waiting", "message"}) ==
        "rpc error: code = NotFound desc = failed to pull and unpack image \"ghcr.io/acme/nope:1.0\": failed to resolve "
        "reference \"ghcr.io/acme/nope:1.0\": ghcr.io/acme/nope:1.0: not found");
  CHECK(string_at(first, {"status", "phase"}) == "Pending");
  json::Document later = c.watch_pod("p", [](const json::Value& p) { return waiting_reason(p) == "ImagePullBackOff"; });
  CHECK(string_at(later["status"]["containerStatuses"][0], {"imageID"}) == "");
  const auto reasons = c.event_reasons("p");
  CHECK(has(reasons, "Failed"));
  CHECK(has(reasons, "BackOff"));
}

TEST_CASE("fault: a pod that runs but never becomes Ready") {
  Cluster c;
  c.server.with([](auto& s) { s.faults.ready_ms = -1; });
  c.create_pod("p", {.command = {"sleep", "600"}});
  json::Document pod = c.watch_pod("p", [](const json::Value& p) { return string_at(p, {"status", "phase"}) == "Running"; });
  CHECK(condition(pod, "Ready") == "False");
  CHECK(condition(pod, "Ready", "reason") == "ContainersNotReady");
  CHECK(condition(pod, "Ready", "message") == "containers with unready status: [main]");
  CHECK(pod["status"]["containerStatuses"][0]["started"].IsTrue());
  CHECK(pod["status"]["containerStatuses"][0]["ready"].IsFalse());
}

TEST_CASE("activeDeadlineSeconds may only go down: a PATCH that raises it is 422; one that lowers it ends the pod") {
  Cluster c;
  c.create_pod("p", {.command = {"sleep", "600"}, .extra_spec = R"("activeDeadlineSeconds":3600)"});
  c.wait_ready("p");
  Answer raise = c.api.patch(c.pod("p"), R"({"spec":{"activeDeadlineSeconds":7200}})", "application/strategic-merge-patch+json");
  REQUIRE(raise.status == 422);
  CHECK(string_at(raise.json(), {"message"}) ==
        "Pod \"p\" is invalid: spec.activeDeadlineSeconds: Invalid value: 7200: must be less than or equal to previous value");
  Answer unset = c.api.patch(c.pod("p"), R"({"spec":{"activeDeadlineSeconds":null}})");
  CHECK(unset.status == 422);
  Answer lower = c.api.patch(c.pod("p"), R"({"spec":{"activeDeadlineSeconds":1}})", "application/strategic-merge-patch+json");
  REQUIRE(lower.status == 200);
  json::Document pod = c.watch_pod("p", [](const json::Value& p) { return string_at(p, {"status", "phase"}) == "Failed"; });
  CHECK(string_at(pod, {"status", "reason"}) == "DeadlineExceeded");
  CHECK(string_at(pod, {"status", "message"}) == "Pod was active on the node longer than the specified deadline");
  CHECK(has(c.event_reasons("p"), "DeadlineExceeded"));
}

TEST_CASE("delete with a grace period: deletionTimestamp first, the processes told to stop, then DELETED") {
  Cluster c;
  // A container that ignores SIGTERM holds the pod until the grace period is over.
  c.create_pod("p", {.command = {"sh", "-c", "trap '' TERM; sleep 600 & wait"}});
  c.wait_ready("p");
  // Long enough that the check below still finds the pod on a loaded machine.
  Answer a = c.api.del(c.pod("p"), R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":4})");
  REQUIRE(a.status == 200);
  json::Document answer = a.json();
  CHECK(string_at(answer, {"kind"}) == "Pod");
  CHECK(!string_at(answer, {"metadata", "deletionTimestamp"}).empty());
  CHECK(int_at(answer, {"metadata", "deletionGracePeriodSeconds"}) == 4);
  CHECK(c.api.get(c.pod("p")).status == 200);  // still there, terminating
  c.wait_deleted("p");
}

TEST_CASE("a container whose command ends: Succeeded or Failed by its exit code, its output in the pod's log") {
  Cluster c;
  c.create_pod("ok", {.command = {"sh", "-c", "echo done"}});
  c.create_pod("bad", {.command = {"sh", "-c", "echo oops >&2; exit 4"}});
  json::Document ok = c.watch_pod("ok", [](const json::Value& p) { return string_at(p, {"status", "phase"}) == "Succeeded"; });
  CHECK(string_at(ok["status"]["containerStatuses"][0], {"state", "terminated", "reason"}) == "Completed");
  json::Document bad = c.watch_pod("bad", [](const json::Value& p) { return string_at(p, {"status", "phase"}) == "Failed"; });
  CHECK(int_at(bad["status"]["containerStatuses"][0], {"state", "terminated", "exitCode"}) == 4);
  CHECK(string_at(bad["status"]["containerStatuses"][0], {"state", "terminated", "reason"}) == "Error");
  Answer log = c.api.get(c.pod("bad") + "/log");
  CHECK(log.status == 200);
  CHECK(log.body == "oops\n");
}
