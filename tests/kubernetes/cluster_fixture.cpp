#include "cluster_fixture.hpp"

#include <doctest/doctest.h>

#include "object.hpp"

namespace corral::kubernetes::test {

std::string pod_manifest(const std::string& name, const PodSpecText& spec) {
  std::string command;
  if (!spec.command.empty()) {
    command = ",\"command\":[";
    for (size_t i = 0; i < spec.command.size(); ++i) {
      rapidjson::StringBuffer b;
      json::Writer w(b);
      w.String(spec.command[i].c_str());
      command += (i ? "," : "") + std::string(b.GetString());
    }
    command += "]";
  }
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + R"(","labels":)" + spec.labels +
         R"(},"spec":{"restartPolicy":"Never","containers":[{"name":"main","image":")" + spec.image + "\"" + command +
         (spec.container_extra.empty() ? "" : "," + spec.container_extra) + "}]" +
         (spec.extra_spec.empty() ? "" : "," + spec.extra_spec) + "}}";
}

Cluster::Cluster(standin::Options options) : server(std::move(options)), api(server.url(), server.ca_pem()) {
  api.token(server.token());
}

Cluster::~Cluster() {
  if (!expect_violations)
    for (const auto& v : server.answer_violations()) FAIL_CHECK("the stand-in's answer broke its schema: " << v);
}

json::Document Cluster::create_pod(const std::string& name, const PodSpecText& spec) {
  Answer a = api.post(pods(), pod_manifest(name, spec));
  REQUIRE_MESSAGE(a.status == 201, a.body);
  json::Document pod = a.json();
  created_at[name] = standin::string_at(pod, {"metadata", "resourceVersion"});
  return pod;
}

json::Document Cluster::watch_pod(const std::string& name, const std::function<bool(const json::Value&)>& until) {
  json::Document found;
  bool seen = false;
  auto from = created_at.find(name);
  const std::string since = from == created_at.end() ? "" : "&resourceVersion=" + from->second;
  api.stream(pods() + "?watch=true&fieldSelector=metadata.name%3D" + name + since, [&](const std::string& line) {
    json::Document event = parse(line);
    if (std::string(event["type"].GetString()) == "ERROR") return false;
    if (!until(event["object"])) return true;
    found.CopyFrom(event["object"], found.GetAllocator());
    seen = true;
    return false;
  });
  REQUIRE_MESSAGE(seen, "the watch of pod " << name << " ended before it reached the state looked for");
  return found;
}

json::Document Cluster::wait_ready(const std::string& name) { return watch_pod(name, is_ready); }

void Cluster::wait_deleted(const std::string& name) {
  // From the state read, so a deletion between the read and the watch is not missed.
  Answer now = api.get(pod(name));
  if (now.status == 404) return;
  const std::string rv = standin::string_at(now.json(), {"metadata", "resourceVersion"});
  bool deleted = false;
  api.stream(pods() + "?watch=true&resourceVersion=" + rv + "&fieldSelector=metadata.name%3D" + name, [&](const std::string& line) {
    deleted = std::string(parse(line)["type"].GetString()) == "DELETED";
    return !deleted;
  });
  REQUIRE_MESSAGE(deleted, "the watch of pod " << name << " ended before it was deleted");
}

std::vector<std::string> Cluster::event_reasons(const std::string& name) {
  Answer a = api.get("/api/v1/namespaces/" + ns + "/events?fieldSelector=involvedObject.name%3D" + name);
  REQUIRE(a.status == 200);
  json::Document list = a.json();
  std::vector<std::string> out;
  for (const auto& e : list["items"].GetArray()) out.push_back(e["reason"].GetString());
  return out;
}

bool is_ready(const json::Value& pod) { return condition(pod, "Ready") == "True"; }

std::string condition(const json::Value& pod, const std::string& type, const char* member) {
  const json::Value* conditions = standin::at(pod, {"status", "conditions"});
  if (!conditions || !conditions->IsArray()) return "";
  for (const auto& c : conditions->GetArray())
    if (standin::string_at(c, {"type"}) == type) return standin::string_at(c, {member});
  return "";
}

}  // namespace corral::kubernetes::test
