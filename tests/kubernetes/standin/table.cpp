#include "table.hpp"

#include "object.hpp"

#include <cctype>

namespace corral::kubernetes::standin {
namespace {

using corral::json::Writer;

// Go's duration.HumanDuration, as kubectl shows ages.
std::string human_age(const std::string& since) {
  std::tm tm{};
  if (since.empty() || !strptime(since.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm)) return "<unknown>";
  const long seconds = static_cast<long>(std::difftime(std::time(nullptr), timegm(&tm)));
  if (seconds < 0) return "0s";
  if (seconds < 120) return std::to_string(seconds) + "s";
  const long minutes = seconds / 60;
  if (minutes < 10) return std::to_string(minutes) + "m" + (seconds % 60 ? std::to_string(seconds % 60) + "s" : "");
  if (minutes < 180) return std::to_string(minutes) + "m";
  const long hours = minutes / 60;
  if (hours < 8) return std::to_string(hours) + "h" + (minutes % 60 ? std::to_string(minutes % 60) + "m" : "");
  if (hours < 48) return std::to_string(hours) + "h";
  return std::to_string(hours / 24) + "d";
}

// The STATUS column of `kubectl get pods` (printPod in pkg/printers/internalversion).
std::string pod_status_column(const json::Value& pod) {
  std::string reason = string_at(pod, {"status", "reason"}, string_at(pod, {"status", "phase"}));
  if (const json::Value* statuses = at(pod, {"status", "containerStatuses"}); statuses && statuses->IsArray())
    for (const auto& c : statuses->GetArray()) {
      const std::string waiting = string_at(c, {"state", "waiting", "reason"});
      const std::string terminated = string_at(c, {"state", "terminated", "reason"});
      if (!waiting.empty()) reason = waiting;
      else if (!terminated.empty()) reason = terminated;
    }
  if (at(pod, {"metadata", "deletionTimestamp"}) && reason != "Evicted") reason = "Terminating";
  return reason;
}

void column(Writer& w, const char* name, const char* type, const char* format, int priority) {
  w.StartObject();
  json::write_string(w, "name", name);
  json::write_string(w, "type", type);
  json::write_string(w, "format", format);
  json::write_string(w, "description", "");
  w.Key("priority");
  w.Int(priority);
  w.EndObject();
}

}  // namespace

bool wants_table(const std::string& accept) { return accept.find("as=Table") != std::string::npos; }

std::string table_of(const ResourceType& type, const std::vector<ObjectPtr>& objects, std::int64_t revision,
                     const std::string& include_object) {
  const bool pods = type.resource == "pods";
  const bool events = type.resource == "events";
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  json::write_string(w, "kind", "Table");
  json::write_string(w, "apiVersion", "meta.k8s.io/v1");
  w.Key("metadata");
  w.StartObject();
  json::write_string(w, "resourceVersion", std::to_string(revision));
  w.EndObject();
  w.Key("columnDefinitions");
  w.StartArray();
  if (events) {
    column(w, "Last Seen", "string", "", 0);
    column(w, "Type", "string", "", 0);
    column(w, "Reason", "string", "", 0);
    column(w, "Object", "string", "", 0);
    column(w, "Message", "string", "", 0);
  } else {
    column(w, "Name", "string", "name", 0);
  }
  if (pods) {
    column(w, "Ready", "string", "", 0);
    column(w, "Status", "string", "", 0);
    column(w, "Restarts", "string", "", 0);
  }
  if (!events) column(w, "Age", "string", "", 0);
  if (pods) {
    column(w, "IP", "string", "", 1);
    column(w, "Node", "string", "", 1);
  }
  w.EndArray();
  w.Key("rows");
  w.StartArray();
  for (const auto& o : objects) {
    w.StartObject();
    w.Key("cells");
    w.StartArray();
    if (events) {
      const std::string seen = string_at(*o, {"lastTimestamp"}, string_at(*o, {"eventTime"}));
      json::write_text(w, human_age(seen.substr(0, 19) + (seen.empty() ? "" : "Z")));
      json::write_text(w, string_at(*o, {"type"}));
      json::write_text(w, string_at(*o, {"reason"}));
      std::string kind = string_at(*o, {"involvedObject", "kind"});
      for (auto& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      json::write_text(w, kind + "/" + string_at(*o, {"involvedObject", "name"}));
      json::write_text(w, string_at(*o, {"message"}));
    } else {
      json::write_text(w, string_at(*o, {"metadata", "name"}));
    }
    if (pods) {
      int ready = 0, total = 0, restarts = 0;
      if (const json::Value* statuses = at(*o, {"status", "containerStatuses"}); statuses && statuses->IsArray())
        for (const auto& c : statuses->GetArray()) {
          ready += at(c, {"ready"}) && c["ready"].IsTrue() ? 1 : 0;
          restarts += static_cast<int>(int_at(c, {"restartCount"}).value_or(0));
        }
      if (const json::Value* containers = at(*o, {"spec", "containers"}); containers && containers->IsArray())
        total = static_cast<int>(containers->Size());
      json::write_text(w, std::to_string(ready) + "/" + std::to_string(total));
      json::write_text(w, pod_status_column(*o));
      json::write_text(w, std::to_string(restarts));
    }
    if (!events) json::write_text(w, human_age(string_at(*o, {"metadata", "creationTimestamp"})));
    if (pods) {
      json::write_text(w, string_at(*o, {"status", "podIP"}, "<none>"));
      json::write_text(w, string_at(*o, {"spec", "nodeName"}, "<none>"));
    }
    w.EndArray();
    if (include_object == "Object") {
      w.Key("object");
      o->Accept(w);
    } else if (include_object != "None") {
      w.Key("object");
      w.StartObject();
      json::write_string(w, "kind", "PartialObjectMetadata");
      json::write_string(w, "apiVersion", "meta.k8s.io/v1");
      w.Key("metadata");
      (*o)["metadata"].Accept(w);
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return buffer.GetString();
}

}  // namespace corral::kubernetes::standin
