// The stand-in API server's REST side, through real HTTPS (libcurl) on 127.0.0.1: objects
// with apiVersion and kind, what the server fills in, metav1.Status errors with the real
// reasons, label and field selectors, pages, validation as the API server validates.
#include <doctest/doctest.h>

#include "cluster_fixture.hpp"
#include "object.hpp"

using namespace corral;
using namespace corral::kubernetes::test;
using corral::kubernetes::standin::string_at;
using corral::kubernetes::standin::int_at;

namespace {

std::string status_reason(const Answer& a) {
  json::Document d = a.json();
  REQUIRE_MESSAGE(string_at(d, {"kind"}) == "Status", a.body);
  CHECK(string_at(d, {"apiVersion"}) == "v1");
  CHECK(string_at(d, {"status"}) == "Failure");
  CHECK(int_at(d, {"code"}) == a.status);
  return string_at(d, {"reason"});
}

}  // namespace

TEST_CASE("a pod is created, read, listed by label and deleted, in the API's own formats") {
  Cluster c;
  json::Document created = c.create_pod("web-1", {.labels = R"({"app":"web","tier":"front"})"});
  CHECK(string_at(created, {"kind"}) == "Pod");
  CHECK(string_at(created, {"apiVersion"}) == "v1");
  CHECK(string_at(created, {"metadata", "namespace"}) == "corral");
  CHECK(string_at(created, {"metadata", "uid"}).size() == 36);
  CHECK(!string_at(created, {"metadata", "resourceVersion"}).empty());
  CHECK(!string_at(created, {"metadata", "creationTimestamp"}).empty());
  // What defaulting and admission add, as a real cluster does.
  CHECK(string_at(created, {"spec", "serviceAccountName"}) == "default");
  CHECK(int_at(created, {"spec", "terminationGracePeriodSeconds"}) == 30);
  CHECK(created["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent");
  CHECK(created["spec"]["tolerations"].Size() == 2);
  CHECK(string_at(created, {"status", "phase"}) == "Pending");
  CHECK(string_at(created, {"status", "qosClass"}) == "BestEffort");

  Answer got = c.api.get(c.pod("web-1"));
  REQUIRE(got.status == 200);
  CHECK(string_at(got.json(), {"metadata", "uid"}) == string_at(created, {"metadata", "uid"}));

  c.create_pod("db-1", {.labels = R"({"app":"db"})"});
  auto names = [&](const std::string& query) {
    Answer a = c.api.get(c.pods() + query);
    REQUIRE_MESSAGE(a.status == 200, a.body);
    json::Document list = a.json();
    CHECK(string_at(list, {"kind"}) == "PodList");
    CHECK(!string_at(list, {"metadata", "resourceVersion"}).empty());
    std::vector<std::string> out;
    for (const auto& item : list["items"].GetArray()) {
      CHECK_FALSE(item.HasMember("kind"));  // a built-in list's items carry no apiVersion or kind
      out.push_back(string_at(item, {"metadata", "name"}));
    }
    return out;
  };
  CHECK(names("?labelSelector=app%3Dweb") == std::vector<std::string>{"web-1"});
  CHECK(names("?labelSelector=app%20in%20(web,db),tier%21%3Dback") == std::vector<std::string>{"db-1", "web-1"});
  CHECK(names("?labelSelector=%21tier") == std::vector<std::string>{"db-1"});
  CHECK(names("?fieldSelector=metadata.name%3Ddb-1") == std::vector<std::string>{"db-1"});
  CHECK(names("?fieldSelector=status.phase%21%3DFailed&labelSelector=app%3Ddb") == std::vector<std::string>{"db-1"});

  Answer bad = c.api.get(c.pods() + "?labelSelector=app%3D%3D%3D");
  CHECK(bad.status == 400);
  CHECK(status_reason(bad) == "BadRequest");
  Answer field = c.api.get(c.pods() + "?fieldSelector=spec.image%3Dx");
  CHECK(field.status == 400);
  CHECK(string_at(field.json(), {"message"}) == "field label not supported: spec.image");

  // Query parameters are checked against the types the API document gives them.
  Answer limit = c.api.get(c.pods() + "?limit=ten");
  CHECK(limit.status == 400);
  CHECK(string_at(limit.json(), {"message"}) == "invalid value for limit: strconv.ParseInt: parsing \"ten\": invalid syntax");
  CHECK(c.api.get(c.pods() + "?watch=maybe").status == 400);
  CHECK(c.api.get(c.pods() + "?unknownParameter=x").status == 200);  // ignored, as the API server ignores it

  Answer again = c.api.post(c.pods(), pod_manifest("web-1"));
  CHECK(again.status == 409);
  CHECK(status_reason(again) == "AlreadyExists");
  CHECK(string_at(again.json(), {"message"}) == "pods \"web-1\" already exists");

  Answer gone = c.api.del(c.pod("web-1") + "?gracePeriodSeconds=0");
  CHECK(gone.status == 200);
  CHECK(string_at(gone.json(), {"kind"}) == "Pod");
  Answer missing = c.api.get(c.pod("web-1"));
  CHECK(missing.status == 404);
  CHECK(status_reason(missing) == "NotFound");
  CHECK(string_at(missing.json(), {"message"}) == "pods \"web-1\" not found");
  CHECK(string_at(missing.json(), {"details", "kind"}) == "pods");
  CHECK(string_at(missing.json(), {"details", "name"}) == "web-1");
}

TEST_CASE("generateName gives a name; a pod in a namespace that does not exist is 404") {
  Cluster c;
  Answer a = c.api.post(c.pods(), R"({"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"sbx-"},)"
                                  R"("spec":{"containers":[{"name":"main","image":"busybox"}]}})");
  REQUIRE(a.status == 201);
  const std::string name = string_at(a.json(), {"metadata", "name"});
  CHECK(name.size() == 9);
  CHECK(name.rfind("sbx-", 0) == 0);
  CHECK(a.json()["spec"]["containers"][0]["imagePullPolicy"] == "Always");  // no tag: latest
  Answer nowhere = c.api.post("/api/v1/namespaces/nope/pods", pod_manifest("x"));
  CHECK(nowhere.status == 404);
  CHECK(string_at(nowhere.json(), {"message"}) == "namespaces \"nope\" not found");
}

