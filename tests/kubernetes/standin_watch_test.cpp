// Watches as the API server streams them: WatchEvent lines with the object and its
// resourceVersion, a resume from a resourceVersion, 410 Expired once the history is
// compacted (and by fault), a stream that ends early by fault, selectors that drop an
// object that stops matching, bookmarks and timeoutSeconds.
#include <doctest/doctest.h>

#include "cluster_fixture.hpp"
#include "object.hpp"

using namespace corral;
using namespace corral::kubernetes::test;
using corral::kubernetes::standin::int_at;
using corral::kubernetes::standin::string_at;

namespace {

struct Event {
  std::string type;
  std::string name;
  long long rv = 0;
  std::string phase;
  json::Document object;
};

// The events of a watch at `query`, until `until` holds for the one just read (or the
// stream ends).
std::vector<Event> watch(Cluster& c, const std::string& query, const std::function<bool(const Event&)>& until) {
  std::vector<Event> events;
  c.api.stream(c.pods() + "?watch=true&" + query, [&](const std::string& line) {
    json::Document d = parse(line);
    Event e;
    e.type = string_at(d, {"type"});
    e.name = string_at(d["object"], {"metadata", "name"});
    const std::string rv = string_at(d["object"], {"metadata", "resourceVersion"});
    e.rv = rv.empty() ? 0 : std::stoll(rv);
    e.phase = string_at(d["object"], {"status", "phase"});
    e.object.CopyFrom(d["object"], e.object.GetAllocator());
    events.push_back(std::move(e));
    return !until(events.back());
  });
  return events;
}

}  // namespace

TEST_CASE("a watch by name sees the pod as ADDED, then MODIFIED up to Ready, each change with its resourceVersion") {
  Cluster c;
  // From the list's resourceVersion, so the watch replays the pod's whole history.
  const std::string rv = string_at(c.api.get(c.pods()).json(), {"metadata", "resourceVersion"});
  c.create_pod("w", {.command = {"sleep", "600"}});
  auto events = watch(c, "fieldSelector=metadata.name%3Dw&resourceVersion=" + rv, [](const Event& e) { return is_ready(e.object); });
  REQUIRE(events.size() >= 2);
  CHECK(events.front().type == "ADDED");
  CHECK(string_at(events.front().object, {"kind"}) == "Pod");  // a watch's objects carry their kind
  for (size_t i = 1; i < events.size(); ++i) {
    CHECK(events[i].type == "MODIFIED");
    CHECK(events[i].rv > events[i - 1].rv);
  }
  CHECK(is_ready(events.back().object));
  CHECK(events.back().phase == "Running");
  CHECK(!string_at(events.back().object, {"status", "podIP"}).empty());
  CHECK(events.back().object["status"]["containerStatuses"][0]["state"].HasMember("running"));
}

TEST_CASE("a watch from a resourceVersion sees only what changed after it") {
  Cluster c;
  json::Document pod = c.create_pod("w");
  c.wait_ready("w");
  const std::string rv = string_at(c.api.get(c.pod("w")).json(), {"metadata", "resourceVersion"});
  REQUIRE(c.api.patch(c.pod("w"), R"({"metadata":{"labels":{"step":"two"}}})").status == 200);
  auto events = watch(c, "resourceVersion=" + rv, [](const Event&) { return true; });
  REQUIRE(events.size() == 1);
  CHECK(events[0].type == "MODIFIED");
  CHECK(string_at(events[0].object, {"metadata", "labels", "step"}) == "two");
  CHECK(events[0].rv > std::stoll(rv));
}

TEST_CASE("a resourceVersion older than the history kept: one ERROR event with a 410 Expired Status, then the end") {
  Cluster c;
  json::Document pod = c.create_pod("w");
  const std::string rv = string_at(pod, {"metadata", "resourceVersion"});
  c.wait_ready("w");
  c.server.compact();
  auto events = watch(c, "resourceVersion=" + rv, [](const Event&) { return false; });
  REQUIRE(events.size() == 1);
  CHECK(events[0].type == "ERROR");
  CHECK(string_at(events[0].object, {"kind"}) == "Status");
  CHECK(int_at(events[0].object, {"code"}) == 410);
  CHECK(string_at(events[0].object, {"reason"}) == "Expired");
  CHECK(string_at(events[0].object, {"message"}).find("too old resource version: " + rv + " (") == 0);
}

