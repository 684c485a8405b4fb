#include "events.hpp"

#include <cstdio>

namespace corral::kubernetes::standin {

EventSource kubelet_source(const std::string& node) { return {"kubelet", node, false, ""}; }

EventSource scheduler_source() { return {"default-scheduler", "", true, "Scheduling"}; }

void record_event(State& state, const json::Value& object, const EventSource& source, const std::string& type,
                  const std::string& reason, const std::string& message, const std::string& field_path) {
  json::Document event(rapidjson::kObjectType);
  auto& a = event.GetAllocator();
  const auto now = Clock::now();
  const std::string name = string_at(object, {"metadata", "name"});
  const std::string ns = string_at(object, {"metadata", "namespace"});
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, "%016llx",
                static_cast<unsigned long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count()));
  set_string(event, "kind", "Event", a);
  set_string(event, "apiVersion", "v1", a);
  json::Value& meta = object_member(event, "metadata", a);
  set_string(meta, "name", name + "." + suffix + random_hex(4), a);
  set_string(meta, "namespace", ns, a);
  set_string(meta, "uid", new_uid(), a);
  set_string(meta, "creationTimestamp", rfc3339(now), a);
  json::Value& involved = object_member(event, "involvedObject", a);
  set_string(involved, "kind", string_at(object, {"kind"}), a);
  set_string(involved, "namespace", ns, a);
  set_string(involved, "name", name, a);
  set_string(involved, "uid", string_at(object, {"metadata", "uid"}), a);
  set_string(involved, "apiVersion", string_at(object, {"apiVersion"}), a);
  set_string(involved, "resourceVersion", string_at(object, {"metadata", "resourceVersion"}), a);
  if (!field_path.empty()) set_string(involved, "fieldPath", field_path, a);
  set_string(event, "reason", reason, a);
  set_string(event, "message", message, a);
  json::Value& src = object_member(event, "source", a);
  if (!source.new_api) {
    set_string(src, "component", source.component, a);
    if (!source.host.empty()) set_string(src, "host", source.host, a);
    set_string(event, "firstTimestamp", rfc3339(now), a);
    set_string(event, "lastTimestamp", rfc3339(now), a);
    set_member(event, "count", json::Value(1), a);
  } else {
    set_member(event, "firstTimestamp", json::Value(), a);
    set_member(event, "lastTimestamp", json::Value(), a);
    set_string(event, "eventTime", rfc3339_micro(now), a);
    set_string(event, "action", source.action, a);
  }
  set_string(event, "type", type, a);
  set_string(event, "reportingComponent", source.component, a);
  set_string(event, "reportingInstance", source.host.empty() ? source.component + "-standin" : source.host, a);
  state.store.put(event_type(), std::move(event));
}

}  // namespace corral::kubernetes::standin
