#include "workspace/downloads.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "base/sizes.hpp"
#include "corral/errors.hpp"
#include "corral/os/fd_write.hpp"
#include "workspace/download_tree.hpp"
#include "workspace/glob.hpp"
#include "corral/os/path_parts.hpp"
#include "workspace/workspace.hpp"

namespace fs = std::filesystem;

namespace corral {
namespace {

constexpr std::size_t kMaxPatterns = 64;
constexpr std::size_t kMaxEntries = 100000;
constexpr std::size_t kMaxName = 4096;  // PATH_MAX: the kernel takes no longer name or link

bool has_control_char(std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}

// `name` as a clean relative path, or why it cannot land in the folder.
std::string clean_name(std::string_view name, std::string& why) {
  if (name.empty()) return "";
  if (name.front() == '/') {
    why = "absolute path";
    return "";
  }
  if (has_control_char(name)) {
    why = "control character in the name";
    return "";
  }
  if (name.size() > kMaxName) {
    why = fmt::format("name longer than {} bytes", kMaxName);
    return "";
  }
  std::string out;
  for (std::string_view part : os::path_parts(name)) {
    if (part == "..") {
      why = "'..' in the path";
      return "";
    }
    if (!out.empty()) out += '/';
    out += part;
  }
  return out;
}

// True when the pattern part `part` can expand to ".." in a POSIX shell: its glob matches
// "..", and it does not start with '*' or '?', which never match a leading dot there (a
// class first may, as POSIX leaves it open). Throws for a glob git's rules cannot read.
bool can_match_dotdot(std::string_view pattern, std::string_view part) {
  if (part.front() == '*' || part.front() == '?') return false;
  try {
    return Glob::compile(part).matches("..");
  } catch (const Error& e) {
    throw Error(ErrorCode::invalid_argument, fmt::format("--download '{}': {}", pattern, e.what()),
                "to match '[' itself write '[[]'; a '\\' must escape something");
  }
}

// Why the link at `name` holding `target` is refused for its text alone, or "". Its ".."
// parts must all come first and climb no higher than the folder: after a name, a ".."
// follows whatever that name becomes, and a link made there later (by this archive or the
// next download into the folder) could turn it outward.
std::string why_not_link_text(const std::string& name, std::string_view target) {
  if (target.empty()) return "symbolic link to nothing";
  if (target.size() > kMaxName) return fmt::format("symbolic link longer than {} bytes", kMaxName);
  if (target.front() == '/') return "symbolic link pointing out of the folder (an absolute path)";
  const std::size_t depth = os::path_parts(name).size() - 1;  // folders above the link, in the folder
  std::size_t climbs = 0;
  bool named = false;
  for (std::string_view part : os::path_parts(target)) {
    if (part != "..") named = true;
    else if (named) return "symbolic link with '..' after a name, which a link made there could turn outward";
    else ++climbs;
  }
  return climbs > depth ? "symbolic link pointing out of the folder" : "";
}

using ReadPtr = std::unique_ptr<archive, decltype(&archive_read_free)>;

std::string why_of(archive* a) {
  const char* s = archive_error_string(a);
  return s ? s : "unknown error";
}

Error damaged(archive* in) {
  return Error(ErrorCode::unavailable, "the downloaded archive is damaged: " + why_of(in),
               "the sandbox may have run out of disk while packing; try again");
}

Error past_bound(std::uint64_t max_bytes) {
  return Error(ErrorCode::invalid_argument,
               fmt::format("the downloaded files pass the size bound of {} (--max-download); the rest was not unpacked",
                           format_size(max_bytes)),
               "download fewer files, or raise the bound with --max-download");
}

// Writes the data of the entry `in` is at into `fd`, each block at its offset (holes stay
// holes), then gives the file its size and time. `bytes` is what was written before;
// throws past `max_bytes`, for a damaged archive, or when the disk refuses (`shown`
// names the file).
std::uint64_t write_data(archive* in, archive_entry* entry, int fd, std::uint64_t bytes, std::uint64_t max_bytes,
                         const std::string& shown) {
  const void* block;
  size_t length;
  la_int64_t offset;
  std::uint64_t written = 0;
  off_t end = 0;
  auto refused = [&](int err) {
    return Error(os::write_error_code(err), os::with_reason(fmt::format("cannot write {}", shown), err));
  };
  int rc;
  while ((rc = archive_read_data_block(in, &block, &length, &offset)) == ARCHIVE_OK) {
    written += length;
    if (bytes + written > max_bytes || offset < 0 || static_cast<std::uint64_t>(offset) + length > max_bytes)
      throw past_bound(max_bytes);
    if (::lseek(fd, offset, SEEK_SET) < 0 ||
        !os::write_all(fd, std::string_view(static_cast<const char*>(block), length)))
      throw refused(errno);
    end = std::max(end, static_cast<off_t>(offset + static_cast<la_int64_t>(length)));
  }
  if (rc < ARCHIVE_WARN) throw damaged(in);
  const la_int64_t size = archive_entry_size_is_set(entry) ? archive_entry_size(entry) : 0;
  if (size > end && ::ftruncate(fd, size) != 0) throw refused(errno);  // a hole at the end
  if (archive_entry_mtime_is_set(entry)) {
    struct timespec times[2] = {{0, UTIME_OMIT}, {archive_entry_mtime(entry), archive_entry_mtime_nsec(entry)}};
    ::futimens(fd, times);
  }
  return written;
}

}  // namespace

void check_download_patterns(const std::vector<std::string>& patterns) {
  const char* hint = "give paths or globs relative to the command's folder, e.g. --download 'reports/*.xml'";
  if (patterns.size() > kMaxPatterns)
    throw Error(ErrorCode::invalid_argument, fmt::format("more than {} --download patterns", kMaxPatterns),
                "download a folder, or use a broader glob");
  for (const std::string& p : patterns) {
    if (p.empty()) throw Error(ErrorCode::invalid_argument, "--download '' names nothing", hint);
    if (p.size() > 4096) throw Error(ErrorCode::invalid_argument, "a --download pattern is longer than 4096 bytes", hint);
    if (p.front() == '/')
      throw Error(ErrorCode::invalid_argument, fmt::format("--download '{}' is absolute", p), hint);
    if (has_control_char(p))
      throw Error(ErrorCode::invalid_argument, "a --download pattern contains a control character", hint);
    for (std::string_view part : os::path_parts(p)) {
      if (part == "..")
        throw Error(ErrorCode::invalid_argument, fmt::format("--download '{}' climbs out with '..'", p), hint);
      if (can_match_dotdot(p, part))
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("--download '{}' can match '..' (the folder above) with its part '{}'", p, part),
                    "to match hidden files write '.[!.]*'; downloads come only from the command's folder");
    }
  }
}

