#include <archive.h>
#include <archive_entry.h>
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <map>
#include <memory>

#include "cli.hpp"
#include "corral/sdk/process.hpp"
#include "corral/types.hpp"
#include "workspace.hpp"

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
  auto p = corral::sdk::capture_process({args, std::nullopt, dir.string()});
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