TEST_CASE("a pod is validated as the API server validates it") {
  Cluster c;
  SUBCASE("a container without an image, a bad name, requests above limits: 422 Invalid with causes") {
    Answer a = c.api.post(c.pods(), R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"Bad_Name"},"spec":{"containers":[)"
                                    R"({"name":"main","resources":{"requests":{"cpu":"2"},"limits":{"cpu":"1"}}}]}})");
    REQUIRE(a.status == 422);
    json::Document d = a.json();
    CHECK(string_at(d, {"reason"}) == "Invalid");
    const std::string message = string_at(d, {"message"});
    CHECK(message.find("Pod \"Bad_Name\" is invalid: [") == 0);
    CHECK(message.find("metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain") != std::string::npos);
    CHECK(message.find("spec.containers[0].image: Required value") != std::string::npos);
    CHECK(message.find("spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1") !=
          std::string::npos);
    bool image_cause = false;
    for (const auto& cause : d["details"]["causes"].GetArray())
      image_cause |= string_at(cause, {"field"}) == "spec.containers[0].image" && string_at(cause, {"reason"}) == "FieldValueRequired";
    CHECK(image_cause);
  }
  SUBCASE("a field of the wrong type: 400 BadRequest") {
    Answer a = c.api.post(c.pods(), R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"containers":"main"}})");
    CHECK(a.status == 400);
    CHECK(string_at(a.json(), {"message"}).find("Pod in version \"v1\" cannot be handled as a Pod") == 0);
  }
  SUBCASE("an unknown field is dropped with a warning, or refused under fieldValidation=Strict") {
    const std::string body = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"sandbox":true,"containers":[{"name":"main","image":"busybox"}]}})";
    Answer strict = c.api.post(c.pods() + "?fieldValidation=Strict", body);
    CHECK(strict.status == 400);
    CHECK(string_at(strict.json(), {"message"}) == "strict decoding error: unknown field \"spec.sandbox\"");
    Answer warned = c.api.post(c.pods(), body);
    REQUIRE(warned.status == 201);
    CHECK(warned.headers["warning"] == "299 - \"unknown field \\\"spec.sandbox\\\"\"");
    CHECK_FALSE(warned.json()["spec"].HasMember("sandbox"));
  }
  SUBCASE("a service account that does not exist: 403 from admission") {
    Answer a = c.api.post(c.pods(), pod_manifest("x", {.extra_spec = R"("serviceAccountName":"builder")"}));
    CHECK(a.status == 403);
    CHECK(string_at(a.json(), {"message"}) ==
          "pods \"x\" is forbidden: error looking up service account corral/builder: serviceaccount \"builder\" not found");
    c.server.add_service_account("corral", "builder");
    CHECK(c.api.post(c.pods(), pod_manifest("x", {.extra_spec = R"("serviceAccountName":"builder")"})).status == 201);
  }
  SUBCASE("a body without apiVersion and kind is of the path's type, as client libraries send it") {
    Answer a = c.api.post(c.pods(), R"({"metadata":{"name":"bare"},"spec":{"containers":[{"name":"main","image":"busybox"}]}})");
    REQUIRE(a.status == 201);
    CHECK(string_at(a.json(), {"kind"}) == "Pod");
    CHECK(string_at(a.json(), {"apiVersion"}) == "v1");
  }
  SUBCASE("a body whose kind is not the path's: 400") {
    Answer a = c.api.post(c.pods(), R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}})");
    CHECK(a.status == 400);
  }
}

