#include "downloads.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fmt/format.h>

#include <memory>

#include "corral/errors.hpp"
#include "corral/sdk/fd_write.hpp"
#include "glob.hpp"
#include "workspace.hpp"

namespace fs = std::filesystem;

namespace corral {
namespace {

constexpr std::size_t kMaxPatterns = 64;
constexpr std::size_t kMaxEntries = 100000;

bool has_control_char(std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}

// The '/'-separated parts of `path`, without empty and "." parts.
std::vector<std::string_view> parts_of(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (!part.empty() && part != ".") parts.push_back(part);
    start = end + 1;
  }
  return parts;
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
  std::string out;
  for (std::string_view part : parts_of(name)) {
    if (part == "..") {
      why = "'..' in the path";
      return "";
    }
    if (!out.empty()) out += '/';
    out += part;
  }
  return out;
}

// True when the link at relative path `name` pointing to `target` stays inside the folder.
bool link_stays_inside(const std::string& name, std::string_view target) {
  if (target.empty() || target.front() == '/') return false;
  std::vector<std::string_view> parts = parts_of(name);
  if (!parts.empty()) parts.pop_back();  // the link's own name: its target is relative to its folder
  for (std::string_view part : parts_of(target)) {
    if (part != "..") parts.push_back(part);
    else if (parts.empty()) return false;
    else parts.pop_back();
  }
  return true;
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

using ReadPtr = std::unique_ptr<archive, decltype(&archive_read_free)>;
using WritePtr = std::unique_ptr<archive, decltype(&archive_write_free)>;

std::string why_of(archive* a) {
  const char* s = archive_error_string(a);
  return s ? s : "unknown error";
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
    for (std::string_view part : parts_of(p)) {
      if (part == "..")
        throw Error(ErrorCode::invalid_argument, fmt::format("--download '{}' climbs out with '..'", p), hint);
      if (can_match_dotdot(p, part))
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("--download '{}' can match '..' (the folder above) with its part '{}'", p, part),
                    "to match hidden files write '.[!.]*'; downloads come only from the command's folder");
    }
  }
}

