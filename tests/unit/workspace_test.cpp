#include <archive.h>
#include <archive_entry.h>
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>

#include "base/sizes.hpp"
#include "cli.hpp"
#include "corral/os/process.hpp"
#include "corral/types.hpp"
#include "workspace/archive.hpp"
#include "workspace/workspace.hpp"

namespace fs = std::filesystem;
using corral::test::TempDir;

namespace {

// Path -> content of every regular file in a .tar.gz, plus "->target" for symlinks.
std::map<std::string, std::string> read_archive(const fs::path& path) {
  std::map<std::string, std::string> out;
  std::unique_ptr<archive, decltype(&archive_read_free)> a(archive_read_new(), archive_read_free);
  archive_read_support_format_tar(a.get());
  archive_read_support_filter_gzip(a.get());
  REQUIRE(archive_read_open_filename(a.get(), path.c_str(), 10240) == ARCHIVE_OK);
  archive_entry* e;
  while (archive_read_next_header(a.get(), &e) == ARCHIVE_OK) {
    std::string name = archive_entry_pathname(e);
    if (archive_entry_filetype(e) == AE_IFLNK) {
      out[name] = std::string("->") + archive_entry_symlink(e);
      continue;
    }
    std::string content(static_cast<size_t>(archive_entry_size(e)), '\0');
    archive_read_data(a.get(), content.data(), content.size());
    if (archive_entry_perm(e) & 0100) content += " [x]";
    out[name] = content;
  }
  return out;
}

void git(const fs::path& dir, std::vector<std::string> args) {
  args.insert(args.begin(), {"git", "-c", "user.email=t@t", "-c", "user.name=t"});
  auto p = corral::os::capture_process({args, std::nullopt, dir.string()});
  REQUIRE_MESSAGE(p.exit_code == 0, p.err);
}

}  // namespace

TEST_CASE("a plain folder is archived whole, minus .corralignore matches") {
  TempDir t;
  t.write("src/main.c", "int main(){}");
  t.write("run.sh", "#!/bin/sh\n");
  ::chmod((t.path() / "run.sh").c_str(), 0755);
  t.write("logs/x.log", "noise");
  t.write(".corralignore", "logs/\n");
  fs::create_symlink("src/main.c", t.path() / "link");
  corral::Workspace ws = corral::scan_workspace(t.path());
  CHECK_FALSE(ws.git);
  CHECK(ws.subdir.empty());
  auto archive = t.path() / "../ws-test.tar.gz";
  corral::write_archive(ws, archive);
  auto files = read_archive(archive);
  fs::remove(archive);
  CHECK(files.at("src/main.c") == "int main(){}");
  CHECK(files.at("run.sh") == "#!/bin/sh\n [x]");
  CHECK(files.at("link") == "->src/main.c");
  CHECK(files.count("logs/x.log") == 0);
}

TEST_CASE("a git checkout sends tracked and untracked files but not ignored ones") {
  TempDir t;
  git(t.path(), {"init", "-q"});
  t.write(".gitignore", "*.o\n");
  t.write("tracked.c", "a");
  t.write("obj.o", "binary");
  t.write("sub/untracked.txt", "b");
  t.write("secret.env", "TOKEN=1");
  t.write(".corralignore", "*.env\n");
  git(t.path(), {"add", "tracked.c", ".gitignore"});
  git(t.path(), {"commit", "-qm", "init"});
  corral::Workspace ws = corral::scan_workspace(t.path() / "sub");
  CHECK(ws.git);
  CHECK(ws.subdir == "sub");
  std::vector<std::string> names;
  for (const auto& f : ws.files) names.push_back(f.path);
  CHECK(names == std::vector<std::string>{".corralignore", ".gitignore", "sub/untracked.txt", "tracked.c"});
}