TEST_CASE("a list pages with limit and continue; a continue token older than the history is 410 Expired") {
  Cluster c;
  for (const char* name : {"a", "b", "c"}) c.create_pod(name);
  Answer first = c.api.get(c.pods() + "?limit=2");
  REQUIRE(first.status == 200);
  json::Document page = first.json();
  CHECK(page["items"].Size() == 2);
  CHECK(int_at(page, {"metadata", "remainingItemCount"}) == 1);
  const std::string token = string_at(page, {"metadata", "continue"});
  REQUIRE(!token.empty());
  Answer second = c.api.get(c.pods() + "?limit=2&continue=" + token);
  REQUIRE(second.status == 200);
  CHECK(second.json()["items"].Size() == 1);
  c.create_pod("d");  // history moves on, and is compacted past the token's revision
  c.server.compact();
  Answer expired = c.api.get(c.pods() + "?limit=2&continue=" + token);
  CHECK(expired.status == 410);
  CHECK(string_at(expired.json(), {"reason"}) == "Expired");
}

TEST_CASE("update needs the current resourceVersion; a patch changes only what it names") {
  Cluster c;
  json::Document pod = c.create_pod("p", {.labels = R"({"app":"web"})"});
  const std::string rv = string_at(pod, {"metadata", "resourceVersion"});
  Answer merged = c.api.patch(c.pod("p"), R"({"metadata":{"labels":{"corral-lease":"l1","app":null}}})");
  REQUIRE_MESSAGE(merged.status == 200, merged.body);
  json::Document after = merged.json();
  CHECK(string_at(after, {"metadata", "labels", "corral-lease"}) == "l1");
  CHECK_FALSE(after["metadata"]["labels"].HasMember("app"));
  CHECK(string_at(after, {"metadata", "resourceVersion"}) != rv);
  Answer json_patch = c.api.patch(c.pod("p"), R"([{"op":"add","path":"/metadata/annotations","value":{"a":"b"}}])",
                                  "application/json-patch+json");
  CHECK(json_patch.status == 200);
  CHECK(string_at(json_patch.json(), {"metadata", "annotations", "a"}) == "b");
  // PUT with a stale resourceVersion: 409 Conflict.
  json::Document stale = kubernetes::standin::copy_of(pod);
  Answer conflict = c.api.put(c.pod("p"), json::dump(stale));
  CHECK(conflict.status == 409);
  CHECK(string_at(conflict.json(), {"reason"}) == "Conflict");
  // Changing the image is allowed; the command is not.
  Answer command = c.api.patch(c.pod("p"), R"({"spec":{"containers":[{"name":"main","command":["true"]}]}})",
                               "application/strategic-merge-patch+json");
  CHECK(command.status == 422);
  CHECK(string_at(command.json(), {"message"}).find("pod updates may not change fields other than") != std::string::npos);
  Answer image = c.api.patch(c.pod("p"), R"({"spec":{"containers":[{"name":"main","image":"busybox:1.37"}]}})",
                             "application/strategic-merge-patch+json");
  CHECK(image.status == 200);
  CHECK(image.json()["spec"]["containers"][0]["image"] == "busybox:1.37");
}

TEST_CASE("discovery, /version and a Table as kubectl asks for them") {
  Cluster c;
  Answer api = c.api.get("/api");
  CHECK(string_at(api.json(), {"kind"}) == "APIVersions");
  Answer v1 = c.api.get("/api/v1");
  bool exec = false;
  const json::Document resources = v1.json();  // a range over a temporary's array would outlive it
  for (const auto& r : resources["resources"].GetArray()) exec |= string_at(r, {"name"}) == "pods/exec";
  CHECK(exec);
  Answer groups = c.api.get("/apis");
  CHECK(groups.body.find("\"name\":\"extensions.agents.x-k8s.io\"") != std::string::npos);
  CHECK(groups.body.find("\"name\":\"networking.k8s.io\"") != std::string::npos);
  CHECK(string_at(c.api.get("/version").json(), {"gitVersion"}) == "v1.35.0");
  c.create_pod("p");
  Answer table = c.api.get(c.pods(), {"Accept: application/json;as=Table;v=v1;g=meta.k8s.io"});
  json::Document t = table.json();
  CHECK(string_at(t, {"kind"}) == "Table");
  CHECK(t["rows"][0]["cells"][0] == "p");
}
