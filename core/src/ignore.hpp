// .corralignore: gitignore-style patterns that keep files out of the workspace archive.
#pragma once

#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace corral {

class IgnoreRules {
 public:
  // Parses gitignore syntax: '#' comments, '!' negation, trailing '/' for folders only,
  // a leading or inner '/' anchors to the root, '*', '?', '[...]' and '**'.
  static IgnoreRules parse(std::string_view text);
  // True when `path` (relative, '/'-separated) or one of its parent folders is ignored.
  bool ignored(std::string_view path, bool is_dir = false) const;
  bool empty() const { return rules_.empty(); }

 private:
  struct Rule {
    std::regex pattern;
    bool negate = false;
    bool dir_only = false;
  };
  // The verdict for exactly this path (not its parents): +1 ignored, -1 re-included, 0 none.
  int verdict(const std::string& path, bool is_dir) const;
  std::vector<Rule> rules_;
};

}  // namespace corral
