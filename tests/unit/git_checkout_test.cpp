// Finding a checkout's top level without git (held to git's own answer in every layout
// that could tell them apart), and the listing a run starts before it scans.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "cli.hpp"
#include "corral/errors.hpp"
#include "corral/os/process.hpp"
#include "workspace/git_checkout.hpp"
#include "workspace/workspace.hpp"

namespace fs = std::filesystem;
using corral::test::TempDir;

namespace {

void git(const fs::path& dir, std::vector<std::string> args) {
  args.insert(args.begin(), {"git", "-c", "user.email=t@t", "-c", "user.name=t"});
  auto p = corral::os::capture_process({args, std::nullopt, dir.string()});
  REQUIRE_MESSAGE(p.exit_code == 0, p.err);
}

// What `git rev-parse --show-toplevel` says in `dir`: the top level, or "" when it fails.
std::string git_says(const fs::path& dir) {
  corral::os::ProcessSpec spec{{"git", "rev-parse", "--show-toplevel"}, std::nullopt, dir.string()};
  spec.inherit = {"*"};
  auto p = corral::os::capture_process(spec);
  if (p.exit_code != 0) return "";
  while (!p.out.empty() && p.out.back() == '\n') p.out.pop_back();
  return p.out;
}

// An environment with nothing set but `vars`.
corral::EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}
const corral::EnvLookup kNoEnv = env_of({});

fs::path real(const fs::path& p) { return fs::canonical(p); }

// A checkout with a file at its root and one two folders down.
struct Checkout {
  TempDir dir;
  fs::path root = real(dir.path());
  Checkout() {
    git(root, {"init", "-q"});
    dir.write("a.txt", "a");
    dir.write("sub/deeper/b.txt", "b");
    git(root, {"add", "-A"});
    git(root, {"commit", "-qm", "first"});
  }
};

// A `git` first on PATH, a shell script that runs `script` and then the real git; PATH is
// restored at scope end.
class GitOnPath {
 public:
  explicit GitOnPath(const std::string& script) {
    const std::string real_git = corral::os::find_program("git");
    REQUIRE_FALSE(real_git.empty());
    fs::create_directories(tools_.path() / "bin");
    const fs::path wrapper = tools_.path() / "bin" / "git";
    std::ofstream(wrapper) << "#!/bin/sh\n" << script << "\nexec '" << real_git << "' \"$@\"\n";
    ::chmod(wrapper.c_str(), 0755);
    old_path_ = std::getenv("PATH") ? std::getenv("PATH") : "";
    ::setenv("PATH", ((tools_.path() / "bin").string() + ":" + old_path_).c_str(), 1);
  }
  ~GitOnPath() { ::setenv("PATH", old_path_.c_str(), 1); }
 private:
  TempDir tools_;
  std::string old_path_;
};

// The number of lines in `path` ("" when it does not exist: 0).
long lines_in(const fs::path& path) {
  const std::string text = corral::test::read_file(path);
  return static_cast<long>(std::count(text.begin(), text.end(), '\n'));
}

// True when process `pid` no longer exists (it was ended and reaped).
bool gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

}  // namespace

TEST_CASE("a plain checkout's top level is found without git, from its root and below") {
  Checkout c;
  CHECK(corral::plain_toplevel(c.root, kNoEnv) == c.root);
  CHECK(corral::plain_toplevel(c.root / "sub" / "deeper", kNoEnv) == c.root);
  // The same answer as git's, whichever way it was found.
  CHECK(git_says(c.root / "sub" / "deeper") == c.root.string());
  CHECK(corral::git_toplevel(c.root / "sub" / "deeper") == c.root);
}

TEST_CASE("a checkout inside another is its own top level, as for git") {
  Checkout outer;
  const fs::path inner = outer.root / "vendor" / "lib";
  fs::create_directories(inner / "src");
  git(inner, {"init", "-q"});
  CHECK(corral::plain_toplevel(inner / "src", kNoEnv) == inner);
  CHECK(git_says(inner / "src") == inner.string());
}

