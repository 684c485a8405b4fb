#include "workspace/workspace.hpp"

#include "base/printable.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <system_error>

#include "base/sizes.hpp"
#include "corral/os/parallel_thread.hpp"
#include "corral/os/read_file.hpp"
#include "corral/types.hpp"
#include "base/hash.hpp"
#include "workspace/git_checkout.hpp"
#include "workspace/ignore.hpp"

namespace fs = std::filesystem;

namespace corral {

// A listing of the checkout holding `start` (top level `top`) made on a thread of its own.
struct PrefetchedListing {
  fs::path start;
  fs::path top;
  std::atomic<bool> stop{false};
  std::future<GitListing> listing;
  os::ParallelThread thread;  // git runs beside the main thread, which loads the provider
  ~PrefetchedListing() {
    stop = true;  // not taken: git is stopped, its thread ends within 100 ms
    if (thread.joinable()) thread.join();
  }
};

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

// What to tell the user of a folder the scan could not enter (`dir` relative to the root).
std::string skipped_folder(std::string_view dir) {
  return fmt::format("left out folder {}: corral cannot read it (permission denied); make it readable to send it, "
                     "or list it in .corralignore to leave it out quietly",
                     printable(dir));
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

// Every file of the checkout's own .git folder (--git), as paths from the root, sorted;
// invalid-argument where there is none to send.
std::vector<std::string> git_folder_files(const Workspace& ws, const CancelFn& cancelled, const WarnFn& warn) {
  const fs::path dot_git = ws.root / ".git";
  struct stat st {};
  if (!ws.git || ::lstat(dot_git.c_str(), &st) != 0)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("--git: {} is no git checkout, so there is no .git to send", printable(ws.root.string())),
                "drop --git, or run corral in a git checkout");
  if (!S_ISDIR(st.st_mode))
    throw Error(ErrorCode::invalid_argument,
                fmt::format("--git: {} is a file pointing at the repository elsewhere (a worktree's or a submodule's); "
                            "corral sends a checkout's own .git folder only",
                            printable(dot_git.string())),
                "drop --git, or run corral in the main checkout");
  std::vector<std::string> files = walk_files(dot_git, IgnoreRules{}, cancelled, warn);
  for (std::string& f : files) f = ".git/" + f;
  if (auto config = os::read_regular_file(dot_git / "config", kMaxIgnoreBytes, "git config", os::Links::refuse);
      config && std::regex_search(*config, std::regex(R"(://[^/\s@]+:[^/\s@]*@)")) && warn)
    warn(fmt::format("--git sends {}, whose remote URLs hold credentials: the sandbox can read them",
                     printable((dot_git / "config").string())));
  return files;
}

// What one corral command learned before its scan, for the scan of the same folder: the
// top level find_workspace_root found (the settings need the root first, the run then
// scans it) and a listing started early (WorkspacePrefetch). Taken by the first scan,
// whatever its folder: any other scan asks again.
struct ScanHints {
  std::mutex mutex;
  std::optional<std::pair<fs::path, fs::path>> start_and_top;
  std::shared_ptr<PrefetchedListing> prefetched;
};
ScanHints& scan_hints() {
  static ScanHints hints;
  return hints;
}

// The listing `p` is making, once git is done; stops git and throws cancelled when
// `cancelled` says so meanwhile.
GitListing take_listing(PrefetchedListing& p, const CancelFn& cancelled) {
  while (p.listing.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready)
    if (cancelled && cancelled()) p.stop = true;  // git is stopped within 100 ms; get() then throws
  return p.listing.get();
}

// The top level of the checkout holding `start` (canonical), empty when none: as found
// before for the same folder in this process (the prefetch, the settings), else asked
// now and remembered.
fs::path known_toplevel(const fs::path& start) {
  ScanHints& hints = scan_hints();
  {
    std::lock_guard lock(hints.mutex);
    if (hints.start_and_top && hints.start_and_top->first == start) return hints.start_and_top->second;
  }
  fs::path top = git_toplevel(start);
  std::lock_guard lock(hints.mutex);
  hints.start_and_top.emplace(start, top);
  return top;
}

}  // namespace