TEST_CASE("faults: a watch answered 410 at once, and a watch that ends early") {
  Cluster c;
  c.create_pod("a");
  c.create_pod("b");
  SUBCASE("410 even for a fresh resourceVersion") {
    c.server.with([](auto& s) { s.faults.watch_gone_times = 1; });
    auto events = watch(c, "", [](const Event&) { return false; });
    REQUIRE(events.size() == 1);
    CHECK(events[0].type == "ERROR");
    CHECK(int_at(events[0].object, {"code"}) == 410);
    // The next watch is normal again.
    auto next = watch(c, "", [](const Event& e) { return e.name == "b"; });
    CHECK(next.front().type == "ADDED");
  }
  SUBCASE("the stream ends cleanly after one event; the client resumes from the last resourceVersion") {
    c.server.with([](auto& s) {
      s.faults.watch_end_times = 1;
      s.faults.watch_end_after_events = 1;
    });
    auto first = watch(c, "", [](const Event&) { return false; });  // the server ends it
    REQUIRE(first.size() == 1);
    REQUIRE(c.api.patch(c.pod("b"), R"({"metadata":{"labels":{"seen":"later"}}})").status == 200);
    auto rest = watch(c, "resourceVersion=" + std::to_string(first[0].rv),
                      [](const Event& e) { return string_at(e.object, {"metadata", "labels", "seen"}) == "later"; });
    CHECK(rest.back().type == "MODIFIED");
    CHECK(rest.back().name == "b");
  }
}

TEST_CASE("a pod relabeled out of a watch's selector is DELETED for that watch") {
  Cluster c;
  json::Document pod = c.create_pod("w", {.labels = R"({"corral-lease":"l1"})"});
  const std::string rv = string_at(pod, {"metadata", "resourceVersion"});
  REQUIRE(c.api.patch(c.pod("w"), R"({"metadata":{"labels":{"corral-lease":"l2"}}})").status == 200);
  auto events = watch(c, "labelSelector=corral-lease%3Dl1&resourceVersion=" + rv, [](const Event& e) { return e.type == "DELETED"; });
  REQUIRE(!events.empty());
  CHECK(events.back().type == "DELETED");
  CHECK(c.api.get(c.pod("w")).status == 200);  // it still exists, only no longer selected
}

TEST_CASE("a deleted pod is DELETED; sendInitialEvents ends its replay with a BOOKMARK; timeoutSeconds ends a watch") {
  Cluster c;
  c.create_pod("w", {.command = {"sleep", "600"}});
  c.wait_ready("w");
  SUBCASE("delete") {
    Answer a = c.api.del(c.pod("w"));
    REQUIRE(a.status == 200);
    // From the answer's resourceVersion, so the watch cannot start after the pod is gone.
    const std::string rv = string_at(a.json(), {"metadata", "resourceVersion"});
    auto events = watch(c, "fieldSelector=metadata.name%3Dw&resourceVersion=" + rv, [](const Event& e) { return e.type == "DELETED"; });
    CHECK(events.back().type == "DELETED");
  }
  SUBCASE("bookmark") {
    auto events = watch(c, "sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan",
                        [](const Event& e) { return e.type == "BOOKMARK"; });
    REQUIRE(events.size() == 2);
    CHECK(events[0].type == "ADDED");
    CHECK(string_at(events[1].object, {"metadata", "annotations", "k8s.io/initial-events-end"}) == "true");
  }
  SUBCASE("timeout") {
    auto events = watch(c, "timeoutSeconds=1", [](const Event&) { return false; });
    CHECK(events.size() == 1);  // the ADDED, then the server ends the stream
  }
}