TEST_CASE("--git adds the checkout's whole .git folder, sorted in, whatever .corralignore says; none to send is refused") {
  TempDir t;
  git(t.path(), {"init", "-q"});
  t.write("tracked.c", "a");
  t.write(".corralignore", ".git\nHEAD\n");
  git(t.path(), {"add", "tracked.c"});
  git(t.path(), {"commit", "-qm", "init"});
  const corral::Workspace plain = corral::scan_workspace(t.path());
  for (const auto& f : plain.files) CHECK(f.path.rfind(".git/", 0) != 0);
  std::vector<std::string> warnings;
  const corral::Workspace ws =
      corral::scan_workspace(t.path(), {}, [&](const std::string& m) { warnings.push_back(m); }, /*with_git=*/true);
  std::vector<std::string> names;
  for (const auto& f : ws.files) names.push_back(f.path);
  CHECK(std::is_sorted(names.begin(), names.end()));
  for (const char* must : {".git/HEAD", ".git/config", ".git/index", "tracked.c"})
    CHECK(std::find(names.begin(), names.end(), must) != names.end());
  CHECK(ws.fingerprint != plain.fingerprint);
  CHECK(warnings.empty());
  // Credentials in a remote URL go along: said so.
  git(t.path(), {"remote", "add", "origin", "https://user:tok3n@example.com/r.git"});
  corral::scan_workspace(t.path(), {}, [&](const std::string& m) { warnings.push_back(m); }, true);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("whose remote URLs hold credentials") != std::string::npos);
  CHECK(warnings[0].find("tok3n") == std::string::npos);

  TempDir plain_folder;
  plain_folder.write("a.txt", "a");
  CHECK_THROWS_WITH_AS(corral::scan_workspace(plain_folder.path(), {}, {}, true),
                       doctest::Contains("is no git checkout, so there is no .git to send"), corral::Error);
  TempDir worktree;
  worktree.write("f.txt", "x");
  git(worktree.path(), {"init", "-q"});
  git(worktree.path(), {"add", "f.txt"});
  git(worktree.path(), {"commit", "-qm", "init"});
  git(worktree.path(), {"worktree", "add", "-q", (worktree.path() / "wt").string()});
  CHECK_THROWS_WITH_AS(corral::scan_workspace(worktree.path() / "wt", {}, {}, true),
                       doctest::Contains("a file pointing at the repository elsewhere"), corral::Error);
}

TEST_CASE("where git must be asked for the top level, finding the root and then scanning asks it once") {
  TempDir t;
  git(t.path(), {"init", "-q"});
  t.write("a.txt", "a");
  t.write("sub/b.txt", "b");
  // A git on PATH that counts `rev-parse` calls and runs the real one.
  const std::string real_git = corral::os::find_program("git");
  REQUIRE_FALSE(real_git.empty());
  TempDir tools;  // outside the checkout, so the log does not change its fingerprint
  const fs::path log = tools.path() / "git-calls.log";
  const fs::path bin = tools.path() / "bin";
  fs::create_directories(bin);
  const fs::path wrapper = bin / "git";
  {
    std::ofstream out(wrapper);
    out << "#!/bin/sh\n[ \"$1\" = rev-parse ] && echo x >>'" << log.string() << "'\nexec '" << real_git
        << "' \"$@\"\n";
  }
  ::chmod(wrapper.c_str(), 0755);
  const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", (bin.string() + ":" + old_path).c_str(), 1);
  std::unique_ptr<const std::string, void (*)(const std::string*)> restore(
      &old_path, [](const std::string* p) { ::setenv("PATH", p->c_str(), 1); });
  // A variable that may carry `-c` settings: only git can say where the top level is.
  REQUIRE(std::getenv("GIT_CONFIG_COUNT") == nullptr);
  ::setenv("GIT_CONFIG_COUNT", "0", 1);
  std::unique_ptr<const char, void (*)(const char*)> unset("GIT_CONFIG_COUNT", [](const char* n) { ::unsetenv(n); });
  auto rev_parses = [&] {
    std::string text = corral::test::read_file(log);
    return std::count(text.begin(), text.end(), '\n');
  };

  const fs::path root = corral::find_workspace_root(t.path() / "sub");
  corral::Workspace ws = corral::scan_workspace(t.path() / "sub");
  const auto after_pair = rev_parses();
  // Any later scan (another folder or the same one) asks git itself.
  corral::Workspace again = corral::scan_workspace(t.path() / "sub");
  const auto after_again = rev_parses();

  CHECK(after_pair == 1);
  CHECK(after_again == 2);
  CHECK(root == fs::weakly_canonical(t.path()));
  CHECK(ws.git);
  CHECK(ws.root == root);
  CHECK(ws.subdir == "sub");
  CHECK(again.root == root);
  CHECK(again.fingerprint == ws.fingerprint);
}

