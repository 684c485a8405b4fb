// A tool call's arguments, read by name and type. Anything the tool's inputSchema would
// refuse (a wrong type, a missing required argument, an argument the tool does not take)
// throws invalid-argument naming it: a tool error the model can read and correct.
//
// Threads: an Args belongs to its call's thread.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "corral/json.hpp"

namespace corral::mcp {

class Args {
 public:
  // `arguments` (null when the call gave none) must be an object holding only `known` names.
  Args(const json::Value* arguments, std::initializer_list<std::string_view> known);

  std::optional<std::string> optional_string(const char* name) const;
  std::string string(const char* name) const;  // required
  // A list of strings; `required` ones must have at least one element.
  std::vector<std::string> strings(const char* name, bool required = false) const;
  std::int64_t integer(const char* name, std::int64_t fallback, std::int64_t min, std::int64_t max) const;
  bool boolean(const char* name, bool fallback) const;

 private:
  const json::Value* get(const char* name) const;
  const json::Value* arguments_;
};

}  // namespace corral::mcp
