// JSON helpers over RapidJSON, and the JSON forms of the provider model: the exact text
// that crosses the plugin ABI and that claims and `--json` output are made of.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "corral/types.hpp"

namespace corral::json {

using Document = rapidjson::Document;
using Value = rapidjson::Value;
// Not rapidjson::Writer<StringBuffer>: RapidJSON 1.1.0's SSE2 specialization for exactly
// that type leaves bytes 0x1A-0x1F unescaped in long strings (invalid JSON, and ESC is
// one of them). A different stack allocator selects the portable, correct writer.
using Writer = rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::UTF8<>,
                                 rapidjson::MemoryPoolAllocator<>>;

// How deeply arrays and objects may nest in what parse() accepts: far beyond any real
// answer, claim or spec, far below what would exhaust the stack.
inline constexpr int kMaxDepth = 128;
// Parses `text`; a syntax error, or nesting deeper than kMaxDepth, throws invalid-argument
// naming `what` and the offset. Safe on hostile input of any size.
Document parse(std::string_view text, std::string_view what);
// Compact text of `value`.
std::string dump(const Value& value);
// Compact text of what `body` writes (one value: an object, an array...).
std::string text_of(const std::function<void(Writer&)>& body);

// The member `key` of `object`; nullptr when it is absent or null, or when `object` is
// not an object at all (RapidJSON's own lookups require one).
const Value* find(const Value& object, const char* key);

// Typed member reads: the default when absent or null; a member of the wrong type throws
// invalid-argument naming `key`.
std::string get_string(const Value& object, const char* key, std::string fallback = {});
std::int64_t get_int(const Value& object, const char* key, std::int64_t fallback = 0);
bool get_bool(const Value& object, const char* key, bool fallback = false);
std::vector<std::string> get_strings(const Value& object, const char* key);
StringMap get_map(const Value& object, const char* key);

// True when `text` is valid UTF-8 (no overlong form, surrogate or code point past U+10FFFF).
bool is_valid_utf8(std::string_view text);

// Writes `key: value` pairs and small collections. Text that is not valid UTF-8 is
// written with U+FFFD in place of each bad byte, so the output is always valid JSON.
void write_string(Writer& w, const char* key, std::string_view value);
void write_text(Writer& w, std::string_view value);
void write_key(Writer& w, std::string_view key);
void write_strings(Writer& w, const char* key, const std::vector<std::string>& values);
void write_map(Writer& w, const char* key, const StringMap& values);

// The JSON forms of the model types.
std::string to_json(const ProviderSpec& spec);
// Parses and validates a spec; a missing or unknown field throws invalid-argument naming it.
ProviderSpec spec_from_json(std::string_view text);

// `include_secrets` is true only on the plugin boundary, never for storage or display.
void write_sandbox(Writer& w, const Sandbox& sandbox, bool include_secrets);
std::string to_json(const Sandbox& sandbox, bool include_secrets);
Sandbox sandbox_from(const Value& value);

void write_check(Writer& w, const DoctorCheck& check);

}  // namespace corral::json
