// Results back: the pattern checks, the packing script the providers run in a sandbox,
// the size-bounded archive file, and the unpacking of hostile archives.
#include <archive.h>
#include <archive_entry.h>
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <sstream>

#include "cli.hpp"
#include "corral/sdk/download.hpp"
#include "corral/os/process.hpp"
#include "workspace/downloads.hpp"
#include "link_escape.hpp"

namespace fs = std::filesystem;
using corral::test::TempDir;
using corral::test::read_file;

namespace {

struct Entry {
  std::string name;
  std::string content;         // for files
  mode_t type = AE_IFREG;
  std::string link;            // symlink target, or hard link target when `hard`
  bool hard = false;
};

// Writes `entries` as a .tar.gz at `path`, exactly as given (no name cleaning).
void write_tar(const fs::path& path, const std::vector<Entry>& entries) {
  std::unique_ptr<archive, decltype(&archive_write_free)> a(archive_write_new(), archive_write_free);
  archive_write_set_format_pax_restricted(a.get());
  archive_write_add_filter_gzip(a.get());
  REQUIRE(archive_write_open_filename(a.get(), path.c_str()) == ARCHIVE_OK);
  for (const Entry& e : entries) {
    std::unique_ptr<archive_entry, decltype(&archive_entry_free)> entry(archive_entry_new(), archive_entry_free);
    archive_entry_set_pathname(entry.get(), e.name.c_str());
    archive_entry_set_filetype(entry.get(), e.type);
    archive_entry_set_perm(entry.get(), e.type == AE_IFDIR ? 0755 : 06755);  // setuid bits must not survive
    if (e.hard) archive_entry_set_hardlink(entry.get(), e.link.c_str());
    else if (e.type == AE_IFLNK) archive_entry_set_symlink(entry.get(), e.link.c_str());
    archive_entry_set_size(entry.get(), e.type == AE_IFREG && !e.hard ? static_cast<la_int64_t>(e.content.size()) : 0);
    REQUIRE(archive_write_header(a.get(), entry.get()) == ARCHIVE_OK);
    if (e.type == AE_IFREG && !e.hard && !e.content.empty())
      REQUIRE(archive_write_data(a.get(), e.content.data(), e.content.size()) == static_cast<la_ssize_t>(e.content.size()));
  }
  REQUIRE(archive_write_close(a.get()) == ARCHIVE_OK);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool refused_mentions(const corral::UnpackedDownload& d, const std::string& name) {
  for (const std::string& r : d.refused)
    if (r.rfind(name + ":", 0) == 0) return true;
  return false;
}

}  // namespace

TEST_CASE("download patterns: relative globs pass, escapes and junk are refused before anything runs") {
  CHECK_NOTHROW(corral::check_download_patterns({"reports/*.xml", "out", "a b/c?.txt", "./x"}));
  for (const std::string& bad :
       std::vector<std::string>{"", "/etc/passwd", "../up", "a/../../b", "a/..", "a\nb", "t\x01"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(corral::check_download_patterns({bad}), corral::Error);
  }
  std::vector<std::string> many(65, "x");
  CHECK_THROWS_AS(corral::check_download_patterns(many), corral::Error);
}

TEST_CASE("unpacking keeps files, folders and inside links, and refuses every way out") {
  TempDir tmp;
  fs::path tar = tmp.path() / "d.tar.gz";
  std::string binary("\x00\x01\xff\x7f zero\x00", 10);
  write_tar(tar, {{"./out", "", AE_IFDIR},
                  {"./out/report.xml", "<ok/>"},
                  {"./out/bin", binary},
                  {"./out/same.xml", "", AE_IFLNK, "report.xml"},
                  {"./out/up.xml", "", AE_IFLNK, "../out/report.xml"},
                  {"./out/abs", "", AE_IFLNK, "/etc/passwd"},
                  {"./out/climb", "", AE_IFLNK, "../../../etc"},
                  {"/etc/corral-pwned", "x"},
                  {"../corral-pwned", "x"},
                  {"out/../../corral-pwned", "x"},
                  {"./out/hard", "", AE_IFREG, "/etc/passwd", true},
                  {"./out/fifo", "", AE_IFIFO},
                  {"./out/dir-link", "", AE_IFLNK, "."},
                  {"./out/dir-link/through.txt", "written through a link"}});
  fs::path dir = tmp.path() / "dl";
  corral::UnpackedDownload d = corral::unpack_download(tar, {dir}, 1 << 20, {});
  CHECK(slurp(dir / "out/report.xml") == "<ok/>");
  CHECK(slurp(dir / "out/bin") == binary);
  CHECK(fs::read_symlink(dir / "out/same.xml") == "report.xml");
  CHECK(fs::read_symlink(dir / "out/up.xml") == "../out/report.xml");
  struct stat st {};
  REQUIRE(::stat((dir / "out/report.xml").c_str(), &st) == 0);
  CHECK((st.st_mode & (S_ISUID | S_ISGID)) == 0);
  CHECK(d.bytes == 5 + binary.size());
  for (const char* name : {"out/abs", "out/climb", "/etc/corral-pwned", "../corral-pwned", "out/../../corral-pwned",
                           "out/hard", "out/fifo", "out/dir-link/through.txt"}) {
    CAPTURE(name);
    CHECK(refused_mentions(d, name));
  }
  CHECK(!fs::exists("/etc/corral-pwned"));
  CHECK(!fs::exists(tmp.path() / "corral-pwned"));
  CHECK(!fs::exists(dir / "out/abs"));
  CHECK(!fs::exists(dir / "out/hard"));
  CHECK(std::find(d.files.begin(), d.files.end(), "out/report.xml") != d.files.end());
}

TEST_CASE("unpacking stops at the size bound however well the archive compresses") {
  TempDir tmp;
  fs::path tar = tmp.path() / "bomb.tar.gz";
  write_tar(tar, {{"small", "ok"}, {"zeros", std::string(8 << 20, '\0')}});
  CHECK(fs::file_size(tar) < (64 << 10));  // a few KiB that unpack to 8 MiB
  fs::path dir = tmp.path() / "dl";
  try {
    corral::unpack_download(tar, {dir}, 1 << 20, {});
    FAIL("a download past the bound was unpacked");
  } catch (const corral::Error& e) {
    CHECK(e.code() == corral::ErrorCode::invalid_argument);
    CHECK(std::string(e.what()).find("--max-download") != std::string::npos);
  }
  CHECK(slurp(dir / "small") == "ok");
  CHECK(!fs::exists(dir / "zeros"));
}

TEST_CASE("a damaged archive is a clear error, and cancelling stops the unpacking") {
  TempDir tmp;
  fs::path tar = tmp.path() / "d.tar.gz";
  write_tar(tar, {{"a", std::string(200000, 'a')}});
  std::string bytes = slurp(tar);
  std::ofstream(tmp.path() / "cut.tar.gz", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  CHECK_THROWS_AS(corral::unpack_download(tmp.path() / "cut.tar.gz", {tmp.path() / "d1"}, 1 << 20, {}), corral::Error);
  try {
    corral::unpack_download(tar, {tmp.path() / "d2"}, 1 << 20, [] { return true; });
    FAIL("not cancelled");
  } catch (const corral::Error& e) {
    CHECK(e.code() == corral::ErrorCode::cancelled);
  }
}

TEST_CASE("the packing script expands globs in the folder, reports misses, and keeps odd names intact") {
  TempDir tmp;
  tmp.write("work/reports/a.xml", "A");
  tmp.write("work/reports/b c.xml", "B");
  tmp.write("work/-rf", "dash");
  tmp.write("work/it's $HOME.txt", "Q");
  tmp.write("work/reports/skip.txt", "no");
  fs::path out = tmp.path() / "out.tar.gz";
  corral::os::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c",
               corral::sdk::download_script((tmp.path() / "work").string(),
                                            {"reports/*.xml", "-rf", "it's $HOME.txt", "missing/*", "none"},
                                            out.string())};
  auto p = corral::os::capture_process(spec, 30);
  corral::sdk::DownloadReport report = corral::sdk::read_download_report(p.exit_code, p.err);
  CHECK(!report.nothing_matched);
  CHECK(report.missing == std::vector<std::string>{"missing/*", "none"});
  corral::UnpackedDownload d = corral::unpack_download(out, {tmp.path() / "dl"}, 1 << 20, {});
  CHECK(slurp(tmp.path() / "dl/reports/a.xml") == "A");
  CHECK(slurp(tmp.path() / "dl/reports/b c.xml") == "B");
  CHECK(slurp(tmp.path() / "dl/-rf") == "dash");
  CHECK(slurp(tmp.path() / "dl/it's $HOME.txt") == "Q");
  CHECK(!fs::exists(tmp.path() / "dl/reports/skip.txt"));

  spec.argv = {"/bin/sh", "-c", corral::sdk::download_script((tmp.path() / "work").string(), {"nope*"}, "-")};
  p = corral::os::capture_process(spec, 30);
  report = corral::sdk::read_download_report(p.exit_code, p.err);
  CHECK(report.nothing_matched);
  CHECK(p.out.empty());

  spec.argv = {"/bin/sh", "-c", corral::sdk::download_script((tmp.path() / "gone").string(), {"x"}, "-")};
  p = corral::os::capture_process(spec, 30);
  CHECK_THROWS_AS(corral::sdk::read_download_report(p.exit_code, p.err), corral::Error);
}

namespace {

// `a/b/.../` with `depth` folders named x1..x<depth>.
std::string deep_folders(int depth) {
  std::string out;
  for (int i = 1; i <= depth; ++i) out += "x" + std::to_string(i) + "/";
  return out;
}

std::string ups(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += "../";
  return out;
}

}  // namespace

TEST_CASE("download patterns: a part whose glob can match '..' is refused, whatever the shell") {
  // '*', '?' and a class first never match a leading dot in a POSIX shell; a literal dot,
  // an escaped one or a class that holds one can.
  CHECK_NOTHROW(corral::check_download_patterns(
      {"*", "?", "*.xml", "reports/*", ".hidden", "x/.cache/*", ".[!.]*", "?.", "**/x", "a.[ch]"}));
  for (const std::string& bad : std::vector<std::string>{".[.]", ".?", "[.][.]", ".*", "a/.*/b", "\\.\\.", ".[!a]",
                                                         "[.]?", ".[[:punct:]]", "x/.*"}) {
    CAPTURE(bad);
    try {
      corral::check_download_patterns({bad});
      FAIL("not refused");
    } catch (const corral::Error& e) {
      CHECK(e.code() == corral::ErrorCode::invalid_argument);
      CHECK(std::string(e.what()).find("'..'") != std::string::npos);
      CHECK(e.hint().find(".[!.]*") != std::string::npos);
    }
  }
  // A class git cannot read is refused with how to write it, not passed to the shell.
  CHECK_THROWS_AS(corral::check_download_patterns({"report[1"}), corral::Error);
}

TEST_CASE("a chain of links that stays inside by its text but leads out through another link is refused") {
  // x1/.../x20/s climbs back to the folder itself: inside. c and d go through s and then
  // climb 21 folders: out to /etc/passwd and to /, though their text alone stays inside.
  const std::string deep = deep_folders(20);
  const Entry s{deep + "s", "", AE_IFLNK, ups(20)};
  const Entry c{"c", "", AE_IFLNK, deep + "s/" + ups(21) + "etc/passwd"};
  const Entry d{"d", "", AE_IFLNK, deep + "s/" + ups(21)};
  for (bool links_first : {true, false}) {
    CAPTURE(links_first);
    TempDir tmp;
    fs::path tar = tmp.path() / "chain.tar.gz";
    write_tar(tar, links_first ? std::vector<Entry>{s, c, d} : std::vector<Entry>{c, d, s});
    fs::path dir = tmp.path() / "dl";
    corral::UnpackedDownload got = corral::unpack_download(tar, {dir}, 1 << 20, {});
    CHECK(refused_mentions(got, "c"));
    CHECK(refused_mentions(got, "d"));
    CHECK(!fs::exists(fs::symlink_status(dir / "c")));
    CHECK(!fs::exists(fs::symlink_status(dir / "d")));
    CHECK(fs::read_symlink(dir / (deep + "s")) == ups(20));  // inside: kept
    CHECK(corral::test::link_leading_out(dir) == fs::path());
  }
}

TEST_CASE("a link is judged through the links already in the folder, and never written through one") {
  TempDir tmp;
  fs::path dir = tmp.path() / "dl";
  fs::create_directories(dir);
  fs::create_symlink("/etc", dir / "etc-link");  // left by someone else: not corral's to judge
  tmp.write("outside/secret", "s");
  fs::create_symlink("../outside", dir / "up");
  fs::path tar = tmp.path() / "d.tar.gz";
  write_tar(tar, {{"passwd", "", AE_IFLNK, "etc-link/passwd"},
                  {"secret", "", AE_IFLNK, "up/secret"},
                  {"up/planted", "written through a link"},
                  {"ok", "", AE_IFLNK, "real/file"},
                  {"real/file", "f"}});
  corral::UnpackedDownload got = corral::unpack_download(tar, {dir}, 1 << 20, {});
  CHECK(refused_mentions(got, "passwd"));
  CHECK(refused_mentions(got, "secret"));
  CHECK(refused_mentions(got, "up/planted"));
  CHECK(!fs::exists(tmp.path() / "outside/planted"));
  CHECK(read_file(dir / "ok") == "f");
}

TEST_CASE("a later entry never turns a folder already written into a link, nor writes through one") {
  TempDir tmp;
  fs::path tar = tmp.path() / "d.tar.gz";
  write_tar(tar, {{"a/b/keep.txt", "k"},
                  {"a/b", "", AE_IFLNK, "../.."},    // a folder already written there
                  {"a", "", AE_IFREG, "", false},    // a file over a folder
                  {"l", "", AE_IFLNK, "a"},
                  {"l/b/through.txt", "through"},     // the link came first: written through it
                  {"l", "", AE_IFLNK, "."}});          // a second entry of the same name
  fs::path dir = tmp.path() / "dl";
  corral::UnpackedDownload got = corral::unpack_download(tar, {dir}, 1 << 20, {});
  CHECK(refused_mentions(got, "a/b"));
  CHECK(refused_mentions(got, "a"));
  CHECK(refused_mentions(got, "l/b/through.txt"));
  CHECK(fs::is_directory(fs::symlink_status(dir / "a/b")));
  CHECK(read_file(dir / "a/b/keep.txt") == "k");
  CHECK(fs::read_symlink(dir / "l") == "a");
  CHECK(!fs::exists(dir / "a/b/through.txt"));
  CHECK(corral::test::link_leading_out(dir) == fs::path());
}

TEST_CASE("a link with '..' after a name is refused: a link made there later would turn it outward") {
  // Kept, "c" would follow "x/s" once a second download into the same folder made x/s a
  // link to the folder itself: judged alone, each would stay inside.
  TempDir tmp;
  fs::path dir = tmp.path() / "dl";
  fs::path first = tmp.path() / "1.tar.gz";
  write_tar(first, {{"c", "", AE_IFLNK, "x/s/../../etc"}, {"fine", "", AE_IFLNK, "../dl/x"}, {"x/", "", AE_IFDIR}});
  corral::UnpackedDownload one = corral::unpack_download(first, {dir}, 1 << 20, {});
  CHECK(refused_mentions(one, "c"));
  CHECK(refused_mentions(one, "fine"));  // climbs above its folder to come back
  fs::path second = tmp.path() / "2.tar.gz";
  write_tar(second, {{"x/s", "", AE_IFLNK, ".."}});
  corral::UnpackedDownload two = corral::unpack_download(second, {dir}, 1 << 20, {});
  CHECK(two.refused.empty());
  CHECK(corral::test::link_leading_out(dir) == fs::path());
}

TEST_CASE("hard links may only name a file already written inside, never a link") {
  TempDir tmp;
  fs::path tar = tmp.path() / "d.tar.gz";
  // a/b/s is inside from a/b ("../../f"), but the same link at the top climbs out.
  write_tar(tar, {{"f", "file"},
                  {"a/b/s", "", AE_IFLNK, "../../f"},
                  {"h", "", AE_IFREG, "a/b/s", true},
                  {"same", "", AE_IFREG, "f", true},
                  {"ahead", "", AE_IFREG, "later", true},
                  {"later", "l"},
                  {"l2", "", AE_IFLNK, "a"},
                  {"through", "", AE_IFREG, "l2/b/s", true}});
  fs::path dir = tmp.path() / "dl";
  corral::UnpackedDownload got = corral::unpack_download(tar, {dir}, 1 << 20, {});
  CHECK(refused_mentions(got, "h"));
  CHECK(refused_mentions(got, "ahead"));
  CHECK(refused_mentions(got, "through"));
  CHECK(!fs::exists(fs::symlink_status(dir / "h")));
  CHECK(read_file(dir / "same") == "file");
  CHECK(fs::equivalent(dir / "same", dir / "f"));
  CHECK(corral::test::link_leading_out(dir) == fs::path());
}

TEST_CASE("loops of links and chains deeper than the kernel follows are refused, and judging them ends") {
  std::vector<Entry> entries = {{"a", "", AE_IFLNK, "b"}, {"b", "", AE_IFLNK, "a"}, {"self", "", AE_IFLNK, "self/x"}};
  for (int i = 0; i < 50; ++i)
    entries.push_back({"l" + std::to_string(i), "", AE_IFLNK, "l" + std::to_string(i + 1)});
  entries.push_back({"l50", "end"});
  TempDir tmp;
  fs::path tar = tmp.path() / "d.tar.gz";
  write_tar(tar, entries);
  fs::path dir = tmp.path() / "dl";
  corral::UnpackedDownload got = corral::unpack_download(tar, {dir}, 1 << 20, {});
  CHECK(refused_mentions(got, "a"));
  CHECK(refused_mentions(got, "b"));
  CHECK(refused_mentions(got, "self"));
  CHECK(refused_mentions(got, "l0"));
  CHECK(fs::read_symlink(dir / "l49") == "l50");  // one step from the file: kept
  CHECK(read_file(dir / "l50") == "end");
}

TEST_CASE("the default download folder is never reached through a link the working tree holds") {
  TempDir tmp;
  fs::path ws = tmp.path() / "ws";
  fs::create_directories(ws);
  fs::create_directories(tmp.path() / "elsewhere");
  fs::path tar = tmp.path() / "d.tar.gz";
  write_tar(tar, {{"f", "f"}});
  SUBCASE(".corral is a link") { fs::create_symlink(tmp.path() / "elsewhere", ws / ".corral"); }
  SUBCASE(".corral/runs is a link") {
    fs::create_directories(ws / ".corral");
    fs::create_symlink(tmp.path() / "elsewhere", ws / ".corral/runs");
  }
  SUBCASE("the lease folder is a link") {
    fs::create_directories(ws / ".corral/runs");
    fs::create_symlink(tmp.path() / "elsewhere", ws / ".corral/runs/lease1");
  }
  SUBCASE(".corral/runs is a file") {
    tmp.write("ws/.corral/runs", "not a folder");
  }
  corral::DownloadFolder folder = corral::download_folder(ws, ws, "", "lease1");
  CHECK(folder.path() == ws / ".corral/runs/lease1");
  try {
    corral::check_download_folder(folder);
    FAIL("not refused before downloading");
  } catch (const corral::Error& e) {
    CHECK(e.code() == corral::ErrorCode::invalid_argument);
    CHECK(e.hint().find("remove") != std::string::npos);
  }
  CHECK_THROWS_AS(corral::unpack_download(tar, folder, 1 << 20, {}), corral::Error);
  CHECK(fs::is_empty(tmp.path() / "elsewhere"));
}

TEST_CASE("--download-dir: inside the working tree no link is followed, outside it the path is used as named") {
  TempDir tmp;
  fs::path ws = tmp.path() / "ws";
  fs::create_directories(ws / "sub");
  fs::create_directories(tmp.path() / "real");
  fs::create_symlink(tmp.path() / "real", ws / "results");
  fs::create_symlink(tmp.path() / "real", tmp.path() / "mine");
  fs::path tar = tmp.path() / "d.tar.gz";
  write_tar(tar, {{"f", "f"}});
  // From ws/sub, "../results" is the committed link: refused.
  corral::DownloadFolder committed = corral::download_folder(ws, ws / "sub", "../results", "lease1");
  CHECK_THROWS_AS(corral::check_download_folder(committed), corral::Error);
  CHECK_THROWS_AS(corral::unpack_download(tar, committed, 1 << 20, {}), corral::Error);
  CHECK(fs::is_empty(tmp.path() / "real"));
  // The user's own link, outside the tree, named on the command line: followed.
  corral::DownloadFolder named = corral::download_folder(ws, ws / "sub", (tmp.path() / "mine/out").string(), "lease1");
  CHECK_NOTHROW(corral::check_download_folder(named));
  corral::unpack_download(tar, named, 1 << 20, {});
  CHECK(read_file(tmp.path() / "real/out/f") == "f");
  // A plain folder in the tree is created as before.
  corral::DownloadFolder plain = corral::download_folder(ws, ws / "sub", "res/a", "lease1");
  corral::unpack_download(tar, plain, 1 << 20, {});
  CHECK(read_file(ws / "sub/res/a/f") == "f");
}
