#include "corral/types.hpp"

#include <cctype>

namespace corral {

std::optional<std::string> workdir_problem(const std::string& path, bool relative_ok) {
  if (path.empty()) return "is empty";
  const bool absolute = path.front() == '/';
  if (!absolute && !relative_ok) return "is not an absolute path";
  std::vector<std::string> parts;
  for (size_t start = absolute ? 1 : 0; start <= path.size();) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    parts.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  for (const std::string& p : parts) {
    if (p.empty() || p == "." || p == "..") return "is not a normalised path (empty, '.' or '..' parts)";
    if (p.front() == '-') return "has a part that starts with '-'";
    for (char c : p)
      if (std::iscntrl(static_cast<unsigned char>(c))) return "contains control characters";
  }
  if (!absolute) return std::nullopt;  // below the home folder: never the home itself
  if (parts.size() == 1) return "is the root or a top-level system folder";
  if (parts.size() == 2 && (parts[0] == "home" || parts[0] == "root")) return "is a home folder";
  return std::nullopt;
}

std::string join_workspace_path(const std::string& workdir, const std::string& cwd) {
  if (!cwd.empty() && cwd.front() == '/')
    throw Error(ErrorCode::invalid_argument, "the working folder '" + cwd + "' must be relative to the workspace");
  std::string out = workdir;
  size_t start = 0;
  while (start <= cwd.size()) {
    size_t end = cwd.find('/', start);
    if (end == std::string::npos) end = cwd.size();
    std::string_view part(cwd.data() + start, end - start);
    if (part == "..")
      throw Error(ErrorCode::invalid_argument, "the working folder '" + cwd + "' leaves the workspace");
    if (!part.empty() && part != ".") {
      if (!out.empty() && out.back() != '/') out += '/';
      out += part;
    }
    start = end + 1;
  }
  return out;
}

}  // namespace corral
