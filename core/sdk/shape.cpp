#include "corral/shape.hpp"

namespace corral::shape {

Error wrong_type(const char* key, const char* expected) {
  return Error(ErrorCode::invalid_argument, std::string("field '") + key + "' must be " + expected);
}

namespace detail {
Error missing(std::string_view what, const char* key) {
  return Error(ErrorCode::invalid_argument, std::string(what) + " has no '" + key + "'");
}
}  // namespace detail

// Lenient as JSON numbers are: an unsigned or a fraction reads as the whole number it holds.
std::int64_t Codec<std::int64_t>::read(const json::Value& v, const char* key) {
  if (v.IsInt64()) return v.GetInt64();
  if (v.IsUint64()) return static_cast<std::int64_t>(v.GetUint64());
  if (v.IsDouble()) return static_cast<std::int64_t>(v.GetDouble());
  throw wrong_type(key, "a number");
}

std::uint64_t Codec<std::uint64_t>::read(const json::Value& v, const char* key) {
  if (v.IsUint64()) return v.GetUint64();
  if (v.IsInt64()) throw wrong_type(key, "a size, not negative");
  if (v.IsDouble() && v.GetDouble() >= 0 && v.GetDouble() < 18446744073709551616.0)
    return static_cast<std::uint64_t>(v.GetDouble());
  throw wrong_type(key, "a size, not negative");
}

void Codec<StringMap>::write(json::Writer& w, const StringMap& v) {
  w.StartObject();
  for (const auto& [k, value] : v) {
    json::write_key(w, k);
    json::write_text(w, value);
  }
  w.EndObject();
}

StringMap Codec<StringMap>::read(const json::Value& v, const char* key) {
  if (!v.IsObject()) throw wrong_type(key, "an object of strings");
  StringMap out;
  for (const auto& m : v.GetObject()) {
    if (!m.value.IsString()) throw wrong_type(key, "an object of strings");
    out.emplace(std::string(m.name.GetString(), m.name.GetStringLength()),
                std::string(m.value.GetString(), m.value.GetStringLength()));
  }
  return out;
}

void Codec<std::vector<std::string>>::write(json::Writer& w, const std::vector<std::string>& v) {
  w.StartArray();
  for (const std::string& s : v) json::write_text(w, s);
  w.EndArray();
}

std::vector<std::string> Codec<std::vector<std::string>>::read(const json::Value& v, const char* key) {
  if (!v.IsArray()) throw wrong_type(key, "a list of strings");
  std::vector<std::string> out;
  out.reserve(v.Size());
  for (const json::Value& item : v.GetArray()) {
    if (!item.IsString()) throw wrong_type(key, "a list of strings");
    out.emplace_back(item.GetString(), item.GetStringLength());
  }
  return out;
}

void Codec<Error>::write(json::Writer& w, const Error& e) {
  w.StartObject();
  json::write_string(w, "code", to_string(e.code()));
  json::write_string(w, "message", e.what());
  if (!e.hint().empty()) json::write_string(w, "hint", e.hint());
  w.EndObject();
}

Error Codec<Error>::read(const json::Value& v, const char* key) {
  if (!v.IsObject()) throw wrong_type(key, "an object");
  const std::string code = json::get_string(v, "code");
  ErrorCode parsed = ErrorCode::internal;
  for (int c = CORRAL_ERR_INTERNAL; c <= CORRAL_ERR_UNSUPPORTED; ++c)
    if (to_string(static_cast<ErrorCode>(c)) == code) parsed = static_cast<ErrorCode>(c);
  return Error(parsed, json::get_string(v, "message"), json::get_string(v, "hint"));
}

}  // namespace corral::shape
