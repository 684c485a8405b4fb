// copy_workspace: the local provider's upload, the user's tree copied file by file into a
// sandbox's workspace. What arrives (modes, links, times, a root-only file), what stays
// (the sandbox's own files), and what is refused before or while copying: paths that
// leave the tree, links on the way, files that changed kind. As root the workspace is
// nobody's; an unprivileged case runs in a child that is nobody.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <chrono>
#include <vector>

#include "cli.hpp"
#include "corral/errors.hpp"
#include "fake_host.hpp"
#include "file_data.hpp"
#include "in_child.hpp"
#include "jail_user.hpp"
#include "workspace_copy.hpp"

namespace fs = std::filesystem;
using corral::ErrorCode;
using corral::TreeFile;
using corral::UploadRequest;
using corral::local::copy_workspace;
using corral::local::JailUser;
// Any unprivileged user will do for the mechanics tested here.
constexpr corral::local::JailUser kNobody{65534, 65534};
using corral::test::FakeHost;
using corral::test::read_file;

namespace {

// A tree to copy from and a workspace to copy into, the workspace owned by whom the jail
// runs as (nobody, for root), as the local provider makes it.
struct CopyFixture {
  corral::test::TempDir dir;
  fs::path tree = dir.path() / "tree";
  fs::path workspace = dir.path() / "workspace";
  std::optional<JailUser> owner = ::geteuid() == 0 ? std::optional<JailUser>(kNobody) : std::nullopt;
  FakeHost fake;

  CopyFixture() {
    fs::create_directories(tree);
    fs::create_directories(workspace);
    // nobody must reach the workspace through the test's own folder.
    fs::permissions(dir.path(), fs::perms::others_exec, fs::perm_options::add);
    if (owner) REQUIRE(::chown(workspace.c_str(), owner->uid, owner->gid) == 0);
  }
  fs::path write(const std::string& rel, const std::string& text) const { return dir.write("tree/" + rel, text); }
  UploadRequest request(std::vector<TreeFile> files) const {
    UploadRequest r;
    r.tree_root = tree.string();
    r.tree_files = std::move(files);
    for (const TreeFile& f : r.tree_files)
      if (!f.symlink) r.size += fs::file_size(tree / f.path);
    return r;
  }
  void copy(const UploadRequest& r, const std::optional<timespec>& copied_at = std::nullopt) {
    copy_workspace(r, workspace, owner, fake.host(), copied_at);
  }
  // What a copy that must fail threw; fails the test when nothing was thrown.
  corral::Error failure(const UploadRequest& r) {
    try {
      copy(r);
    } catch (const corral::Error& e) {
      return e;
    }
    FAIL("the copy did not fail");
    return corral::Error(ErrorCode::internal, "unreachable");
  }
  bool workspace_empty() const { return fs::is_empty(workspace); }
};

struct stat lstat_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return st;
}

}  // namespace

