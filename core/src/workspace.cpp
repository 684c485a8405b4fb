#include "workspace.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
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

// The git top level containing `cwd`, or empty when it is not in a checkout (or git is absent).
fs::path git_toplevel(const fs::path& cwd) {
  if (sdk::find_program("git").empty()) return {};
  sdk::ProcessSpec spec{{"git", "rev-parse", "--show-toplevel"}, std::nullopt, cwd.string()};
  sdk::CapturedProcess p = sdk::capture_process(spec, 30);
  if (p.exit_code != 0) return {};
  std::string out = p.out;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::vector<std::string> git_files(const fs::path& root) {
  sdk::ProcessSpec spec{{"git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"}, std::nullopt,
                        root.string()};
  sdk::CapturedProcess p = sdk::capture_process(spec, 120);
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

std::vector<std::string> walk_files(const fs::path& root, const IgnoreRules& rules) {
  std::vector<std::string> files;
  std::error_code ec;
  auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
  if (ec) throw Error(ErrorCode::internal, fmt::format("cannot read {}: {}", root.string(), ec.message()));
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) throw Error(ErrorCode::internal, fmt::format("cannot read {}: {}", root.string(), ec.message()));
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

Workspace scan_workspace(const fs::path& cwd) {
  Workspace ws;
  fs::path start = fs::weakly_canonical(cwd);
  fs::path top = git_toplevel(start);
  ws.git = !top.empty();
  ws.root = ws.git ? fs::weakly_canonical(top) : start;
  std::string sub = start.lexically_relative(ws.root).generic_string();
  ws.subdir = (sub == "." || sub.empty()) ? "" : sub;

  IgnoreRules rules;
  if (std::ifstream in(ws.root / ".corralignore"); in) {
    std::stringstream ss;
    ss << in.rdbuf();
    rules = IgnoreRules::parse(ss.str());
  }
  std::vector<std::string> names = ws.git ? git_files(ws.root) : walk_files(ws.root, rules);

  Sha256 fingerprint;
  for (const std::string& name : names) {
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

std::uint64_t write_archive(const Workspace& ws, const fs::path& archive_path) {
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
  for (const WorkspaceFile& f : ws.files) {
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
    int fd = ::open(full.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error(ErrorCode::internal, fmt::format("cannot read {}: {}", full.string(), std::strerror(errno)));
    struct stat st {};
    ::fstat(fd, &st);  // the size at open time; the file may have changed since the scan
    archive_entry_set_filetype(entry.get(), AE_IFREG);
    archive_entry_set_perm(entry.get(), f.executable ? 0755 : 0644);
    archive_entry_set_size(entry.get(), st.st_size);
    check(archive_write_header(a.get(), entry.get()), f.path.c_str());
    std::int64_t left = st.st_size;
    while (left > 0) {
      ssize_t n = ::read(fd, buffer.data(), std::min<std::int64_t>(left, static_cast<std::int64_t>(buffer.size())));
      if (n <= 0) break;
      if (archive_write_data(a.get(), buffer.data(), static_cast<size_t>(n)) < 0) {
        ::close(fd);
        check(ARCHIVE_FATAL, f.path.c_str());
      }
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
    ::close(fd);
  }
  check(archive_write_close(a.get()), "close");
  std::error_code ec;
  return fs::file_size(archive_path, ec);
}

std::uint64_t parse_size(const std::string& text) {
  auto bad = [&] {
    return Error(ErrorCode::invalid_argument, fmt::format("invalid size '{}'", text), "use bytes or 500k, 200M, 2G");
  };
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) throw bad();
  size_t used = 0;
  std::uint64_t n = std::stoull(text, &used);
  std::string unit = text.substr(used);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
  if (unit.empty()) return n;
  switch (std::tolower(static_cast<unsigned char>(unit[0]))) {
    case 'k': return unit.size() == 1 || unit == "Ki" ? n << 10 : throw bad();
    case 'm': return unit.size() == 1 || unit == "Mi" ? n << 20 : throw bad();
    case 'g': return unit.size() == 1 || unit == "Gi" ? n << 30 : throw bad();
  }
  throw bad();
}

std::string format_size(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < (1u << 20)) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  if (bytes < (1u << 30)) return fmt::format("{:.1f} MiB", bytes / 1048576.0);
  return fmt::format("{:.2f} GiB", bytes / 1073741824.0);
}

}  // namespace corral
