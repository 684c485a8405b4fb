#include "answers.hpp"

namespace corral::kubernetes::standin {
namespace {

// Removes the dotted `field` ("status.containerStatuses.0.imageID") from `v`; a numeric
// step indexes an array, "*" every element.
void remove_field(json::Value& v, const std::string& field) {
  const size_t dot = field.find('.');
  const std::string head = field.substr(0, dot);
  if (dot == std::string::npos) {
    if (v.IsObject()) v.RemoveMember(head.c_str());
    return;
  }
  const std::string rest = field.substr(dot + 1);
  if (v.IsArray()) {
    if (head == "*") {
      for (auto& item : v.GetArray()) remove_field(item, rest);
    } else if (head.find_first_not_of("0123456789") == std::string::npos && std::stoul(head) < v.Size()) {
      remove_field(v[static_cast<rapidjson::SizeType>(std::stoul(head))], rest);
    }
    return;
  }
  if (v.IsObject() && v.HasMember(head.c_str())) remove_field(v[head.c_str()], rest);
}

// The member order Go's encoding/json gives API objects: kind, apiVersion, metadata, then
// the rest (spec, status, ...) as stored.
void go_order(json::Value& v, Allocator& a) {
  if (!v.IsObject()) return;
  json::Value ordered(rapidjson::kObjectType);
  for (const char* first : {"kind", "apiVersion", "metadata", "spec"})
    if (v.HasMember(first)) ordered.AddMember(json::Value(first, a), std::move(v[first]), a);
  for (auto& m : v.GetObject())
    if (!ordered.HasMember(m.name)) ordered.AddMember(std::move(m.name), std::move(m.value), a);
  v = std::move(ordered);
}

}  // namespace

std::string answer_text(State& state, const json::Value& value, const std::string& schema, const std::string& route) {
  json::Document copy = copy_of(value);
  if (!state.faults.corrupt_answer_field.empty()) {
    remove_field(copy, state.faults.corrupt_answer_field);
    if (copy.IsObject() && copy.HasMember("items") && copy["items"].IsArray())
      for (auto& item : copy["items"].GetArray()) remove_field(item, state.faults.corrupt_answer_field);
  }
  go_order(copy, copy.GetAllocator());
  if (copy.IsObject() && copy.HasMember("items") && copy["items"].IsArray())
    for (auto& item : copy["items"].GetArray()) go_order(item, copy.GetAllocator());
  for (const auto& issue : state.schemas.check(copy, schema))
    state.answer_violations.push_back(route + ": " + schema + ": " + issue.message);
  return json::dump(copy);
}

HttpResponse object_response(State& state, int status, const json::Value& object, const std::string& schema,
                             const std::string& route) {
  HttpResponse r;
  r.status = status;
  r.body = answer_text(state, object, schema, route);
  return r;
}

HttpResponse error_response(State& state, const ApiError& error, const std::string& route) {
  HttpResponse r;
  r.status = error.code;
  r.body = error.json();
  json::Document parsed;
  parsed.Parse(r.body.c_str());
  for (const auto& issue : state.schemas.check(parsed, "io.k8s.apimachinery.pkg.apis.meta.v1.Status"))
    state.answer_violations.push_back(route + ": Status: " + issue.message);
  if (error.retry_after_seconds) r.headers.emplace_back("Retry-After", std::to_string(error.retry_after_seconds));
  return r;
}

}  // namespace corral::kubernetes::standin
