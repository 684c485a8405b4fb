#include "workspace/workspace.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "base/sizes.hpp"
#include "corral/sdk/fd_write.hpp"
#include "corral/sdk/process.hpp"
#include "corral/sdk/read_file.hpp"
#include "corral/types.hpp"
#include "base/hash.hpp"
#include "workspace/ignore.hpp"

namespace fs = std::filesystem;

namespace corral {
namespace {

using CancelFn = std::function<bool()>;
using WarnFn = std::function<void(const std::string&)>;

// The scan asks whether the user pressed Ctrl-C at every file: with thousands of ignore
// patterns one file can take milliseconds.
// An ignore file is patterns, not data: a bound that no real one reaches (and /dev/zero does).
constexpr std::uint64_t kMaxIgnoreBytes = 8 << 20;

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

// What to tell the user of a folder the scan could not enter (`dir` relative to the root).
std::string skipped_folder(std::string_view dir) {
  return fmt::format("left out folder {}: corral cannot read it (permission denied); make it readable to send it, "
                     "or list it in .corralignore to leave it out quietly",
                     dir);
}

// The folders git said it could not open, from its warnings on stderr.
std::vector<std::string> unopened_folders(std::string_view git_stderr) {
  static constexpr std::string_view kWarning = "could not open directory '";
  std::vector<std::string> out;
  for (size_t at = git_stderr.find(kWarning); at != std::string_view::npos; at = git_stderr.find(kWarning, at)) {
    at += kWarning.size();
    size_t end = git_stderr.find("': ", at);
    if (end == std::string_view::npos) break;
    std::string dir(git_stderr.substr(at, end - at));
    while (!dir.empty() && dir.back() == '/') dir.pop_back();
    out.push_back(std::move(dir));
  }
  return out;
}

// The tracked and untracked, not git-ignored files of the checkout at `root`, sorted;
// folders git could not enter are passed to `warn`.
std::vector<std::string> git_files(const fs::path& root, const CancelFn& cancelled, const WarnFn& warn) {
  sdk::ProcessSpec spec{{"git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"}, std::nullopt,
                        root.string()};
  spec.inherit = {"*"};
  sdk::CapturedProcess p = run_git(spec, 120, cancelled);
  if (p.exit_code != 0)
    throw Error(ErrorCode::internal, fmt::format("git ls-files failed in {}: {}", root.string(), p.err));
  if (warn)
    for (const std::string& dir : unopened_folders(p.err)) warn(skipped_folder(dir));
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

// Every file below `root` outside .git and ignored folders, sorted; folders it cannot
// enter are passed to `warn`.
std::vector<std::string> walk_files(const fs::path& root, const IgnoreRules& rules, const CancelFn& cancelled,
                                    const WarnFn& warn) {
  std::vector<std::string> files;
  std::error_code ec;
  auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
  if (ec) throw Error(ErrorCode::internal, fmt::format("cannot read {}: {}", root.string(), ec.message()));
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) throw Error(ErrorCode::internal, fmt::format("cannot read {}: {}", root.string(), ec.message()));
    stop_if_cancelled(cancelled, "scanning the workspace");
    std::string rel = it->path().lexically_relative(root).generic_string();
    bool dir = it->is_directory(ec) && !it->is_symlink(ec);
    if (dir) {
      if (it->path().filename() == ".git" || rules.ignored(rel, true)) {
        it.disable_recursion_pending();
      } else if (::access(it->path().c_str(), R_OK | X_OK) != 0) {
        it.disable_recursion_pending();
        if (warn) warn(skipped_folder(rel));
      }
      continue;
    }
    files.push_back(rel);
  }
  std::sort(files.begin(), files.end());
  return files;
}

// git's answer in find_workspace_root, kept for the scan_workspace of the same folder
// that follows it in one corral command (the settings need the root first, the run then
// scans it), so a run asks git once. Taken by the first scan, whatever its folder: any
// other scan asks git itself.
struct ToplevelMemo {
  std::mutex mutex;
  std::optional<std::pair<fs::path, fs::path>> start_and_top;
};
ToplevelMemo& toplevel_memo() {
  static ToplevelMemo memo;
  return memo;
}

}  // namespace

fs::path find_workspace_root(const fs::path& cwd) {
  fs::path start = fs::weakly_canonical(cwd);
  fs::path top = git_toplevel(start);
  {
    ToplevelMemo& memo = toplevel_memo();
    std::lock_guard lock(memo.mutex);
    memo.start_and_top.emplace(start, top);
  }
  return top.empty() ? start : fs::weakly_canonical(top);
}

Workspace scan_workspace(const fs::path& cwd, const CancelFn& cancelled, const WarnFn& warn) {
  Workspace ws;
  fs::path start = fs::weakly_canonical(cwd);
  std::optional<fs::path> known;
  {
    ToplevelMemo& memo = toplevel_memo();
    std::lock_guard lock(memo.mutex);
    if (memo.start_and_top && memo.start_and_top->first == start) known = memo.start_and_top->second;
    memo.start_and_top.reset();
  }
  fs::path top = known ? *known : git_toplevel(start, cancelled);
  ws.git = !top.empty();
  ws.root = ws.git ? fs::weakly_canonical(top) : start;
  std::string sub = start.lexically_relative(ws.root).generic_string();
  ws.subdir = (sub == "." || sub.empty()) ? "" : sub;

  IgnoreRules rules;
  const fs::path ignore_file = ws.root / ".corralignore";
  if (auto text = sdk::read_regular_file(ignore_file, kMaxIgnoreBytes, "the ignore file"))
    rules = IgnoreRules::parse(*text, ignore_file.string(), cancelled);
  std::vector<std::string> names =
      ws.git ? git_files(ws.root, cancelled, warn) : walk_files(ws.root, rules, cancelled, warn);

  Sha256 fingerprint;
  for (const std::string& name : names) {
    stop_if_cancelled(cancelled, "scanning the workspace");
    if (name.empty() || rules.ignored(name)) continue;
    if (name == ".git" || name.rfind(".git/", 0) == 0) continue;
    if (name.size() > kDownloadsFolder.size() && name.compare(0, kDownloadsFolder.size(), kDownloadsFolder) == 0 &&
        name[kDownloadsFolder.size()] == '/')
      continue;  // results brought back by --download
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

}  // namespace corral
