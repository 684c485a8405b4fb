#include "base/env_file.hpp"

#include <fmt/format.h>

#include "base/printable.hpp"
#include "corral/errors.hpp"

namespace corral {
namespace {

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// The value after '=' of line `number`; `rest` starts just after the '='.
std::string value_of(std::string_view rest, const std::string& where, std::size_t number) {
  rest = trim(rest);
  auto bad = [&](std::string_view why) {
    return Error(ErrorCode::invalid_argument, fmt::format("{}:{}: {}", where, number, why),
                 "write NAME=VALUE, NAME='VALUE' or NAME=\"VALUE\", one per line");
  };
  if (rest.empty()) return {};
  const char quote = rest.front();
  if (quote == '\'' || quote == '"') {
    std::string value;
    std::size_t i = 1;
    for (; i < rest.size() && rest[i] != quote; ++i) {
      if (quote == '"' && rest[i] == '\\' && i + 1 < rest.size()) {
        const char next = rest[++i];
        value += next == 'n' ? '\n' : next == 't' ? '\t' : next;
      } else {
        value += rest[i];
      }
    }
    if (i == rest.size()) throw bad(fmt::format("the value's {} quote is never closed", quote == '"' ? "double" : "single"));
    const std::string_view after = trim(rest.substr(i + 1));
    if (!after.empty() && after.front() != '#') throw bad("text after the quoted value");
    return value;
  }
  if (const auto comment = rest.find(" #"); comment != std::string_view::npos) rest = trim(rest.substr(0, comment));
  return std::string(rest);
}

}  // namespace

bool is_env_name(std::string_view name) {
  if (name.empty() || (name.front() >= '0' && name.front() <= '9')) return false;
  for (const char c : name)
    if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  return true;
}

std::vector<std::pair<std::string, std::string>> parse_env_file(std::string_view text, const std::string& where) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t number = 0;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // An environment cannot hold a NUL: the value would be cut there without a word.
    if (line.find('\0') != std::string_view::npos)
      throw Error(ErrorCode::invalid_argument, fmt::format("{}:{}: the line holds a NUL byte", where, number),
                  "an environment file is text; a variable's value cannot hold NUL");
    line = trim(line);
    if (line.empty() || line.front() == '#') continue;
    if (line.starts_with("export ")) line = trim(line.substr(7));
    const auto eq = line.find('=');
    const std::string_view name = trim(line.substr(0, eq));
    if (eq == std::string_view::npos || !is_env_name(name))
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{}:{}: '{}' is not NAME=VALUE", where, number, printable(line.substr(0, 80))),
                  "a name is letters, digits and _ (not first a digit); write NAME=VALUE, one per line");
    out.emplace_back(std::string(name), value_of(line.substr(eq + 1), where, number));
  }
  return out;
}

}  // namespace corral