TEST_CASE("a root found for one folder is not used for scanning another") {
  TempDir repo, plain;
  git(repo.path(), {"init", "-q"});
  plain.write("x.txt", "x");
  corral::find_workspace_root(repo.path());
  corral::Workspace ws = corral::scan_workspace(plain.path());
  CHECK_FALSE(ws.git);
  CHECK(ws.root == fs::weakly_canonical(plain.path()));
}

TEST_CASE("the fingerprint changes with content, mode and names, and only then") {
  TempDir t;
  t.write("a.txt", "one");
  std::string first = corral::scan_workspace(t.path()).fingerprint;
  CHECK(corral::scan_workspace(t.path()).fingerprint == first);
  t.write("a.txt", "two!");
  std::string second = corral::scan_workspace(t.path()).fingerprint;
  CHECK(second != first);
  ::chmod((t.path() / "a.txt").c_str(), 0755);
  CHECK(corral::scan_workspace(t.path()).fingerprint != second);
  t.write("b.txt", "");
  CHECK(corral::scan_workspace(t.path()).fingerprint != second);
}

TEST_CASE("a workspace of several MiB, compressed on several threads, reads back as one archive") {
  TempDir t;
  // Enough data for many gzip members; text that compresses, each file different.
  std::map<std::string, std::string> expected;
  for (int i = 0; i < 24; ++i) {
    std::string content;
    for (int line = 0; content.size() < 300'000 + 1'000 * static_cast<std::size_t>(i); ++line)
      content += "file " + std::to_string(i) + " line " + std::to_string(line * 7919 % 10007) + "\n";
    const std::string name = "dir" + std::to_string(i % 3) + "/f" + std::to_string(i) + ".txt";
    t.write(name, content);
    expected[name] = content;
  }
  t.write("empty", "");
  expected["empty"] = "";
  corral::Workspace ws = corral::scan_workspace(t.path());
  REQUIRE(ws.total_bytes > (4u << 20));
  TempDir out;
  const fs::path archive = out.path() / "ws.tar.gz";
  const std::uint64_t size = corral::write_archive(ws, archive);
  CHECK(size == fs::file_size(archive));
  CHECK(read_archive(archive) == expected);
  // What the remote sandboxes run: tar -xzf (through gzip).
  if (!corral::os::find_program("tar").empty() && !corral::os::find_program("gzip").empty()) {
    auto p = corral::os::capture_process({{"tar", "-xzf", archive.string(), "-C", out.path().string()}, std::nullopt, ""});
    REQUIRE_MESSAGE(p.exit_code == 0, p.err);
    for (const auto& [name, content] : expected) CHECK(corral::test::read_file(out.path() / name) == content);
  }
}

TEST_CASE("a workspace above the limit is refused with the largest files named") {
  TempDir t;
  t.write("big.bin", std::string(4096, 'x'));
  t.write("small.txt", "x");
  corral::Workspace ws = corral::scan_workspace(t.path());
  CHECK_NOTHROW(corral::check_workspace_size(ws, 0));
  CHECK_NOTHROW(corral::check_workspace_size(ws, 1 << 20));
  CHECK_THROWS_WITH_AS(corral::check_workspace_size(ws, 1024), doctest::Contains("big.bin"), corral::Error);
}

TEST_CASE("sizes parse with binary units") {
  CHECK(corral::parse_size("512") == 512);
  CHECK(corral::parse_size("2k") == 2048);
  CHECK(corral::parse_size("512M") == 512ull << 20);
  CHECK(corral::parse_size("1G") == 1ull << 30);
  CHECK(corral::parse_size("1GiB") == 1ull << 30);
  CHECK_THROWS_AS(corral::parse_size("lots"), corral::Error);
  CHECK_THROWS_AS(corral::parse_size("5T"), corral::Error);
}

