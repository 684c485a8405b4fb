#include "object.hpp"

#include <ctime>
#include <random>

#include "standin_state.hpp"

namespace corral::kubernetes::standin {
namespace {

std::mt19937_64& rng() {
  static thread_local std::mt19937_64 engine{std::random_device{}()};
  return engine;
}

}  // namespace

const json::Value* at(const json::Value& object, std::initializer_list<const char*> path) {
  const json::Value* v = &object;
  for (const char* key : path) {
    v = json::find(*v, key);
    if (!v) return nullptr;
  }
  return v;
}

std::string string_at(const json::Value& object, std::initializer_list<const char*> path, std::string fallback) {
  const json::Value* v = at(object, path);
  return v && v->IsString() ? std::string(v->GetString(), v->GetStringLength()) : fallback;
}

std::optional<std::int64_t> int_at(const json::Value& object, std::initializer_list<const char*> path) {
  const json::Value* v = at(object, path);
  if (v && v->IsInt64()) return v->GetInt64();
  return std::nullopt;
}

json::Value& object_member(json::Value& object, const char* key, Allocator& allocator) {
  auto it = object.FindMember(key);
  if (it == object.MemberEnd()) {
    object.AddMember(json::Value(key, allocator), json::Value(rapidjson::kObjectType), allocator);
    return object[key];
  }
  if (!it->value.IsObject()) it->value.SetObject();
  return it->value;
}

void set_member(json::Value& object, const char* key, json::Value value, Allocator& allocator) {
  auto it = object.FindMember(key);
  if (it != object.MemberEnd()) it->value = std::move(value);
  else object.AddMember(json::Value(key, allocator), std::move(value), allocator);
}

json::Value string_value(std::string_view text, Allocator& allocator) {
  return json::Value(text.data(), static_cast<rapidjson::SizeType>(text.size()), allocator);
}

void set_string(json::Value& object, const char* key, std::string_view text, Allocator& allocator) {
  set_member(object, key, string_value(text, allocator), allocator);
}

void remove_member(json::Value& object, const char* key) {
  if (object.IsObject()) object.RemoveMember(key);
}

json::Document copy_of(const json::Value& value) {
  json::Document doc;
  doc.CopyFrom(value, doc.GetAllocator());
  return doc;
}

Labels labels_at(const json::Value& object, std::initializer_list<const char*> path) {
  Labels out;
  const json::Value* map = at(object, path);
  if (map && map->IsObject())
    for (const auto& m : map->GetObject())
      if (m.value.IsString()) out[m.name.GetString()] = m.value.GetString();
  return out;
}

Labels labels_of(const json::Value& object) { return labels_at(object, {"metadata", "labels"}); }

std::string field_value(const json::Value& object, const std::string& field) {
  if (field == "source") return string_at(object, {"source", "component"});
  const json::Value* v = &object;
  for (size_t at = 0; at <= field.size();) {
    size_t dot = field.find('.', at);
    if (dot == std::string::npos) dot = field.size();
    v = json::find(*v, field.substr(at, dot - at).c_str());
    if (!v) return "";
    at = dot + 1;
  }
  if (v->IsString()) return std::string(v->GetString(), v->GetStringLength());
  if (v->IsBool()) return v->GetBool() ? "true" : "false";
  return "";
}

bool selected(const json::Value& object, const LabelSelector& labels, const FieldSelector& fields) {
  return labels.matches(labels_of(object)) &&
         fields.matches([&](const std::string& f) -> std::optional<std::string> { return field_value(object, f); });
}

std::string rfc3339(Clock::time_point t) { return test::utc_seconds(t) + "Z"; }

std::string rfc3339_micro(Clock::time_point t) {
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count() % 1000000;
  char fraction[16];
  std::snprintf(fraction, sizeof fraction, ".%06lldZ", static_cast<long long>(micros));
  return test::utc_seconds(t) + fraction;
}

std::string random_hex(size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) out += digits[rng()() % 16];
  return out;
}

std::string new_uid() {
  std::string h = random_hex(32);
  h[12] = '4';
  h[16] = "89ab"[rng()() % 4];
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" + h.substr(20);
}

std::string random_suffix(size_t n) {
  // k8s.io/apimachinery/pkg/util/rand: no vowels (no words) and no confusable characters.
  static const char* alphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::string out;
  for (size_t i = 0; i < n; ++i) out += alphabet[rng()() % 27];
  return out;
}

}  // namespace corral::kubernetes::standin