TEST_CASE("the listed files arrive with their modes, links as links and their times; nothing else does") {
  CopyFixture f;
  f.write("a.txt", "alpha\n");
  f.write("bin/run.sh", "#!/bin/sh\necho run\n");
  const std::string big = corral::test::random_bytes(300 << 10);
  f.write("deep/x/y/data.bin", big);
  fs::create_symlink("a.txt", f.tree / "link");
  f.write("unlisted.txt", "not listed\n");
  const fs::path secret = f.write("secret", "root only\n");
  fs::permissions(secret, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
  const timespec old_times[2] = {{0, UTIME_OMIT}, {1000000000, 123456789}};  // 2001
  REQUIRE(::utimensat(AT_FDCWD, (f.tree / "a.txt").c_str(), old_times, 0) == 0);

  UploadRequest r = f.request({{"a.txt"}, {"bin/run.sh", true}, {"deep/x/y/data.bin"}, {"link", false, true},
                               {"secret"}});
  f.copy(r);

  CHECK(read_file(f.workspace / "a.txt") == "alpha\n");
  CHECK(read_file(f.workspace / "deep/x/y/data.bin") == big);
  CHECK(read_file(f.workspace / "secret") == "root only\n");  // read as the caller, whoever may read it
  CHECK((lstat_of(f.workspace / "bin/run.sh").st_mode & 07777) == 0755);
  CHECK((lstat_of(f.workspace / "a.txt").st_mode & 07777) == 0644);
  CHECK((lstat_of(f.workspace / "secret").st_mode & 07777) == 0644);  // the listed mode, not the tree's
  CHECK((lstat_of(f.workspace / "deep/x").st_mode & 07777) == 0755);
  CHECK(fs::is_symlink(f.workspace / "link"));
  CHECK(fs::read_symlink(f.workspace / "link") == "a.txt");
  CHECK(lstat_of(f.workspace / "a.txt").st_mtim.tv_sec == 1000000000);
  CHECK(lstat_of(f.workspace / "a.txt").st_mtim.tv_nsec == 123456789);
  CHECK_FALSE(fs::exists(f.workspace / "unlisted.txt"));
  const uid_t owner = f.owner ? f.owner->uid : ::geteuid();
  for (const char* made : {"a.txt", "secret", "deep", "deep/x/y", "deep/x/y/data.bin", "link"})
    CHECK_MESSAGE(lstat_of(f.workspace / made).st_uid == owner, made);
  // The bytes were reported as they went, ending at the total.
  const auto transfers = f.fake.transfers();
  REQUIRE_FALSE(transfers.empty());
  CHECK(transfers.back() == std::make_pair(r.size, r.size));
}

TEST_CASE("a copy over a kept workspace replaces listed files and links, and keeps the sandbox's own files") {
  CopyFixture f;
  f.write("a.txt", "new\n");
  f.write("b.txt", "bee\n");
  f.copy(f.request({{"a.txt"}}));
  // What the sandbox's command made since: its own file, and a link where a listed file
  // will be, pointing out of the workspace.
  corral::test::TempDir outside;
  const fs::path target = outside.write("target", "untouched\n");
  std::ofstream(f.workspace / "made.txt") << "mine\n";
  fs::create_symlink(target, f.workspace / "b.txt");
  f.write("a.txt", "newer\n");
  f.copy(f.request({{"a.txt"}, {"b.txt"}}));
  CHECK(read_file(f.workspace / "a.txt") == "newer\n");
  CHECK_FALSE(fs::is_symlink(f.workspace / "b.txt"));
  CHECK(read_file(f.workspace / "b.txt") == "bee\n");
  CHECK(read_file(target) == "untouched\n");
  CHECK(read_file(f.workspace / "made.txt") == "mine\n");
}

TEST_CASE("a copy over a kept workspace copies only what differs: what a command changed or removed comes back") {
  CopyFixture f;
  f.write("same.txt", "same\n");
  f.write("edited.txt", "original\n");
  f.write("removed.txt", "gone?\n");
  f.write("chmodded.sh", "#!/bin/sh\n");
  f.write("touched.txt", "12345\n");
  f.write("time-put-back.txt", "abc\n");
  fs::create_symlink("same.txt", f.tree / "link");
  // Times well in the past: an edit in the workspace just after the copy must not share
  // the copy's time by the clock's coarseness.
  const timespec past[2] = {{0, UTIME_OMIT}, {1500000000, 0}};
  for (const char* name : {"same.txt", "edited.txt", "removed.txt", "chmodded.sh", "touched.txt", "time-put-back.txt"})
    REQUIRE(::utimensat(AT_FDCWD, (f.tree / name).c_str(), past, 0) == 0);
  const std::vector<TreeFile> files = {{"same.txt"}, {"edited.txt"}, {"removed.txt"}, {"chmodded.sh", true},
                                       {"touched.txt"}, {"time-put-back.txt"}, {"link", false, true}};
  f.copy(f.request(files));
  // When that copy ended, a clock tick later: what it wrote was changed before.
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  const timespec copied_at = corral::local::file_clock_now();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  // Written (or replaced) by a copy after `copied_at`: its change time says so.
  const auto rewritten = [&](const char* name) {
    const timespec c = lstat_of(f.workspace / name).st_ctim;
    return c.tv_sec > copied_at.tv_sec || (c.tv_sec == copied_at.tv_sec && c.tv_nsec >= copied_at.tv_nsec);
  };
  // What the sandbox's command did since: the same size with a new time, a removal, a
  // mode change, and an edit that kept the size but not the time.
  std::ofstream(f.workspace / "edited.txt") << "ORIGINAL\n";
  fs::remove(f.workspace / "removed.txt");
  fs::permissions(f.workspace / "chmodded.sh", fs::perms::owner_all, fs::perm_options::replace);
  const timespec later[2] = {{0, UTIME_OMIT}, {2000000000, 0}};
  REQUIRE(::utimensat(AT_FDCWD, (f.workspace / "touched.txt").c_str(), later, 0) == 0);
  // An edit at the same size whose time is put back (touch -r, cp -p): only its change
  // time, which no one can set, tells.
  std::ofstream(f.workspace / "time-put-back.txt") << "XYZ\n";
  REQUIRE(::utimensat(AT_FDCWD, (f.workspace / "time-put-back.txt").c_str(), past, 0) == 0);
  f.copy(f.request(files), copied_at);
  CHECK(read_file(f.workspace / "time-put-back.txt") == "abc\n");
  CHECK(read_file(f.workspace / "edited.txt") == "original\n");
  CHECK(read_file(f.workspace / "removed.txt") == "gone?\n");
  CHECK((lstat_of(f.workspace / "chmodded.sh").st_mode & 07777) == 0755);
  CHECK(lstat_of(f.workspace / "touched.txt").st_mtim.tv_sec == lstat_of(f.tree / "touched.txt").st_mtim.tv_sec);
  // Left as they were: the very same file and link, not copies of them.
  CHECK_FALSE(rewritten("same.txt"));
  CHECK_FALSE(rewritten("link"));
  CHECK(rewritten("time-put-back.txt"));
  CHECK(read_file(f.workspace / "same.txt") == "same\n");
  // Without the time of a copy before (a first sync), every file is copied.
  f.copy(f.request(files));
  CHECK(rewritten("same.txt"));
}

TEST_CASE("listed paths that leave the tree are refused before anything is written") {
  for (const char* bad : {"../escape", "/etc/hostname", "ok/../../escape", "..", "a/.."}) {
    CAPTURE(bad);
    CopyFixture f;
    f.write("a.txt", "alpha\n");
    UploadRequest r = f.request({{"a.txt"}});
    r.tree_files.push_back({bad});
    const corral::Error e = f.failure(r);
    CHECK(e.code() == ErrorCode::invalid_argument);
    CHECK(std::string(e.what()).find("leaves the workspace") != std::string::npos);
    CHECK(f.workspace_empty());
  }
}

TEST_CASE("a folder on the way that is a link fails the copy, and nothing is read through it") {
  CopyFixture f;
  corral::test::TempDir outside;
  outside.write("private/key", "do not copy\n");
  fs::create_symlink(outside.path() / "private", f.tree / "vendor");
  UploadRequest r;
  r.tree_root = f.tree.string();
  r.tree_files = {{"vendor/key"}};
  const corral::Error e = f.failure(r);
  CHECK(e.code() == ErrorCode::invalid_argument);
  CHECK(std::string(e.what()).find("a folder on its way is a link") != std::string::npos);
  CHECK(e.hint().find(".corralignore") != std::string::npos);
  CHECK_FALSE(fs::exists(f.workspace / "vendor/key"));
}

TEST_CASE("a listed file that changed kind since the scan fails at once: a FIFO is never waited on") {
  CopyFixture f;
  REQUIRE(::mkfifo((f.tree / "pipe").c_str(), 0644) == 0);
  f.write("plain", "a file, listed as a link\n");
  fs::create_symlink("plain", f.tree / "was-a-file");
  for (const TreeFile& listed : {TreeFile{"pipe"}, TreeFile{"plain", false, true}, TreeFile{"was-a-file"}}) {
    CAPTURE(listed.path);
    UploadRequest r;
    r.tree_root = f.tree.string();
    r.tree_files = {listed};
    const corral::Error e = f.failure(r);
    CHECK(e.code() == ErrorCode::invalid_argument);
    CHECK(std::string(e.what()).find("changed while corral copied the workspace") != std::string::npos);
  }
  SUBCASE("a listed file that went") {
    UploadRequest r;
    r.tree_root = f.tree.string();
    r.tree_files = {{"gone"}};
    const corral::Error e = f.failure(r);
    CHECK(std::string(e.what()).find("went while corral copied") != std::string::npos);
  }
}

TEST_CASE("a cancelled upload stops before the next batch of files") {
  CopyFixture f;
  std::vector<TreeFile> files;
  for (int i = 0; i < 10; ++i) files.push_back({"f" + std::to_string(i), false, false});
  for (const TreeFile& file : files) f.write(file.path, "x\n");
  f.fake.cancel();
  const corral::Error e = f.failure(f.request(files));
  CHECK(e.code() == ErrorCode::cancelled);
  CHECK(f.workspace_empty());
}

TEST_CASE("a tree of under two batches is split evenly between the two threads") {
  CopyFixture f;
  std::vector<TreeFile> files;
  for (int i = 0; i < 100; ++i) {
    files.push_back({"f" + std::to_string(100 + i), false, false});
    f.write(files.back().path, "same size\n");
  }
  const UploadRequest r = f.request(files);
  f.copy(r);
  // A report per batch: two halves (not 64 files and 36), or one batch of 64 and the rest
  // on a machine of one core, where one thread copies.
  const auto transfers = f.fake.transfers();
  const std::uint64_t per_file = r.size / files.size();
  const std::uint64_t first_batch = std::thread::hardware_concurrency() > 1 ? 50 : 64;
  REQUIRE(transfers.size() == 2);
  CHECK(transfers[0].first == first_batch * per_file);
  CHECK(transfers[1].first == r.size);
  for (const TreeFile& file : files) CHECK(read_file(f.workspace / file.path) == "same size\n");
}

TEST_CASE("a tree of many batches is copied by two threads: every file arrives; one bad file fails the copy") {
  CopyFixture f;
  std::vector<TreeFile> files;
  for (int i = 0; i < 300; ++i) {
    const std::string path = "d" + std::to_string(i % 7) + "/f" + std::to_string(i);
    f.write(path, "file " + std::to_string(i) + "\n");
    files.push_back({path, i % 2 == 0, false});
  }
  std::sort(files.begin(), files.end(), [](const TreeFile& a, const TreeFile& b) { return a.path < b.path; });
  SUBCASE("all of them") {
    const UploadRequest r = f.request(files);
    f.copy(r);
    for (const TreeFile& file : files) {
      const std::string number = file.path.substr(file.path.find("/f") + 2);
      CHECK_MESSAGE(read_file(f.workspace / file.path) == "file " + number + "\n", file.path);
      CHECK(((lstat_of(f.workspace / file.path).st_mode & 0100) != 0) == file.executable);
    }
    const auto transfers = f.fake.transfers();
    CHECK(transfers.back() == std::make_pair(r.size, r.size));
    // Two threads report, and the bytes never go back.
    for (size_t i = 1; i < transfers.size(); ++i) CHECK(transfers[i].first >= transfers[i - 1].first);
  }
  SUBCASE("one of them became a FIFO") {
    const std::string bad = files[200].path;
    fs::remove(f.tree / bad);
    REQUIRE(::mkfifo((f.tree / bad).c_str(), 0644) == 0);
    UploadRequest r;
    r.tree_root = f.tree.string();
    r.tree_files = files;
    const corral::Error e = f.failure(r);
    CHECK(std::string(e.what()).find(bad) != std::string::npos);
  }
}

TEST_CASE("Ctrl-C while a big file is copied stops the copy within a piece, and leaves no half of it") {
  CopyFixture f;
  const std::string big = corral::test::random_bytes(5 * corral::local::kCopyPiece);
  f.write("big.bin", big);
  f.fake.cancel_after(1);  // the batch goes ahead; the copy's first question is the Ctrl-C
  const corral::Error e = f.failure(f.request({{"big.bin"}}));
  CHECK(e.code() == ErrorCode::cancelled);
  CHECK_FALSE(fs::exists(f.workspace / "big.bin"));
}

TEST_CASE("as an unprivileged user: the caller's own files, copied as the caller") {
  const std::string report = corral::test::in_child([] {
    if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
                             ::setresuid(65534, 65534, 65534) != 0))
      return std::string("cannot drop root");
    char base[] = "/tmp/corral-copy-XXXXXX";
    if (!::mkdtemp(base)) return std::string("no temp folder");
    const fs::path tree = fs::path(base) / "tree", workspace = fs::path(base) / "workspace";
    fs::create_directories(tree / "sub");
    fs::create_directories(workspace);
    std::string result;
    try {
      {
        std::FILE* file = std::fopen((tree / "sub/run.sh").c_str(), "w");
        std::fputs("#!/bin/sh\n", file);
        std::fclose(file);
      }
      UploadRequest r;
      r.tree_root = tree.string();
      r.tree_files = {{"sub/run.sh", true}};
      FakeHost fake;
      copy_workspace(r, workspace, std::nullopt, fake.host());
      struct stat st {};
      ::stat((workspace / "sub/run.sh").c_str(), &st);
      result = read_file(workspace / "sub/run.sh") + "mode " + std::to_string(st.st_mode & 07777) +
               (st.st_uid == ::geteuid() ? " mine" : " not mine");
    } catch (const corral::Error& e) {
      result = std::string("failed: ") + e.what();
    }
    std::error_code ec;
    fs::remove_all(base, ec);
    return result;
  });
  CHECK(report == "#!/bin/sh\nmode 493 mine");  // 0755
}
