#include "admission.hpp"

#include "names.hpp"

namespace corral::kubernetes::standin {

std::vector<FieldError> validate_metadata(const json::Value& object) {
  using T = FieldError::Type;
  std::vector<FieldError> out;
  const std::string name = string_at(object, {"metadata", "name"});
  if (name.empty()) {
    out.push_back({T::required, "metadata.name", "", "name or generateName is required"});
  } else {
    for (const auto& e : dns1123_subdomain_errors(name)) out.push_back({T::invalid, "metadata.name", go_quote(name), e});
  }
  for (const auto& [key, value] : labels_at(object, {"metadata", "labels"})) {
    for (const auto& e : qualified_name_errors(key)) out.push_back({T::invalid, "metadata.labels", go_quote(key), e});
    for (const auto& e : label_value_errors(value)) out.push_back({T::invalid, "metadata.labels", go_quote(value), e});
  }
  for (const auto& [key, value] : labels_at(object, {"metadata", "annotations"}))
    for (const auto& e : qualified_name_errors(key)) out.push_back({T::invalid, "metadata.annotations", go_quote(key), e});
  return out;
}

void default_metadata(json::Document& object, const std::string& ns) {
  auto& a = object.GetAllocator();
  json::Value& meta = object_member(object, "metadata", a);
  const std::string generate = string_at(object, {"metadata", "generateName"});
  if (string_at(object, {"metadata", "name"}).empty() && !generate.empty())
    set_string(meta, "name", generate + random_suffix(5), a);
  if (!ns.empty()) set_string(meta, "namespace", ns, a);
  for (const char* server_only : {"uid", "resourceVersion", "creationTimestamp", "deletionTimestamp",
                                  "deletionGracePeriodSeconds", "selfLink", "managedFields"})
    remove_member(meta, server_only);
  set_string(meta, "uid", new_uid(), a);
  set_string(meta, "creationTimestamp", rfc3339(Clock::now()), a);
  if (json::find(meta, "generation") == nullptr && json::find(object, "spec") != nullptr)
    set_member(meta, "generation", json::Value(1), a);
}

void keep_immutable_metadata(json::Document& updated, const json::Value& old) {
  auto& a = updated.GetAllocator();
  json::Value& meta = object_member(updated, "metadata", a);
  const json::Value* old_meta = json::find(old, "metadata");
  for (const char* key : {"name", "namespace", "uid", "creationTimestamp", "deletionTimestamp",
                          "deletionGracePeriodSeconds", "generateName"}) {
    const json::Value* was = old_meta ? json::find(*old_meta, key) : nullptr;
    if (was) set_member(meta, key, json::Value(*was, a), a);
    else remove_member(meta, key);
  }
  if (const json::Value* status = json::find(old, "status")) set_member(updated, "status", json::Value(*status, a), a);
  else remove_member(updated, "status");
}

}  // namespace corral::kubernetes::standin
