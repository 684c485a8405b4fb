#include "args.hpp"

#include <fmt/format.h>

#include "base/printable.hpp"
#include "corral/errors.hpp"

namespace corral::mcp {
namespace {

Error bad(std::string message) { return Error(ErrorCode::invalid_argument, std::move(message)); }

}  // namespace

Args::Args(const json::Value* arguments, std::initializer_list<std::string_view> known) : arguments_(arguments) {
  if (!arguments_) return;
  if (!arguments_->IsObject()) throw bad("the arguments must be an object");
  for (const auto& member : arguments_->GetObject()) {
    const std::string_view name(member.name.GetString(), member.name.GetStringLength());
    bool ok = false;
    for (std::string_view k : known) ok = ok || k == name;
    if (!ok)
      throw bad(fmt::format("unknown argument '{}'; this tool takes: {}", printable(name.substr(0, 80)),
                            fmt::join(known, ", ")));
  }
}

const json::Value* Args::get(const char* name) const {
  return arguments_ ? json::find(*arguments_, name) : nullptr;
}

std::optional<std::string> Args::optional_string(const char* name) const {
  const json::Value* v = get(name);
  if (!v) return std::nullopt;
  if (!v->IsString()) throw bad(fmt::format("argument '{}' must be a string", name));
  return std::string(v->GetString(), v->GetStringLength());
}

std::string Args::string(const char* name) const {
  std::optional<std::string> s = optional_string(name);
  if (!s || s->empty()) throw bad(fmt::format("argument '{}' is required (a non-empty string)", name));
  return *s;
}

std::vector<std::string> Args::strings(const char* name, bool required) const {
  std::vector<std::string> out;
  const json::Value* v = get(name);
  if (v) {
    if (!v->IsArray()) throw bad(fmt::format("argument '{}' must be an array of strings", name));
    for (const json::Value& item : v->GetArray()) {
      if (!item.IsString()) throw bad(fmt::format("argument '{}' must be an array of strings", name));
      out.emplace_back(item.GetString(), item.GetStringLength());
    }
  }
  if (required && out.empty()) throw bad(fmt::format("argument '{}' is required (an array of at least one string)", name));
  return out;
}

std::int64_t Args::integer(const char* name, std::int64_t fallback, std::int64_t min, std::int64_t max) const {
  const json::Value* v = get(name);
  if (!v) return fallback;
  if (!v->IsInt64() || v->GetInt64() < min || v->GetInt64() > max)
    throw bad(fmt::format("argument '{}' must be an integer from {} to {}", name, min, max));
  return v->GetInt64();
}

bool Args::boolean(const char* name, bool fallback) const {
  const json::Value* v = get(name);
  if (!v) return fallback;
  if (!v->IsBool()) throw bad(fmt::format("argument '{}' must be true or false", name));
  return v->GetBool();
}

}  // namespace corral::mcp
