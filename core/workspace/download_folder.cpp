// Where downloads land, and opening it without following a link the working tree holds.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "corral/errors.hpp"
#include "workspace/downloads.hpp"

namespace fs = std::filesystem;

namespace corral {
namespace {

constexpr const char* kOtherFolder = "or choose another folder with --download-dir";

// The error for the folder `path` on the way to `folder`, which `parent` holds as `part`
// and could not be opened (errno `err`): a link or a file in the way says which to remove.
Error unusable(const DownloadFolder& folder, int parent, const std::string& part, const fs::path& path, int err) {
  struct stat st {};
  if (::fstatat(parent, part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
    std::string target(4096, '\0');
    ssize_t n = ::readlinkat(parent, part.c_str(), target.data(), target.size());
    target.resize(n < 0 ? 0 : static_cast<std::size_t>(n));
    return Error(ErrorCode::invalid_argument,
                 fmt::format("the download folder {} would be reached through the symbolic link {} (to {}); "
                             "downloads never follow a link inside the working tree, where a checkout could point "
                             "it anywhere",
                             folder.path().string(), path.string(), target),
                 fmt::format("remove the link (rm {}), {}", path.string(), kOtherFolder));
  }
  if (err == ENOTDIR || (err == EEXIST && !S_ISDIR(st.st_mode)))
    return Error(ErrorCode::invalid_argument,
                 fmt::format("{} is in the way of the download folder {}: it is not a folder", path.string(),
                             folder.path().string()),
                 fmt::format("remove or rename it, {}", kOtherFolder));
  return Error(ErrorCode::invalid_argument,
               fmt::format("cannot create the download folder {}: {}", path.string(), std::strerror(err)), kOtherFolder);
}

// `folder` opened: its top as named, each folder below it without following a link,
// created when missing if `create`. Without `create`, an invalid fd when something is
// missing. Throws invalid-argument for a link or a file on the way.
os::UniqueFd walk(const DownloadFolder& folder, bool create) {
  os::UniqueFd at(::open(folder.top.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (at.get() < 0 && errno == ENOENT && create) {
    std::error_code ec;
    fs::create_directories(folder.top, ec);
    at = os::UniqueFd(::open(folder.top.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  }
  if (at.get() < 0) {
    if (errno == ENOENT && !create) return at;
    throw Error(ErrorCode::invalid_argument,
                fmt::format("cannot use the download folder {}: {}", folder.top.string(), std::strerror(errno)),
                kOtherFolder);
  }
  fs::path walked = folder.top;
  for (const fs::path& step : folder.below) {
    const std::string part = step.string();
    if (part.empty() || part == ".") continue;
    walked /= step;
    os::UniqueFd next = os::open_folder_nofollow(at.get(), part, create);
    if (next.get() < 0) {
      const int err = errno;
      if (err == ENOENT && !create) return next;
      throw unusable(folder, at.get(), part, walked, err);
    }
    at = std::move(next);
  }
  return at;
}

}  // namespace

DownloadFolder download_folder(const fs::path& root, const fs::path& cwd, const fs::path& dir,
                               const std::string& lease_id) {
  if (dir.empty()) {
    fs::path below(kDownloadsFolder);
    if (!lease_id.empty()) below /= lease_id;
    return {root, below};
  }
  fs::path full = (cwd / dir).lexically_normal();
  if (!full.has_filename() && full.has_parent_path() && full != full.root_path()) full = full.parent_path();
  const fs::path inside = full.lexically_relative(root);
  if (inside.empty() || *inside.begin() == "..") return {full, {}};  // the user's own path
  return {root, inside == "." ? fs::path() : inside};
}

void check_download_folder(const DownloadFolder& folder) { walk(folder, false); }

os::UniqueFd open_download_folder(const DownloadFolder& folder) { return walk(folder, true); }

}  // namespace corral
