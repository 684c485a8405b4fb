// Discovery as the API server serves it to clients that ask what it has (kubectl first of
// all): /api (APIVersions), /apis (APIGroupList), /apis/<group>, the APIResourceList of
// each group version, /version and the health checks.
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "api_internal.hpp"
#include "standin.hpp"

namespace corral::kubernetes::standin {
namespace {

using corral::json::Writer;

void write_resource(Writer& w, const ResourceType& t, const std::string& sub) {
  w.StartObject();
  json::write_string(w, "name", sub.empty() ? t.resource : t.resource + "/" + sub);
  json::write_string(w, "singularName", sub.empty() ? t.singular : "");
  w.Key("namespaced");
  w.Bool(t.namespaced);
  json::write_string(w, "kind", sub == "exec" ? "PodExecOptions" : t.kind);
  w.Key("verbs");
  w.StartArray();
  if (sub == "exec") {
    w.String("create");
    w.String("get");
  } else if (sub == "status" || sub == "log") {
    w.String("get");
    if (sub == "status") {
      w.String("patch");
      w.String("update");
    }
  } else {
    for (const auto& v : t.verbs) w.String(v.c_str());
  }
  w.EndArray();
  if (sub.empty() && !t.short_names.empty()) json::write_strings(w, "shortNames", t.short_names);
  w.EndObject();
}

std::string resource_list(const std::string& group, const std::string& version) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  json::write_string(w, "kind", "APIResourceList");
  json::write_string(w, "apiVersion", "v1");
  json::write_string(w, "groupVersion", group.empty() ? version : group + "/" + version);
  w.Key("resources");
  w.StartArray();
  for (const auto& t : resource_types()) {
    if (t.group != group || t.version != version) continue;
    write_resource(w, t, "");
    for (const auto& sub : t.subresources) write_resource(w, t, sub);
    if (t.resource == "pods") write_resource(w, t, "log");
  }
  w.EndArray();
  w.EndObject();
  return buffer.GetString();
}

void write_group(Writer& w, const std::string& group) {
  std::string version;
  for (const auto& t : resource_types())
    if (t.group == group) version = t.version;
  w.StartObject();
  json::write_string(w, "name", group);
  w.Key("versions");
  w.StartArray();
  w.StartObject();
  json::write_string(w, "groupVersion", group + "/" + version);
  json::write_string(w, "version", version);
  w.EndObject();
  w.EndArray();
  w.Key("preferredVersion");
  w.StartObject();
  json::write_string(w, "groupVersion", group + "/" + version);
  json::write_string(w, "version", version);
  w.EndObject();
  w.EndObject();
}

std::set<std::string> groups() {
  std::set<std::string> out;
  for (const auto& t : resource_types())
    if (!t.group.empty()) out.insert(t.group);
  return out;
}

HttpResponse json_response(std::string body) {
  HttpResponse r;
  r.body = std::move(body);
  return r;
}

json::Document read_document(const std::string& file) {
  std::ifstream in(schema_dir() / file);
  std::stringstream text;
  text << in.rdbuf();
  json::Document doc;
  doc.Parse(text.str().c_str());
  return doc;
}

// /openapi/v3 and its group-version documents: the schemas the stand-in checks against
// (what kubectl validates a manifest with before it sends it).
std::optional<HttpResponse> openapi(const HttpRequest& request) {
  static const std::map<std::string, std::string> documents = {
      {"api/v1", "core-v1.json"},
      {"apis/networking.k8s.io/v1", "networking-v1.json"},
      {"apis/agents.x-k8s.io/v1beta1", "agents-v1beta1.json"},
      {"apis/extensions.agents.x-k8s.io/v1beta1", "agents-v1beta1.json"}};
  if (request.path == "/openapi/v3") {
    std::string body = "{\"paths\":{";
    bool first = true;
    for (const auto& [path, file] : documents) {
      body += std::string(first ? "" : ",") + "\"" + path + "\":{\"serverRelativeURL\":\"/openapi/v3/" + path + "\"}";
      first = false;
    }
    return json_response(body + "}}");
  }
  if (request.path.rfind("/openapi/v3/", 0) != 0) return std::nullopt;
  auto it = documents.find(request.path.substr(12));
  if (it == documents.end()) return std::nullopt;
  // Each group version's document stands alone, as the API server's do: the shared
  // apimachinery schemas come from the core/v1 one.
  json::Document doc = read_document(it->second);
  if (it->second != "core-v1.json") {
    json::Document core = read_document("core-v1.json");
    auto& schemas = doc["components"]["schemas"];
    for (auto& m : core["components"]["schemas"].GetObject())
      if (!schemas.HasMember(m.name)) schemas.AddMember(json::Value(m.name, doc.GetAllocator()), json::Value(m.value, doc.GetAllocator()), doc.GetAllocator());
  }
  return json_response(json::dump(doc));
}

}  // namespace

std::optional<HttpResponse> handle_discovery(State& state, const HttpRequest& request) {
  const std::string& p = request.path;
  if (p == "/healthz" || p == "/livez" || p == "/readyz") {
    HttpResponse r;
    r.content_type = "text/plain; charset=utf-8";
    r.body = "ok";
    return r;
  }
  if (p == "/version")
    return json_response(R"({"major":"1","minor":"35","emulationMajor":"1","emulationMinor":"35","minCompatibilityMajor":"1",)"
                         R"("minCompatibilityMinor":"34","gitVersion":"v1.35.0","gitCommit":"corral-standin",)"
                         R"("gitTreeState":"clean","buildDate":"2025-12-17T00:00:00Z","goVersion":"go1.25.5",)"
                         R"("compiler":"gc","platform":"linux/amd64"})");
  if (auto doc = openapi(request)) return doc;
  if (p == "/api" || p == "/api/") {
    return json_response(R"({"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":")" +
                         state.server_url.substr(state.server_url.find("//") + 2) + R"("}]})");
  }
  if (p == "/api/v1") return json_response(resource_list("", "v1"));
  if (p == "/apis" || p == "/apis/") {
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    w.StartObject();
    json::write_string(w, "kind", "APIGroupList");
    json::write_string(w, "apiVersion", "v1");
    w.Key("groups");
    w.StartArray();
    for (const auto& g : groups()) write_group(w, g);
    w.EndArray();
    w.EndObject();
    return json_response(buffer.GetString());
  }
  for (const auto& g : groups()) {
    if (p == "/apis/" + g) {
      rapidjson::StringBuffer buffer;
      Writer w(buffer);
      write_group(w, g);
      std::string body = buffer.GetString();
      body.insert(1, R"("kind":"APIGroup","apiVersion":"v1",)");
      return json_response(body);
    }
    for (const auto& t : resource_types())
      if (t.group == g && p == "/apis/" + g + "/" + t.version) return json_response(resource_list(g, t.version));
  }
  return std::nullopt;
}

}  // namespace corral::kubernetes::standin