TEST_CASE("git is asked whenever its answer could differ from a look for .git") {
  Checkout c;
  const fs::path sub = c.root / "sub";

  SUBCASE("a variable that moves the repository or carries -c settings") {
    for (const char* name : {"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
                             "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"}) {
      CAPTURE(name);
      CHECK_FALSE(corral::plain_toplevel(sub, env_of({{name, "x"}})).has_value());
    }
    // One that moves nothing (git's TLS settings, its editor) leaves the look alone.
    CHECK(corral::plain_toplevel(sub, env_of({{"GIT_SSL_CAINFO", "/x"}, {"GIT_EDITOR", "vi"}})) == c.root);
  }
  SUBCASE("a linked worktree: .git is a file") {
    const fs::path linked = real(c.dir.path()).parent_path() / (c.root.filename().string() + "-linked");
    git(c.root, {"worktree", "add", "-q", linked.string()});
    fs::create_directories(linked / "sub");
    CHECK_FALSE(corral::plain_toplevel(linked / "sub", kNoEnv).has_value());
    CHECK(corral::git_toplevel(linked / "sub") == fs::path(git_says(linked / "sub")));
    CHECK(git_says(linked / "sub") == linked.string());
    git(c.root, {"worktree", "remove", "--force", linked.string()});
  }
  SUBCASE("a config that moves the work tree, includes another or is bare") {
    for (const char* setting : {"core.worktree", "include.path", "core.bare"}) {
      CAPTURE(setting);
      const std::string value = std::string(setting) == "core.worktree" ? c.root.string()
                                : std::string(setting) == "core.bare" ? "true"
                                                                        : "/nonexistent";
      git(c.root, {"config", setting, value});
      CHECK_FALSE(corral::plain_toplevel(sub, kNoEnv).has_value());
      CHECK(corral::git_toplevel(sub) == fs::path(git_says(sub)));
      git(c.root, {"config", "--unset", setting});
      CHECK(corral::plain_toplevel(sub, kNoEnv) == c.root);  // back to plain: the test saw the setting
    }
  }
  SUBCASE("a config that is a FIFO, a link or huge is not read (and never waited on)") {
    const fs::path config = c.root / ".git" / "config";
    const std::string text = corral::test::read_file(config);
    fs::remove(config);
    REQUIRE(::mkfifo(config.c_str(), 0600) == 0);  // nobody writes it: a read would block
    CHECK_FALSE(corral::plain_toplevel(sub, kNoEnv).has_value());
    fs::remove(config);
    TempDir elsewhere;
    fs::create_symlink(elsewhere.write("config", text), config);
    CHECK_FALSE(corral::plain_toplevel(sub, kNoEnv).has_value());
    fs::remove(config);
    std::ofstream(config) << text << "# " << std::string(70 << 10, 'x') << "\n";
    CHECK_FALSE(corral::plain_toplevel(sub, kNoEnv).has_value());
    std::ofstream(config, std::ios::trunc) << text;
    CHECK(corral::plain_toplevel(sub, kNoEnv) == c.root);  // as it was: the test saw each change
  }
  SUBCASE("a .git that is a link, or not a repository") {
    TempDir other;
    const fs::path linked = real(other.path());
    fs::create_directories(linked / "work");
    fs::create_directory_symlink(c.root / ".git", linked / "work" / ".git");
    CHECK_FALSE(corral::plain_toplevel(linked / "work", kNoEnv).has_value());
    CHECK(corral::git_toplevel(linked / "work") == fs::path(git_says(linked / "work")));
    fs::create_directories(sub / "fake" / ".git");  // no HEAD, objects or refs: git passes over it
    CHECK_FALSE(corral::plain_toplevel(sub / "fake", kNoEnv).has_value());
    CHECK(corral::git_toplevel(sub / "fake") == c.root);
    CHECK(git_says(sub / "fake") == c.root.string());
  }
  SUBCASE("inside the repository's own folder, or a bare repository") {
    CHECK_FALSE(corral::plain_toplevel(c.root / ".git" / "refs", kNoEnv).has_value());
    CHECK(corral::git_toplevel(c.root / ".git" / "refs") == fs::path(git_says(c.root / ".git" / "refs")));
    TempDir bare;
    git(bare.path(), {"init", "-q", "--bare"});
    CHECK_FALSE(corral::plain_toplevel(real(bare.path()) / "refs", kNoEnv).has_value());
    CHECK(corral::git_toplevel(real(bare.path()) / "refs").empty());
  }
  SUBCASE("a folder in no checkout") {
    TempDir plain;
    if (!git_says(plain.path()).empty()) return;  // $TMPDIR itself is in a checkout here
    CHECK_FALSE(corral::plain_toplevel(real(plain.path()), kNoEnv).has_value());
    CHECK(corral::git_toplevel(real(plain.path())).empty());
  }
  SUBCASE("a repository owned by another user (git's safe.directory check)") {
    if (::geteuid() != 0) return;  // only root can hand its files to another user
    REQUIRE(::chown((c.root / ".git").c_str(), 65534, 65534) == 0);
    CHECK_FALSE(corral::plain_toplevel(sub, kNoEnv).has_value());
    CHECK(corral::git_toplevel(sub) == fs::path(git_says(sub)));
    REQUIRE(::chown((c.root / ".git").c_str(), 0, 0) == 0);
    REQUIRE(::chown(c.root.c_str(), 65534, 65534) == 0);  // the work tree's owner counts too
    CHECK_FALSE(corral::plain_toplevel(sub, kNoEnv).has_value());
    REQUIRE(::chown(c.root.c_str(), 0, 0) == 0);
  }
}

