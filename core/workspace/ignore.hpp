// .corralignore: gitignore-style patterns that keep files out of the workspace archive.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "workspace/glob.hpp"

namespace corral {

class IgnoreRules {
 public:
  // Parses gitignore syntax: '#' comments, '!' negation, trailing '/' for folders only,
  // a leading or inner '/' anchors to the root, '*', '?', '[...]', '**' and '\' escapes;
  // trailing spaces are dropped unless escaped. Throws corral::Error(invalid-argument)
  // "SOURCE:LINE: ..." for a malformed pattern (see Glob::compile), and cancelled as soon
  // as `cancelled` says so (a file of a million patterns takes a while).
  static IgnoreRules parse(std::string_view text, std::string_view source = ".corralignore",
                           const std::function<bool()>& cancelled = {});
  // True when `path` (relative, '/'-separated) or one of its parent folders is ignored.
  bool ignored(std::string_view path, bool is_dir = false) const;
  bool empty() const { return rules_.empty(); }

 private:
  struct Rule {
    Glob glob;
    bool negate = false;
    bool dir_only = false;
    bool basename = false;  // no '/' in the pattern: matched against the last segment only
  };
  // The verdict for exactly this path (not its parents): +1 ignored, -1 re-included, 0 none.
  int verdict(std::string_view path, bool is_dir) const;
  std::vector<Rule> rules_;
};

}  // namespace corral
