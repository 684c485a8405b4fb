// corral-jail-exec, the program bwrap starts in every local jail: it closes what bwrap
// passed on, then becomes the command as a shell would, with a shell's 127 and 126.
// Run here directly, outside any jail: what it does depends on nothing bwrap sets up.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli.hpp"
#include "corral/os/process.hpp"

namespace fs = std::filesystem;
using corral::test::TempDir;

namespace {

// Runs the starter with `args` and only `path` as PATH, in `cwd`, with `passed` open.
corral::os::CapturedProcess start(const std::vector<std::string>& args, const std::string& path,
                                   const fs::path& cwd,
                                   const std::vector<corral::os::ProcessSpec::PassedFd>& passed = {}) {
  corral::os::ProcessSpec spec;
  spec.argv = {CORRAL_JAIL_EXEC};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = std::vector<std::string>{"PATH=" + path};
  spec.cwd = cwd.string();
  spec.pass_fds = passed;
  return corral::os::capture_process(spec, 30);
}

fs::path program(const TempDir& dir, const std::string& relative, const std::string& text, bool executable) {
  fs::path file = dir.write(relative, text);
  fs::permissions(file, executable ? fs::perms::owner_all : fs::perms::owner_read | fs::perms::owner_write,
                  fs::perm_options::replace);
  return file;
}

}  // namespace

TEST_CASE("the starter closes every descriptor above stderr before it becomes the command") {
  TempDir dir;
  const int a = ::open("/dev/null", O_RDONLY | O_CLOEXEC), b = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  REQUIRE(a >= 0);
  REQUIRE(b >= 0);
  auto r = start({"sh", "-c", "ls /proc/$$/fd"}, "/usr/bin:/bin", dir.path(), {{a, 3}, {b, 9}});
  ::close(a);
  ::close(b);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "0\n1\n2\n");
}

TEST_CASE("the starter finds the command on PATH as a shell does, or says why not with 127 or 126") {
  TempDir dir;
  program(dir, "first/tool", "#!/bin/sh\necho first\n", false);
  program(dir, "second/tool", "#!/bin/sh\necho second \"$@\"\n", true);
  program(dir, "only/locked", "#!/bin/sh\necho locked\n", false);
  program(dir, "here/script", "echo script \"$1\"\n", true);  // no #! line: a shell runs it
  const std::string path = (dir.path() / "first").string() + ":" + (dir.path() / "second").string() + ":" +
                           (dir.path() / "only").string() + ":/usr/bin:/bin";

  auto found = start({"tool", "a b"}, path, dir.path());
  CHECK(found.exit_code == 0);
  CHECK(found.out == "second a b\n");  // the first folder's tool cannot be executed: the search goes on

  auto locked = start({"locked"}, path, dir.path());
  CHECK(locked.exit_code == 126);
  CHECK(locked.err == "locked: Permission denied\n");

  auto missing = start({"no-such-tool-corral"}, path, dir.path());
  CHECK(missing.exit_code == 127);
  CHECK(missing.err == "no-such-tool-corral: command not found\n");

  auto script = start({"./here/script", "x"}, path, dir.path());
  CHECK(script.exit_code == 0);
  CHECK(script.out == "script x\n");

  // An empty PATH entry is the current folder, as in a shell.
  auto here = start({"script", "y"}, ":/bin", dir.path() / "here");
  CHECK(here.exit_code == 0);
  CHECK(here.out == "script y\n");

  auto absent = start({"./nowhere"}, path, dir.path());
  CHECK(absent.exit_code == 127);
  CHECK(absent.err == "./nowhere: No such file or directory\n");

  auto not_executable = start({"./first/tool"}, path, dir.path());  // no execute bit: not even for root
  CHECK(not_executable.exit_code == 126);
  CHECK(not_executable.err == "./first/tool: Permission denied\n");

  auto folder = start({"./first"}, path, dir.path());
  CHECK(folder.exit_code == 126);
  CHECK(folder.err == "./first: Permission denied\n");

  // No arguments is the plugin's version probe (bwrap always passes a command).
  auto nothing = start({}, path, dir.path());
  CHECK(nothing.exit_code == 0);
  CHECK(nothing.out == "corral-jail-exec " CORRAL_JAIL_EXEC_PROTOCOL "\n");
  CHECK(nothing.err.empty());
}
