#include "workspace/git_checkout.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <string_view>

#include "corral/errors.hpp"
#include "corral/os/process.hpp"
#include "corral/os/read_file.hpp"

namespace fs = std::filesystem;

namespace corral {
namespace {

using CancelFn = std::function<bool()>;

// Variables that move git's repository or work tree, or that carry `-c` settings (which
// may set core.worktree): with any of them set, only git knows where the top level is.
constexpr const char* kMovingVariables[] = {
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
};

// A repository's config is a few hundred bytes; past this, git is asked rather than read.
constexpr std::uint64_t kMaxConfigBytes = 64 << 10;

// True when the lstat of `path` succeeds and says `type` (S_IFDIR, S_IFREG).
bool is_a(const fs::path& path, mode_t type) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == type;
}

// True when `git_dir` holds what git requires of a repository (HEAD, objects/, refs/);
// git passes over a `.git` that lacks them, and that search is left to git.
bool looks_like_repository(const fs::path& git_dir) {
  return is_a(git_dir / "HEAD", S_IFREG) && is_a(git_dir / "objects", S_IFDIR) && is_a(git_dir / "refs", S_IFDIR);
}

// True when the repository config `text` certainly leaves the work tree at the folder
// holding `.git`: no core.worktree, no include, no extension (worktreeConfig may move it,
// a newer git's may make this git refuse the repository) and no bare = anything but false.
// Read as words, not parsed: a false alarm costs one git process, a miss a wrong root.
bool config_is_plain(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  for (std::string_view word : {"worktree", "include", "extensions"})
    if (text.find(word) != std::string::npos) return false;
  for (size_t at = text.find("bare"); at != std::string::npos; at = text.find("bare", at + 4)) {
    size_t i = at + 4;
    auto skip_blanks = [&] {
      while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    };
    skip_blanks();
    if (i >= text.size() || text[i] != '=') return false;
    ++i;
    skip_blanks();
    if (text.compare(i, 5, "false") != 0) return false;
  }
  return true;
}

// Runs git to completion and captures its output; on cancel git is stopped (its process
// group gets SIGTERM) and this throws cancelled, so a huge `ls-files` cannot hold Ctrl-C.
os::CapturedProcess run_git(const os::ProcessSpec& spec, long timeout_seconds, const CancelFn& cancelled) {
  os::CapturedProcess captured;
  os::ProcessOutcome o = os::run_process(
      spec, [&](std::string_view d) { captured.out.append(d); },
      [&](std::string_view d) { captured.err.append(d); }, cancelled, timeout_seconds, 1);
  if (o.cancelled) throw Error(ErrorCode::cancelled, "interrupted while asking git for the workspace's files");
  captured.exit_code = o.exit_code;
  captured.timed_out = o.timed_out;
  return captured;
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

}  // namespace

std::optional<fs::path> plain_toplevel(const fs::path& start, const EnvLookup& env) {
  for (const char* name : kMovingVariables)
    if (env(name)) return std::nullopt;
  const uid_t me = ::geteuid();
  struct stat here {};
  if (!start.is_absolute() || ::stat(start.c_str(), &here) != 0) return std::nullopt;
  for (fs::path dir = start;;) {
    if (dir.filename() == ".git") return std::nullopt;  // inside a repository's own folder
    struct stat dot_git {};
    if (::lstat((dir / ".git").c_str(), &dot_git) == 0) {
      // A gitfile (a linked worktree, a submodule) or a link: git follows it.
      if (!S_ISDIR(dot_git.st_mode)) return std::nullopt;
      // Whose files these are decides whether git trusts them (safe.directory).
      if (dot_git.st_uid != me || here.st_uid != me) return std::nullopt;
      if (!looks_like_repository(dir / ".git")) return std::nullopt;
      std::optional<std::string> config;
      try {
        config = os::read_regular_file(dir / ".git" / "config", kMaxConfigBytes, "git config", os::Links::refuse);
      } catch (const Error&) {
        return std::nullopt;
      }
      if (!config || !config_is_plain(std::move(*config))) return std::nullopt;
      return dir;
    }
    if (errno != ENOENT) return std::nullopt;
    if (::access((dir / "HEAD").c_str(), F_OK) == 0) return std::nullopt;  // maybe a bare repository
    if (dir == dir.root_path()) return std::nullopt;  // no checkout up to `/`: git says so
    fs::path parent = dir.parent_path();
    struct stat up {};
    // git stops at a file-system boundary (GIT_DISCOVERY_ACROSS_FILESYSTEM aside).
    if (::stat(parent.c_str(), &up) != 0 || up.st_dev != here.st_dev) return std::nullopt;
    dir = std::move(parent);
    here = up;
  }
}

fs::path git_toplevel(const fs::path& start, const CancelFn& cancelled) {
  if (os::find_program("git").empty()) return {};
  if (std::optional<fs::path> top = plain_toplevel(start)) return *top;
  os::ProcessSpec spec{{"git", "rev-parse", "--show-toplevel"}, std::nullopt, start.string()};
  spec.inherit = {"*"};  // git reads the user's own config, as when they run it
  os::CapturedProcess p = run_git(spec, 30, cancelled);
  if (p.exit_code != 0) return {};
  std::string out = p.out;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

GitListing list_git_files(const fs::path& root, const CancelFn& cancelled) {
  os::ProcessSpec spec{{"git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"}, std::nullopt,
                        root.string()};
  spec.inherit = {"*"};
  os::CapturedProcess p = run_git(spec, 120, cancelled);
  if (p.exit_code != 0)
    throw Error(ErrorCode::internal, fmt::format("git ls-files failed in {}: {}", root.string(), p.err));
  GitListing listing;
  listing.unopened = unopened_folders(p.err);
  std::string_view rest = p.out;
  while (!rest.empty()) {
    size_t nul = rest.find('\0');
    listing.files.emplace_back(rest.substr(0, nul));
    if (nul == std::string_view::npos) break;
    rest.remove_prefix(nul + 1);
  }
  std::sort(listing.files.begin(), listing.files.end());
  listing.files.erase(std::unique(listing.files.begin(), listing.files.end()), listing.files.end());
  return listing;
}

}  // namespace corral
