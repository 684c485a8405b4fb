#include "corral/sdk/sync.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "corral/errors.hpp"
#include "corral/os/folder_writer.hpp"

namespace corral::sdk {
namespace {

// The '/'-separated parts of `path`; throws for an absolute path or a ".." part.
std::vector<std::string> parts_of(const std::string& path) {
  if (path.empty() || path[0] == '/')
    throw Error(ErrorCode::invalid_argument, "cannot remove '" + path + "': not a relative workspace path");
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    std::string part = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part == "..") throw Error(ErrorCode::invalid_argument, "cannot remove '" + path + "': it leaves the workspace");
    if (!part.empty() && part != ".") parts.push_back(std::move(part));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return parts;
}

}  // namespace

const char* const kRemovePathsScript =
    "cd -- \"$CORRAL_DIR\" || exit 1\n"
    "for p do\n"
    "  rm -f -- \"$p\"\n"
    "  d=$(dirname -- \"$p\")\n"
    "  [ \"$d\" = . ] || rmdir -p -- \"$d\" 2>/dev/null\n"
    "done\n"
    "exit 0\n";

void remove_paths_under(const std::filesystem::path& root, const std::vector<std::string>& removed) {
  for (const std::string& path : removed) {
    std::vector<std::string> parts = parts_of(path);
    if (parts.empty()) continue;
    // Walk down with O_NOFOLLOW: each folder is opened relative to the previous one.
    std::vector<int> chain;
    os::UniqueFd top(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (top.get() < 0) throw Error(ErrorCode::not_found, "workspace folder " + root.string() + " is missing");
    int dir = top.get();
    bool reachable = true;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      int next = ::openat(dir, parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (next < 0) {
        reachable = false;  // gone already, or a symlink the sandbox put there
        break;
      }
      chain.push_back(next);
      dir = next;
    }
    if (reachable && ::unlinkat(dir, parts.back().c_str(), 0) != 0 && errno != ENOENT && errno != EISDIR &&
        errno != ENOTDIR) {
      int err = errno;
      for (int fd : chain) ::close(fd);
      throw Error(ErrorCode::internal, "cannot remove " + path + " from the sandbox: " + std::strerror(err));
    }
    // Folders the removal left empty go too, innermost first; a non-empty one stops it.
    for (size_t i = chain.size(); i-- > 0;) {
      int parent = i == 0 ? top.get() : chain[i - 1];
      ::close(chain[i]);
      chain.pop_back();
      if (::unlinkat(parent, parts[i].c_str(), AT_REMOVEDIR) != 0) break;
    }
    for (int fd : chain) ::close(fd);
  }
}

std::vector<std::vector<std::string>> removal_batches(const std::vector<std::string>& removed, size_t max_bytes) {
  std::vector<std::vector<std::string>> batches;
  size_t bytes = 0;
  for (const std::string& path : removed) {
    if (batches.empty() || bytes + path.size() + 1 > max_bytes) {
      batches.emplace_back();
      bytes = 0;
    }
    batches.back().push_back(path);
    bytes += path.size() + 1;
  }
  return batches;
}

}  // namespace corral::sdk
