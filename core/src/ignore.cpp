#include "ignore.hpp"

namespace corral {
namespace {

// Translates one gitignore glob into an ECMAScript regex over '/'-separated paths.
std::string glob_to_regex(std::string_view glob, bool anchored) {
  std::string re = anchored ? "^" : "^(?:.*/)?";
  for (size_t i = 0; i < glob.size(); ++i) {
    char c = glob[i];
    if (c == '*') {
      if (i + 1 < glob.size() && glob[i + 1] == '*') {
        bool slash_after = i + 2 < glob.size() && glob[i + 2] == '/';
        if (slash_after) {
          re += "(?:.*/)?";  // "**/" matches zero or more folders
          i += 2;
        } else {
          re += ".*";
          i += 1;
        }
      } else {
        re += "[^/]*";
      }
    } else if (c == '?') {
      re += "[^/]";
    } else if (c == '[') {
      size_t end = glob.find(']', i + 1);
      if (end == std::string_view::npos) {
        re += "\\[";
      } else {
        std::string cls(glob.substr(i + 1, end - i - 1));
        if (!cls.empty() && cls[0] == '!') cls[0] = '^';
        re += "[" + cls + "]";
        i = end;
      }
    } else if (c == '\\' && i + 1 < glob.size()) {
      re += '\\';
      re += glob[++i];
    } else if (std::string_view(".^$+(){}|").find(c) != std::string_view::npos) {
      re += '\\';
      re += c;
    } else {
      re += c;
    }
  }
  return re + "$";
}

}  // namespace

IgnoreRules IgnoreRules::parse(std::string_view text) {
  IgnoreRules rules;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    std::string line(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    start = end == std::string_view::npos ? text.size() + 1 : end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    while (!line.empty() && line.back() == ' ' && (line.size() < 2 || line[line.size() - 2] != '\\')) line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    Rule rule;
    if (line[0] == '!') {
      rule.negate = true;
      line.erase(0, 1);
    } else if (line[0] == '\\') {
      line.erase(0, 1);
    }
    if (!line.empty() && line.back() == '/') {
      rule.dir_only = true;
      line.pop_back();
    }
    if (line.empty()) continue;
    bool anchored = line.find('/') != std::string::npos;
    if (line[0] == '/') line.erase(0, 1);
    rule.pattern = std::regex(glob_to_regex(line, anchored), std::regex::ECMAScript | std::regex::optimize);
    rules.rules_.push_back(std::move(rule));
  }
  return rules;
}

int IgnoreRules::verdict(const std::string& path, bool is_dir) const {
  int result = 0;
  for (const Rule& r : rules_) {
    if (r.dir_only && !is_dir) continue;
    if (std::regex_match(path, r.pattern)) result = r.negate ? -1 : 1;
  }
  return result;
}

bool IgnoreRules::ignored(std::string_view path, bool is_dir) const {
  if (rules_.empty()) return false;
  // As in git, a file under an ignored folder stays ignored whatever later rules say.
  for (size_t slash = path.find('/'); slash != std::string_view::npos; slash = path.find('/', slash + 1))
    if (verdict(std::string(path.substr(0, slash)), true) > 0) return true;
  return verdict(std::string(path), is_dir) > 0;
}

}  // namespace corral
