#include "workspace/ignore.hpp"

#include <fmt/format.h>

#include "corral/types.hpp"

namespace corral {
namespace {

// Drops trailing spaces that no '\' escapes, as git's trim_trailing_spaces does.
void trim_trailing_spaces(std::string& line) {
  std::size_t keep = 0;  // length up to the last byte that is not an unescaped space
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == ' ') continue;
    if (line[i] == '\\' && i + 1 < line.size()) ++i;
    keep = i + 1;
  }
  line.resize(keep);
}

}  // namespace

IgnoreRules IgnoreRules::parse(std::string_view text, std::string_view source,
                               const std::function<bool()>& cancelled) {
  IgnoreRules rules;
  std::size_t start = 0;
  for (int number = 1; start <= text.size(); ++number) {
    if (number % 1024 == 0 && cancelled && cancelled())
      throw Error(ErrorCode::cancelled, fmt::format("interrupted while reading {}", source));
    std::size_t end = text.find('\n', start);
    std::string line(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    start = end == std::string_view::npos ? text.size() + 1 : end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    trim_trailing_spaces(line);
    Rule rule;
    std::string_view pattern = line;
    if (!pattern.empty() && pattern[0] == '!') {
      rule.negate = true;
      pattern.remove_prefix(1);
    }
    if (!pattern.empty() && pattern.back() == '/') {
      rule.dir_only = true;
      pattern.remove_suffix(1);
    }
    if (pattern.empty()) continue;
    rule.basename = pattern.find('/') == std::string_view::npos;
    if (pattern[0] == '/') pattern.remove_prefix(1);
    try {
      rule.glob = Glob::compile(pattern);
    } catch (const Error& e) {
      throw Error(ErrorCode::invalid_argument, fmt::format("{}:{}: {}", source, number, e.what()), e.hint());
    }
    rules.rules_.push_back(std::move(rule));
  }
  return rules;
}

int IgnoreRules::verdict(std::string_view path, bool is_dir) const {
  const std::size_t slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  // The last matching rule decides.
  for (auto r = rules_.rbegin(); r != rules_.rend(); ++r) {
    if (r->dir_only && !is_dir) continue;
    if (r->glob.matches(r->basename ? name : path)) return r->negate ? -1 : 1;
  }
  return 0;
}

bool IgnoreRules::ignored(std::string_view path, bool is_dir) const {
  if (rules_.empty()) return false;
  // As in git, a file under an ignored folder stays ignored whatever later rules say.
  for (std::size_t slash = path.find('/'); slash != std::string_view::npos; slash = path.find('/', slash + 1))
    if (verdict(path.substr(0, slash), true) > 0) return true;
  return verdict(path, is_dir) > 0;
}

}  // namespace corral
