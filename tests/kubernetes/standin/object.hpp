// Small helpers over an API object held as a RapidJSON document: reading and setting
// members along a path, its labels, and the time formats the API uses.
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "corral/json.hpp"
#include "selectors.hpp"

namespace corral::kubernetes::standin {

using Clock = std::chrono::system_clock;
using Allocator = json::Document::AllocatorType;

// The value at `path` (object members), or nullptr when any step is missing.
const json::Value* at(const json::Value& object, std::initializer_list<const char*> path);
// The string at `path`, or `fallback` when missing or not a string.
std::string string_at(const json::Value& object, std::initializer_list<const char*> path, std::string fallback = {});
// The integer at `path`, or nullopt when missing or not an integer.
std::optional<std::int64_t> int_at(const json::Value& object, std::initializer_list<const char*> path);
// The member `key` of `object`, made an empty object first when absent or not an object.
json::Value& object_member(json::Value& object, const char* key, Allocator& allocator);
// Sets (adds or replaces) the member `key` of `object`.
void set_member(json::Value& object, const char* key, json::Value value, Allocator& allocator);
void set_string(json::Value& object, const char* key, std::string_view text, Allocator& allocator);
json::Value string_value(std::string_view text, Allocator& allocator);
void remove_member(json::Value& object, const char* key);
// A deep copy of `value` as a document of its own.
json::Document copy_of(const json::Value& value);
// metadata.labels (or any string map) as a map.
Labels labels_at(const json::Value& object, std::initializer_list<const char*> path);
Labels labels_of(const json::Value& object);
// The value a field selector compares for `field` ("status.phase", "source"): the string
// (or boolean) at that dotted path, "" when absent.
std::string field_value(const json::Value& object, const std::string& field);
// Whether `object` matches both selectors.
bool selected(const json::Value& object, const LabelSelector& labels, const FieldSelector& fields);

// metav1.Time ("2006-01-02T15:04:05Z") and metav1.MicroTime ("...05.000000Z").
std::string rfc3339(Clock::time_point t);
std::string rfc3339_micro(Clock::time_point t);
// A random RFC 4122 version 4 UUID, as metadata.uid.
std::string new_uid();
// `n` random characters of the API server's generateName alphabet.
std::string random_suffix(size_t n);
// `n` random lower-case hex digits.
std::string random_hex(size_t n);

}  // namespace corral::kubernetes::standin
