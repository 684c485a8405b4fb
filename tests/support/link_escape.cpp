#include "link_escape.hpp"

#include <deque>
#include <string>

namespace fs = std::filesystem;

namespace corral::test {

fs::path resolve_like_kernel(const fs::path& path) {
  std::deque<std::string> rest;
  for (const fs::path& part : path.relative_path()) rest.push_back(part.string());
  fs::path at = "/";
  int links = 0;
  while (!rest.empty()) {
    const std::string part = rest.front();
    rest.pop_front();
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      at = at.parent_path();
      continue;
    }
    const fs::path next = at / part;
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(next, ec))) {
      at = next;
      continue;
    }
    if (++links > 40) return {};
    const fs::path target = fs::read_symlink(next, ec);
    std::deque<std::string> parts;
    for (const fs::path& p : target.relative_path()) parts.push_back(p.string());
    rest.insert(rest.begin(), parts.begin(), parts.end());
    if (target.is_absolute()) at = "/";
  }
  return at;
}

fs::path link_leading_out(const fs::path& dir) {
  const std::string inside = fs::canonical(dir).string();
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    if (!it->is_symlink()) continue;
    const fs::path resolved = resolve_like_kernel(fs::absolute(it->path()));
    if (resolved.empty()) continue;  // a loop
    if ((resolved.string() + "/").rfind(inside + "/", 0) != 0) return it->path();
  }
  return {};
}

}  // namespace corral::test