TEST_CASE("a plain checkout is scanned without asking git for its top level") {
  Checkout c;
  TempDir tools;
  const fs::path log = real(tools.path()) / "rev-parse.log";
  GitOnPath logging("[ \"$1\" = rev-parse ] && echo x >>'" + log.string() + "'");
  CHECK(corral::find_workspace_root(c.root / "sub") == c.root);
  corral::Workspace ws = corral::scan_workspace(c.root / "sub");
  CHECK(ws.root == c.root);
  CHECK(ws.subdir == "sub");
  CHECK(ws.files.size() == 2);
  CHECK(lines_in(log) == 0);
}

TEST_CASE("a listing started early is what the scan of that folder takes, and only that scan") {
  Checkout c;
  TempDir tools;
  const fs::path log = real(tools.path()) / "ls-files.log";
  GitOnPath logging("[ \"$1\" = ls-files ] && echo x >>'" + log.string() + "'");
  const corral::Workspace expected = corral::scan_workspace(c.root / "sub");
  REQUIRE(lines_in(log) == 1);

  {
    corral::WorkspacePrefetch prefetch(c.root / "sub");
    corral::Workspace ws = corral::scan_workspace(c.root / "sub");
    CHECK(lines_in(log) == 2);  // one listing for the prefetch and the scan
    CHECK(ws.fingerprint == expected.fingerprint);
    CHECK(ws.subdir == "sub");
    // Taken once: a second scan lists again.
    corral::scan_workspace(c.root / "sub");
    CHECK(lines_in(log) == 3);
  }
  {
    Checkout other;
    corral::WorkspacePrefetch prefetch(other.root);
    corral::Workspace ws = corral::scan_workspace(c.root / "sub");  // not the prefetched folder
    CHECK(ws.root == c.root);
    CHECK(ws.fingerprint == expected.fingerprint);
  }
}

TEST_CASE("a listing nobody takes, or a scan cancelled while it waits, stops git") {
  Checkout c;
  TempDir tools;
  const fs::path pid_file = real(tools.path()) / "git.pid";
  // A git whose listing never ends by itself.
  GitOnPath slow("[ \"$1\" = ls-files ] && { echo $$ >'" + pid_file.string() + "'; exec sleep 600; }");
  auto started_pid = [&] {
    REQUIRE(corral::test::eventually([&] { return lines_in(pid_file) == 1; }));
    return static_cast<pid_t>(std::stol(corral::test::read_file(pid_file)));
  };

  pid_t pid = -1;
  {
    corral::WorkspacePrefetch prefetch(c.root);
    pid = started_pid();
  }
  CHECK(gone(pid));

  fs::remove(pid_file);
  corral::WorkspacePrefetch prefetch(c.root);
  pid = started_pid();
  int polls = 0;
  try {
    corral::scan_workspace(c.root, [&] { return ++polls >= 2; });
    FAIL("the scan returned without a listing");
  } catch (const corral::Error& e) {
    CHECK(e.code() == corral::ErrorCode::cancelled);
  }
  CHECK(gone(pid));
}