fs::path find_workspace_root(const fs::path& cwd) {
  fs::path start = fs::weakly_canonical(cwd);
  fs::path top = known_toplevel(start);
  return top.empty() ? start : fs::weakly_canonical(top);
}

WorkspacePrefetch::WorkspacePrefetch(const fs::path& cwd) {
  auto p = std::make_shared<PrefetchedListing>();
  p->start = fs::weakly_canonical(cwd);
  ScanHints& hints = scan_hints();
  fs::path top = known_toplevel(p->start);
  if (top.empty()) return;  // no checkout: the scan walks the folder itself
  p->top = fs::weakly_canonical(top);
  // std::function needs a copyable callable: the task is shared with the thread.
  auto task = std::make_shared<std::packaged_task<GitListing()>>(
      [p = p.get()] { return list_git_files(p->top, [p] { return p->stop.load(); }); });
  p->listing = task->get_future();
  try {
    p->thread = os::ParallelThread([task] { (*task)(); });
  } catch (const std::system_error&) {
    return;  // no thread to be had (a process or memory limit): the scan lists in line
  }
  std::lock_guard lock(hints.mutex);
  hints.prefetched = p;
  state_ = std::move(p);
}

WorkspacePrefetch::~WorkspacePrefetch() {
  if (!state_) return;
  ScanHints& hints = scan_hints();
  std::lock_guard lock(hints.mutex);
  if (hints.prefetched == state_) hints.prefetched.reset();
}

Workspace scan_workspace(const fs::path& cwd, const CancelFn& cancelled, const WarnFn& warn, bool with_git) {
  Workspace ws;
  fs::path start = fs::weakly_canonical(cwd);
  std::optional<fs::path> known;
  std::shared_ptr<PrefetchedListing> prefetched;
  {
    ScanHints& hints = scan_hints();
    std::lock_guard lock(hints.mutex);
    if (hints.start_and_top && hints.start_and_top->first == start) known = hints.start_and_top->second;
    hints.start_and_top.reset();
    if (hints.prefetched && hints.prefetched->start == start) prefetched = hints.prefetched;
    hints.prefetched.reset();
  }
  fs::path top = prefetched ? prefetched->top : known ? *known : git_toplevel(start, cancelled);
  ws.git = !top.empty();
  ws.root = ws.git ? fs::weakly_canonical(top) : start;
  std::string sub = start.lexically_relative(ws.root).generic_string();
  ws.subdir = (sub == "." || sub.empty()) ? "" : sub;

  IgnoreRules rules;
  const fs::path ignore_file = ws.root / ".corralignore";
  if (auto text = os::read_regular_file(ignore_file, kMaxIgnoreBytes, "the ignore file"))
    rules = IgnoreRules::parse(*text, ignore_file.string(), cancelled);
  std::vector<std::string> names;
  if (ws.git) {
    GitListing listing = prefetched ? take_listing(*prefetched, cancelled) : list_git_files(ws.root, cancelled);
    if (warn)
      for (const std::string& dir : listing.unopened) warn(skipped_folder(dir));
    names = std::move(listing.files);
  } else {
    names = walk_files(ws.root, rules, cancelled, warn);
  }
  std::vector<std::string> git_names;
  if (with_git) git_names = git_folder_files(ws, cancelled, warn);

  Sha256 fingerprint;
  if (!git_names.empty()) {
    names.insert(names.end(), git_names.begin(), git_names.end());
    std::sort(names.begin(), names.end());
  }
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    stop_if_cancelled(cancelled, "scanning the workspace");
    if (name.empty()) continue;
    const bool git_file = name == ".git" || name.rfind(".git/", 0) == 0;
    // The .git folder comes whole (--git), whatever .corralignore says; from a listing, never.
    if (git_file ? !std::binary_search(git_names.begin(), git_names.end(), name) : rules.ignored(name)) continue;
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

std::uint64_t workspace_bytes_bound(const Workspace& workspace, std::uint64_t limit) {
  if (limit == 0) return 0;
  return limit + 4096 * static_cast<std::uint64_t>(workspace.files.size());
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
