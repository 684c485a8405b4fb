#include "workspace.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "corral/sdk/process.hpp"
#include "corral/types.hpp"
#include "hash.hpp"
#include "ignore.hpp"

namespace fs = std::filesystem;

namespace corral {
namespace {

using CancelFn = std::function<bool()>;

// How often the long loops ask whether the user pressed Ctrl-C: often enough to stop
// within a blink, rarely enough that the check costs nothing.
constexpr std::size_t kPollFiles = 256;
constexpr std::size_t kPollBuffers = 16;  // 16 × 64 KiB = 1 MiB of file data

// Throws cancelled when `cancelled` says the user asked to stop; `doing` names the phase.
void stop_if_cancelled(const CancelFn& cancelled, std::string_view doing) {
  if (cancelled && cancelled()) throw Error(ErrorCode::cancelled, fmt::format("interrupted while {}", doing));
}

// Runs git to completion and captures its output; on cancel git is stopped (its process
// group gets SIGTERM) and this throws cancelled, so a huge `ls-files` cannot hold Ctrl-C.
sdk::CapturedProcess run_git(const sdk::ProcessSpec& spec, long timeout_seconds, const CancelFn& cancelled) {
  sdk::CapturedProcess captured;
  sdk::ProcessOutcome o = sdk::run_process(
      spec, [&](std::string_view d) { captured.out.append(d); },
      [&](std::string_view d) { captured.err.append(d); }, cancelled, timeout_seconds, 1);
  if (o.cancelled) throw Error(ErrorCode::cancelled, "interrupted while asking git for the workspace's files");
  captured.exit_code = o.exit_code;
  captured.timed_out = o.timed_out;
  return captured;
}

// The git top level containing `cwd`, or empty when it is not in a checkout (or git is absent).
fs::path git_toplevel(const fs::path& cwd, const CancelFn& cancelled = {}) {
  if (sdk::find_program("git").empty()) return {};
  sdk::ProcessSpec spec{{"git", "rev-parse", "--show-toplevel"}, std::nullopt, cwd.string()};
  spec.inherit = {"*"};  // git reads the user's own config, as when they run it
  sdk::CapturedProcess p = run_git(spec, 30, cancelled);
  if (p.exit_code != 0) return {};
  std::string out = p.out;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// The tracked and untracked, not git-ignored files of the checkout at `root`, sorted.
std::vector<std::string> git_files(const fs::path& root, const CancelFn& cancelled) {
  sdk::ProcessSpec spec{{"git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"}, std::nullopt,
                        root.string()};
  spec.inherit = {"*"};
  sdk::CapturedProcess p = run_git(spec, 120, cancelled);
  if (p.exit_code != 0)
    throw Error(ErrorCode::internal, fmt::format("git ls-files failed in {}: {}", root.string(), p.err));
  std::vector<std::string> files;
  std::string_view rest = p.out;
  while (!rest.empty()) {
    size_t nul = rest.find('\0');
    files.emplace_back(rest.substr(0, nul));
    if (nul == std::string_view::npos) break;
    rest.remove_prefix(nul + 1);
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

// Every file below `root` outside .git and ignored folders, sorted.
std::vector<std::string> walk_files(const fs::path& root, const IgnoreRules& rules, const CancelFn& cancelled) {
  std::vector<std::string> files;
  std::error_code ec;
  auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
  if (ec) throw Error(ErrorCode::internal, fmt::format("cannot read {}: {}", root.string(), ec.message()));
  for (std::size_t seen = 1; it != fs::recursive_directory_iterator(); it.increment(ec), ++seen) {
    if (ec) throw Error(ErrorCode::internal, fmt::format("cannot read {}: {}", root.string(), ec.message()));
    if (seen % kPollFiles == 0) stop_if_cancelled(cancelled, "scanning the workspace");
    std::string rel = it->path().lexically_relative(root).generic_string();
    bool dir = it->is_directory(ec) && !it->is_symlink(ec);
    if (dir) {
      if (it->path().filename() == ".git" || rules.ignored(rel, true)) it.disable_recursion_pending();
      continue;
    }
    files.push_back(rel);
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

fs::path find_workspace_root(const fs::path& cwd) {
  fs::path start = fs::weakly_canonical(cwd);
  fs::path top = git_toplevel(start);
  return top.empty() ? start : fs::weakly_canonical(top);
}

Workspace scan_workspace(const fs::path& cwd, const CancelFn& cancelled) {
  Workspace ws;
  fs::path start = fs::weakly_canonical(cwd);
  fs::path top = git_toplevel(start, cancelled);
  ws.git = !top.empty();
  ws.root = ws.git ? fs::weakly_canonical(top) : start;
  std::string sub = start.lexically_relative(ws.root).generic_string();
  ws.subdir = (sub == "." || sub.empty()) ? "" : sub;

  IgnoreRules rules;
  if (std::ifstream in(ws.root / ".corralignore"); in) {
    std::stringstream ss;
    ss << in.rdbuf();
    rules = IgnoreRules::parse(ss.str(), (ws.root / ".corralignore").string());
  }
  std::vector<std::string> names = ws.git ? git_files(ws.root, cancelled) : walk_files(ws.root, rules, cancelled);

  Sha256 fingerprint;
  std::size_t seen = 0;
  for (const std::string& name : names) {
    if (++seen % kPollFiles == 0) stop_if_cancelled(cancelled, "scanning the workspace");
    if (name.empty() || rules.ignored(name)) continue;
    if (name == ".git" || name.rfind(".git/", 0) == 0) continue;
    struct stat st {};
    if (::lstat((ws.root / name).c_str(), &st) != 0) continue;  // tracked but deleted
    WorkspaceFile f;
    f.path = name;
    f.symlink = S_ISLNK(st.st_mode);
    if (!f.symlink && !S_ISREG(st.st_mode)) continue;  // sockets, fifos, submodule folders
    f.executable = (st.st_mode & S_IXUSR) != 0;
    f.size = f.symlink ? 0 : static_cast<std::uint64_t>(st.st_size);
    f.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    fingerprint.update(fmt::format("{}\x1f{}{}\x1f{}\x1f{}\n", f.path, f.symlink ? 'l' : 'f', f.executable ? 'x' : '-',
                                   f.size, f.mtime_ns));
    ws.total_bytes += f.size;
    ws.files.push_back(std::move(f));
  }
  ws.fingerprint = fingerprint.hex();
  return ws;
}

void check_workspace_size(const Workspace& ws, std::uint64_t limit) {
  if (limit == 0 || ws.total_bytes <= limit) return;
  std::vector<const WorkspaceFile*> biggest;
  for (const auto& f : ws.files) biggest.push_back(&f);
  std::partial_sort(biggest.begin(), biggest.begin() + std::min<size_t>(3, biggest.size()), biggest.end(),
                    [](auto* a, auto* b) { return a->size > b->size; });
  std::string top;
  for (size_t i = 0; i < std::min<size_t>(3, biggest.size()); ++i)
    top += fmt::format("{}{} ({})", i ? ", " : "", biggest[i]->path, format_size(biggest[i]->size));
  throw Error(ErrorCode::invalid_argument,
              fmt::format("the workspace {} is {} in {} files, above the {} limit; largest: {}", ws.root.string(),
                          format_size(ws.total_bytes), ws.files.size(), format_size(limit), top),
              "exclude files with .corralignore, or raise the limit with --max-workspace SIZE (0 = no limit)");
}

namespace {

// write_archive without the clean-up of a cancelled archive.
std::uint64_t write_archive_file(const Workspace& ws, const fs::path& archive_path, const CancelFn& cancelled) {
  std::unique_ptr<archive, decltype(&archive_write_free)> a(archive_write_new(), archive_write_free);
  archive_write_set_format_pax_restricted(a.get());
  archive_write_add_filter_gzip(a.get());
  archive_write_set_filter_option(a.get(), "gzip", "compression-level", "1");
  auto check = [&](int rc, const char* what) {
    if (rc < ARCHIVE_WARN)
      throw Error(ErrorCode::internal, fmt::format("cannot write workspace archive {} ({}): {}", archive_path.string(),
                                                   what, archive_error_string(a.get())));
  };
  check(archive_write_open_filename(a.get(), archive_path.c_str()), "open");
  std::unique_ptr<archive_entry, decltype(&archive_entry_free)> entry(archive_entry_new(), archive_entry_free);
  std::vector<char> buffer(1 << 16);
  std::size_t files_done = 0, buffers_done = 0;
  for (const WorkspaceFile& f : ws.files) {
    if (++files_done % kPollFiles == 0) stop_if_cancelled(cancelled, "packing the workspace");
    archive_entry_clear(entry.get());
    archive_entry_set_pathname(entry.get(), f.path.c_str());
    archive_entry_set_mtime(entry.get(), f.mtime_ns / 1'000'000'000, f.mtime_ns % 1'000'000'000);
    const fs::path full = ws.root / f.path;
    if (f.symlink) {
      std::error_code ec;
      fs::path target = fs::read_symlink(full, ec);
      archive_entry_set_filetype(entry.get(), AE_IFLNK);
      archive_entry_set_perm(entry.get(), 0777);
      archive_entry_set_symlink(entry.get(), target.c_str());
      check(archive_write_header(a.get(), entry.get()), f.path.c_str());
      continue;
    }
    const int fd = ::open(full.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error(ErrorCode::internal, fmt::format("cannot read {}: {}", full.string(), std::strerror(errno)));
    // Closes fd on every way out, a cancel or a failed write included.
    std::unique_ptr<const int, void (*)(const int*)> closer(&fd, [](const int* d) { ::close(*d); });
    struct stat st {};
    ::fstat(fd, &st);  // the size at open time; the file may have changed since the scan
    archive_entry_set_filetype(entry.get(), AE_IFREG);
    archive_entry_set_perm(entry.get(), f.executable ? 0755 : 0644);
    archive_entry_set_size(entry.get(), st.st_size);
    check(archive_write_header(a.get(), entry.get()), f.path.c_str());
    std::int64_t left = st.st_size;
    while (left > 0) {
      if (++buffers_done % kPollBuffers == 0) stop_if_cancelled(cancelled, "packing the workspace");
      ssize_t n = ::read(fd, buffer.data(), std::min<std::int64_t>(left, static_cast<std::int64_t>(buffer.size())));
      if (n <= 0) break;
      if (archive_write_data(a.get(), buffer.data(), static_cast<size_t>(n)) < 0) check(ARCHIVE_FATAL, f.path.c_str());
      left -= n;
    }
    if (left > 0) {  // the file shrank while we read it: pad, the header promised its size
      std::fill(buffer.begin(), buffer.end(), 0);
      while (left > 0) {
        size_t n = static_cast<size_t>(std::min<std::int64_t>(left, static_cast<std::int64_t>(buffer.size())));
        archive_write_data(a.get(), buffer.data(), n);
        left -= static_cast<std::int64_t>(n);
      }
    }
  }
  check(archive_write_close(a.get()), "close");
  std::error_code ec;
  return fs::file_size(archive_path, ec);
}

}  // namespace

std::uint64_t write_archive(const Workspace& ws, const fs::path& archive_path, const CancelFn& cancelled) {
  try {
    return write_archive_file(ws, archive_path, cancelled);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::cancelled) throw;
    std::error_code ignored;
    fs::remove(archive_path, ignored);  // half an archive is of no use to anyone
    throw;
  }
}

std::uint64_t parse_size(const std::string& text) {
  auto bad = [&] {
    return Error(ErrorCode::invalid_argument, fmt::format("invalid size '{}'", text), "use bytes or 500k, 200M, 2G");
  };
  std::size_t used = 0;
  std::uint64_t n = 0;
  bool overflow = false;
  for (; used < text.size() && std::isdigit(static_cast<unsigned char>(text[used])); ++used) {
    const unsigned digit = static_cast<unsigned>(text[used] - '0');
    if (n > (UINT64_MAX - digit) / 10) overflow = true;  // keep scanning: the unit names the maximum
    n = n * 10 + digit;
  }
  if (used == 0) throw bad();
  std::string unit = text.substr(used);
  const std::string shown_unit = unit;
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
  unsigned shift = 0;
  if (!unit.empty()) {
    if (unit.size() != 1 && !(unit.size() == 2 && unit[1] == 'i')) throw bad();
    switch (std::tolower(static_cast<unsigned char>(unit[0]))) {
      case 'k': shift = 10; break;
      case 'm': shift = 20; break;
      case 'g': shift = 30; break;
      default: throw bad();
    }
    if (unit.size() == 2 && !std::isupper(static_cast<unsigned char>(unit[0]))) throw bad();  // "Ki", not "ki"
  }
  const std::uint64_t max = UINT64_MAX >> shift;
  if (overflow || n > max)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("size '{}' is too large: the maximum is {}{} (2^64-1 bytes)", text, max, shown_unit),
                "use 0 for no limit");
  return n << shift;
}

std::string format_size(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < (1u << 20)) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  if (bytes < (1u << 30)) return fmt::format("{:.1f} MiB", bytes / 1048576.0);
  return fmt::format("{:.2f} GiB", bytes / 1073741824.0);
}

}  // namespace corral