UnpackedDownload unpack_download(const fs::path& archive_path, const fs::path& dir, std::uint64_t max_bytes,
                                 const std::function<bool()>& cancelled) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw Error(ErrorCode::invalid_argument, fmt::format("cannot create the download folder {}: {}", dir.string(),
                                                         ec.message()),
                "choose another folder with --download-dir");
  // Entries get absolute names below the folder's real path: with no link on that path,
  // SECURE_SYMLINKS only ever objects to links inside the folder. Names are checked here.
  const fs::path base = fs::canonical(dir, ec);
  if (ec)
    throw Error(ErrorCode::invalid_argument, fmt::format("cannot use the download folder {}: {}", dir.string(),
                                                         ec.message()),
                "choose another folder with --download-dir");
  ReadPtr in(archive_read_new(), archive_read_free);
  archive_read_support_format_tar(in.get());
  archive_read_support_format_gnutar(in.get());
  archive_read_support_filter_gzip(in.get());
  WritePtr out(archive_write_disk_new(), archive_write_free);
  // No owners, no setuid bits, permissions through the umask: a sandbox decides none of
  // them on this machine. SECURE_SYMLINKS refuses to write through any link on disk.
  archive_write_disk_set_options(out.get(), ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                                                ARCHIVE_EXTRACT_SECURE_SYMLINKS);
  if (archive_read_open_filename(in.get(), archive_path.c_str(), 1 << 16) != ARCHIVE_OK)
    throw Error(ErrorCode::internal, "cannot read the downloaded archive: " + why_of(in.get()));

  UnpackedDownload result;
  std::size_t entries = 0;
  archive_entry* entry = nullptr;
  for (;;) {
    if (cancelled && cancelled()) throw Error(ErrorCode::cancelled, "interrupted while unpacking the downloads");
    int rc = archive_read_next_header(in.get(), &entry);
    if (rc == ARCHIVE_EOF) break;
    if (rc < ARCHIVE_WARN)
      throw Error(ErrorCode::unavailable, "the downloaded archive is damaged: " + why_of(in.get()),
                  "the sandbox may have run out of disk while packing; try again");
    if (++entries > kMaxEntries)
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("the download holds more than {} entries; the rest was not unpacked", kMaxEntries),
                  "download fewer files, e.g. a narrower glob");
    std::string raw = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
    std::string why;
    std::string name = clean_name(raw, why);
    auto refuse = [&](const std::string& reason) {
      result.refused.push_back(fmt::format("{}: {}", name.empty() ? raw : name, reason));
      archive_read_data_skip(in.get());
    };
    if (name.empty()) {
      if (!why.empty()) refuse(why);
      continue;  // the folder itself ("./")
    }
    mode_t type = archive_entry_filetype(entry);
    const char* hardlink = archive_entry_hardlink(entry);
    if (hardlink) {
      std::string link_why;
      std::string target = clean_name(hardlink, link_why);
      if (target.empty()) {
        refuse("hard link out of the folder");
        continue;
      }
      archive_entry_set_hardlink(entry, (base / target).c_str());
    } else if (type == AE_IFLNK) {
      const char* target = archive_entry_symlink(entry);
      if (!target || !link_stays_inside(name, target)) {
        refuse("symbolic link pointing out of the folder");
        continue;
      }
    } else if (type != AE_IFREG && type != AE_IFDIR) {
      refuse("not a file, folder or link");
      continue;
    }
    std::uint64_t size = archive_entry_size_is_set(entry) && archive_entry_size(entry) > 0
                             ? static_cast<std::uint64_t>(archive_entry_size(entry))
                             : 0;
    if (result.bytes + size > max_bytes)
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("the downloaded files pass the size bound of {} (--max-download); the rest was not "
                              "unpacked",
                              format_size(max_bytes)),
                  "download fewer files, or raise the bound with --max-download");
    archive_entry_set_pathname(entry, (base / name).c_str());
    archive_entry_set_perm(entry, archive_entry_perm(entry) & 0777);
    if (archive_write_header(out.get(), entry) < ARCHIVE_WARN) {
      refuse(why_of(out.get()));
      continue;
    }
    const void* block;
    size_t length;
    la_int64_t offset;
    std::uint64_t written = 0;
    while ((rc = archive_read_data_block(in.get(), &block, &length, &offset)) == ARCHIVE_OK) {
      written += length;
      if (result.bytes + written > max_bytes)
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("the downloaded files pass the size bound of {} (--max-download)", format_size(max_bytes)),
                    "download fewer files, or raise the bound with --max-download");
      // Not just < ARCHIVE_WARN: a failed write(2) (a full disk) is only a warning to libarchive,
      // which then leaves a file of the right size with a hole where the data should be.
      if (archive_write_data_block(out.get(), block, length, offset) != ARCHIVE_OK) {
        const int err = archive_errno(out.get());
        Error failed(sdk::write_error_code(err),
                     sdk::with_reason(fmt::format("cannot write {}: {}", (base / name).string(), why_of(out.get())), err));
        std::error_code ignored;
        fs::remove(base / name, ignored);  // freeing the archive would still give it its full size
        throw failed;
      }
    }
    if (rc < ARCHIVE_WARN)
      throw Error(ErrorCode::unavailable, "the downloaded archive is damaged: " + why_of(in.get()),
                  "the sandbox may have run out of disk while packing; try again");
    if (archive_write_finish_entry(out.get()) < ARCHIVE_WARN)
      throw Error(ErrorCode::internal, fmt::format("cannot write {}: {}", (base / name).string(), why_of(out.get())));
    result.bytes += written;
    if (type != AE_IFDIR) result.files.push_back(name);
  }
  if (archive_write_close(out.get()) < ARCHIVE_WARN)
    throw Error(ErrorCode::internal, "cannot finish unpacking the downloads: " + why_of(out.get()));
  return result;
}

}  // namespace corral