UnpackedDownload unpack_download(const fs::path& archive_path, const DownloadFolder& folder, std::uint64_t max_bytes,
                                 const std::function<bool()>& cancelled) {
  const os::UniqueFd root = open_download_folder(folder);
  const fs::path base = folder.path();
  ReadPtr in(archive_read_new(), archive_read_free);
  archive_read_support_format_tar(in.get());
  archive_read_support_format_gnutar(in.get());
  archive_read_support_filter_gzip(in.get());
  if (archive_read_open_filename(in.get(), archive_path.c_str(), 1 << 16) != ARCHIVE_OK)
    throw Error(ErrorCode::internal, "cannot read the downloaded archive: " + why_of(in.get()));

  // Files and folders are written as they come; links wait for the end, when every link
  // of the archive is known and each can be followed through all the others. The tree
  // knows them from their place in the archive on, so nothing is written through them.
  DownloadTree tree(root.get());
  os::FolderWriter out(root.get());
  std::vector<DownloadTree::Id> links;
  UnpackedDownload result;
  auto refuse = [&](std::string_view name, const std::string& reason) {
    constexpr std::size_t kShown = 300;  // a refused name may be megabytes long
    result.refused.push_back(fmt::format("{}{}: {}", name.substr(0, kShown), name.size() > kShown ? "..." : "", reason));
  };
  // A write the disk refused: a full disk stops the download, anything else refuses the entry.
  auto failed = [&](const std::string& name, int err) {
    if (os::write_error_code(err) == ErrorCode::quota)
      throw Error(ErrorCode::quota, os::with_reason(fmt::format("cannot write {}", (base / name).string()), err));
    refuse(name, err == ELOOP || err == ENOTDIR ? "would be written through a link or a file" : std::strerror(err));
  };
  std::size_t entries = 0;
  archive_entry* entry = nullptr;
  for (;;) {
    if (cancelled && cancelled()) throw Error(ErrorCode::cancelled, "interrupted while unpacking the downloads");
    int rc = archive_read_next_header(in.get(), &entry);
    if (rc == ARCHIVE_EOF) break;
    if (rc < ARCHIVE_WARN) throw damaged(in.get());
    if (++entries > kMaxEntries)
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("the download holds more than {} entries; the rest was not unpacked", kMaxEntries),
                  "download fewer files, e.g. a narrower glob");
    std::string raw = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
    std::string why;
    std::string name = clean_name(raw, why);
    if (name.empty()) {
      if (!why.empty()) refuse(raw, why);
      continue;  // the folder itself ("./")
    }
    const mode_t type = archive_entry_filetype(entry);
    const mode_t perm = archive_entry_perm(entry) & 0777;  // never setuid: the umask decides the rest
    if (const char* hardlink = archive_entry_hardlink(entry)) {
      std::string target = clean_name(hardlink, why);
      std::string reason = target.empty() ? "hard link out of the folder" : tree.why_not(name, DownloadTree::Kind::file);
      if (reason.empty()) reason = tree.why_not_hard_link_to(target);
      if (!reason.empty()) {
        refuse(name, reason);
      } else if (int err = out.hard_link(name, target)) {
        failed(name, err);
      } else {
        tree.record(name, DownloadTree::Kind::file);
        result.files.push_back(name);
      }
      continue;
    }
    if (type == AE_IFLNK) {
      std::string target = archive_entry_symlink(entry) ? archive_entry_symlink(entry) : "";
      std::string reason = why_not_link_text(name, target);
      if (reason.empty()) reason = tree.why_not(name, DownloadTree::Kind::link);
      if (!reason.empty()) {
        refuse(name, reason);
        continue;
      }
      links.push_back(tree.record(name, DownloadTree::Kind::link, target));
      continue;
    }
    if (type != AE_IFREG && type != AE_IFDIR) {
      refuse(name, "not a file, folder or link");
      continue;
    }
    const auto kind = type == AE_IFDIR ? DownloadTree::Kind::folder : DownloadTree::Kind::file;
    if (std::string reason = tree.why_not(name, kind); !reason.empty()) {
      refuse(name, reason);
      continue;
    }
    if (type == AE_IFDIR) {
      if (int err = out.make_folder(name, (perm & 0775) | 0700)) failed(name, err);  // never open to all
      else tree.record(name, kind);
      continue;
    }
    std::uint64_t size = archive_entry_size_is_set(entry) && archive_entry_size(entry) > 0
                             ? static_cast<std::uint64_t>(archive_entry_size(entry))
                             : 0;
    if (result.bytes + size > max_bytes) throw past_bound(max_bytes);
    os::UniqueFd fd;
    if (int err = out.create_file(name, perm, fd)) {
      failed(name, err);
      continue;
    }
    tree.record(name, kind);
    try {
      result.bytes += write_data(in.get(), entry, fd.get(), result.bytes, max_bytes, (base / name).string());
    } catch (const Error&) {
      out.remove(name);  // never a file of the right size with a hole where the data should be
      throw;
    }
    if (::close(fd.release()) != 0) {
      const int err = errno;
      out.remove(name);
      throw Error(os::write_error_code(err),
                  os::with_reason(fmt::format("cannot write {}", (base / name).string()), err));
    }
    result.files.push_back(name);
  }
  for (DownloadTree::Id link : links) {
    if (cancelled && cancelled()) throw Error(ErrorCode::cancelled, "interrupted while unpacking the downloads");
    const std::string name = tree.path_of(link);
    if (std::string reason = tree.why_link_leaves(link); !reason.empty()) refuse(name, reason);
    else if (int err = out.symlink(name, tree.target_of(link))) failed(name, err);
    else result.files.push_back(name);
  }
  return result;
}

}  // namespace corral