TEST_CASE("sizes beyond 2^64-1 bytes are refused, naming the value and the maximum") {
  CHECK(corral::parse_size("17179869183G") == 17179869183ull << 30);
  CHECK(corral::parse_size("18446744073709551615") == UINT64_MAX);
  // These used to wrap: 2^34 G is 2^64 bytes, which became 0, "no limit".
  CHECK_THROWS_WITH_AS(corral::parse_size("17179869184G"),
                       doctest::Contains("size '17179869184G' is too large: the maximum is 17179869183G"),
                       corral::Error);
  CHECK_THROWS_WITH_AS(corral::parse_size("18446744073709551616"),
                       doctest::Contains("the maximum is 18446744073709551615"), corral::Error);
  CHECK_THROWS_WITH_AS(corral::parse_size("9999999999999999999999999Mi"), doctest::Contains("17592186044415Mi"),
                       corral::Error);  // std::stoull's out_of_range used to escape as an internal error
  for (const char* bad : {"", "-1", "k", "1ki", "1x", " 1"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(corral::parse_size(bad), corral::Error);
  }
}

namespace {

// A cancel callback that says "stop" from its `after`-th call on, counting its calls.
struct CancelAfter {
  int after;
  int calls = 0;
  std::function<bool()> fn() {
    return [this] { return ++calls >= after; };
  }
};

corral::ErrorCode code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const corral::Error& e) {
    return e.code();
  }
  FAIL("no corral::Error thrown");
  return corral::ErrorCode::internal;
}

}  // namespace

TEST_CASE("scanning a folder stops on cancel, polled while it walks") {
  TempDir t;
  for (int i = 0; i < 700; ++i) t.write("f/" + std::to_string(i), "x");
  CancelAfter never{1 << 30};
  CHECK(corral::scan_workspace(t.path(), never.fn()).files.size() == 700);
  CHECK(never.calls >= 2);  // polled, or the test below proves nothing
  // The git probe polls too (about ten times a second), so the count is only a floor.
  CancelAfter second{2};
  CHECK(code_of([&] { corral::scan_workspace(t.path(), second.fn()); }) == corral::ErrorCode::cancelled);
  CHECK(second.calls >= 2);
}

TEST_CASE("scanning a git checkout stops on cancel") {
  TempDir t;
  git(t.path(), {"init", "-q"});
  for (int i = 0; i < 300; ++i) t.write("u" + std::to_string(i), "x");
  CancelAfter now{1};
  CHECK(code_of([&] { corral::scan_workspace(t.path(), now.fn()); }) == corral::ErrorCode::cancelled);
}

TEST_CASE("packing stops on cancel between files and inside a large file, leaving no archive") {
  TempDir t;
  for (int i = 0; i < 300; ++i) t.write("small/" + std::to_string(i), "x");
  t.write("big.bin", std::string(4 << 20, 'b'));
  corral::Workspace many = corral::scan_workspace(t.path() / "small");
  const fs::path archive = t.path() / "out.tar.gz";
  CancelAfter now{1};
  CHECK(code_of([&] { corral::write_archive(many, archive, now.fn()); }) == corral::ErrorCode::cancelled);
  CHECK_FALSE(fs::exists(archive));
  corral::Workspace big = corral::scan_workspace(t.path());
  big.files.erase(std::remove_if(big.files.begin(), big.files.end(), [](auto& f) { return f.path != "big.bin"; }),
                  big.files.end());
  REQUIRE(big.files.size() == 1);
  CancelAfter now_again{1};
  CHECK(code_of([&] { corral::write_archive(big, archive, now_again.fn()); }) == corral::ErrorCode::cancelled);
  CHECK_FALSE(fs::exists(archive));
  CancelAfter never{1 << 30};
  CHECK(corral::write_archive(big, archive, never.fn()) > 0);
  CHECK(read_archive(archive).at("big.bin").size() == 4u << 20);
  CHECK(never.calls >= 2);
}

TEST_CASE("a malformed .corralignore is a usage error naming the file and line") {
  TempDir t;
  t.write("a.txt", "x");
  t.write(".corralignore", "*.log\nsecret[.env\n");
  const std::string expected = (t.path() / ".corralignore").string() + ":2: unterminated '['";
  CHECK_THROWS_WITH_AS(corral::scan_workspace(t.path()), doctest::Contains(expected.c_str()), corral::Error);
}
