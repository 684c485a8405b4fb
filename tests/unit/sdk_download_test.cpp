// The SDK's download helpers run for real: download_script under /bin/sh against files on
// disk, its report read back, and DownloadFile's size bound.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "corral/errors.hpp"
#include "corral/sdk/download.hpp"
#include "corral/os/process.hpp"

namespace fs = std::filesystem;
using namespace corral;

namespace {

struct Scratch {
  fs::path root;
  Scratch() {
    std::string pattern = (fs::temp_directory_path() / "corral-dl-test-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    root = pattern;
  }
  ~Scratch() { fs::remove_all(root); }
  void write(const std::string& relative, const std::string& content) const {
    fs::create_directories((root / relative).parent_path());
    std::ofstream(root / relative, std::ios::binary) << content;
  }
};

// Runs `script` with /bin/sh in `cwd`; returns the exit code and stderr.
std::pair<int, std::string> sh(const std::string& script, const fs::path& cwd) {
  os::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.cwd = cwd.string();
  os::CapturedProcess r = os::capture_process(spec, 30);
  return {r.exit_code, r.err};
}

std::string listing(const fs::path& archive) {
  os::ProcessSpec spec;
  spec.argv = {"tar", "--quoting-style=literal", "-tzf", archive.string()};
  return os::capture_process(spec, 30).out;
}

}  // namespace

TEST_CASE("download_script: a relative archive is placed from where the shell started, even through a symlink") {
  Scratch s;
  s.write("real/ws/sub/report.xml", "<ok/>\n");
  fs::create_directories(s.root / "start");
  fs::create_directory_symlink(s.root / "real/ws", s.root / "link");
  // Reached through the symlink: a path relative to the folder would land elsewhere.
  std::string script = sdk::download_script("../link/sub", {"report.xml", "*.log"}, "out.tar.gz");
  const auto [code, err] = sh(script, s.root / "start");
  const std::string& shown = err;  // INFO captures by reference, which clang 14 refuses for a binding
  INFO(shown);
  REQUIRE(code == 0);
  CHECK(fs::exists(s.root / "start/out.tar.gz"));
  CHECK(listing(s.root / "start/out.tar.gz") == "./report.xml\n");
  sdk::DownloadReport report = sdk::read_download_report(code, err);
  CHECK_FALSE(report.nothing_matched);
  CHECK(report.missing == std::vector<std::string>{"*.log"});
}

TEST_CASE("download_script: nothing matched and a missing folder have their own exit codes") {
  Scratch s;
  s.write("ws/a.txt", "a\n");
  auto [none, none_err] = sh(sdk::download_script("ws", {"*.xml"}, (s.root / "o.tgz").string()), s.root);
  CHECK(none == sdk::kDownloadNothingMatched);
  CHECK_FALSE(fs::exists(s.root / "o.tgz"));
  sdk::DownloadReport report = sdk::read_download_report(none, none_err);
  CHECK(report.nothing_matched);
  CHECK(report.missing == std::vector<std::string>{"*.xml"});
  auto [gone, gone_err] = sh(sdk::download_script("nowhere", {"*"}, "o.tgz"), s.root);
  CHECK(gone == sdk::kDownloadNoFolder);
  try {
    sdk::read_download_report(gone, gone_err);
    FAIL("a missing folder is no report");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::not_found);
  }
  // tar's own failure (2) is tar's, never taken for the folder's absence.
  try {
    sdk::read_download_report(2, "tar: ./x: Cannot stat: No such file or directory\n");
    FAIL("tar's failure is no report");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::unavailable);
    CHECK(std::string(e.what()).find("Cannot stat") != std::string::npos);
  }
}

TEST_CASE("download_script: a name with a backslash, a newline or a dash comes back as it is") {
  Scratch s;
  s.write("ws/a\\b.xml", "backslash\n");
  s.write("ws/line\nbreak.xml", "newline\n");
  s.write("ws/-dash.xml", "dash\n");
  auto [code, err] = sh(sdk::download_script("ws", {"*.xml"}, (s.root / "o.tgz").string()), s.root);
  const std::string& shown = err;
  INFO(shown);
  REQUIRE(code == 0);
  const std::string names = listing(s.root / "o.tgz");
  CHECK(names.find("./a\\b.xml") != std::string::npos);
  CHECK(names.find("./-dash.xml") != std::string::npos);
}

TEST_CASE("the download bound is shown in the unit it was given") {
  Scratch s;
  DownloadRequest r;
  r.archive_path = (s.root / "a.tar.gz").string();
  r.max_bytes = 100;
  sdk::DownloadFile file(r);
  try {
    file.write(std::string(101, 'x'));
    FAIL("no error past the bound");
  } catch (const Error& e) {
    CHECK_MESSAGE(std::string(e.what()).find("size bound of 100 B") != std::string::npos, e.what());
  }
}

TEST_CASE("DownloadFile refuses to grow past its bound") {
  Scratch s;
  DownloadRequest r;
  r.archive_path = (s.root / "a.tar.gz").string();
  r.max_bytes = 10;
  sdk::DownloadFile file(r);
  file.write("0123456789");
  try {
    file.write("x");
    FAIL("no error past the bound");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::invalid_argument);
    CHECK(std::string(e.what()).find("--max-download") != std::string::npos);
  }
  DownloadResult done = file.finish({"p"});
  CHECK(done.size == 10);
  CHECK(fs::file_size(r.archive_path) == 10);
}

TEST_CASE("download_through_archive: packs for real, fetches into the bounded file, removes the sandbox's copy") {
  Scratch s;
  s.write("sandbox/ws/r.xml", "<r/>");
  const fs::path sandbox_archive = s.root / "sandbox/a.tgz";
  int removed = 0, fetched = 0;
  sdk::RemoteArchive remote;  // a "sandbox" that is a folder here, its file API a plain read
  remote.pack = [&](const std::string& script, const std::function<void(std::string_view)>& on_stderr) {
    auto [code, err] = sh(script, s.root / "sandbox");
    on_stderr(err);
    return code;
  };
  remote.fetch = [&](const std::function<void(std::string_view)>& sink) {
    ++fetched;
    std::ifstream in(sandbox_archive, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    sink(bytes);
  };
  remote.remove = [&] {
    ++removed;
    fs::remove(sandbox_archive);
  };
  DownloadRequest r;
  r.archive_path = (s.root / "local.tgz").string();
  r.max_bytes = 1 << 20;
  r.patterns = {"*.xml", "*.log"};

  DownloadResult got = sdk::download_through_archive(r, "ws", sandbox_archive.string(), remote);
  CHECK(got.size == fs::file_size(r.archive_path));
  CHECK(got.missing == std::vector<std::string>{"*.log"});
  CHECK(listing(r.archive_path).find("r.xml") != std::string::npos);
  CHECK(removed == 1);
  CHECK_FALSE(fs::exists(sandbox_archive));

  SUBCASE("nothing matched: no fetch") {
    r.patterns = {"*.none"};
    CHECK(sdk::download_through_archive(r, "ws", sandbox_archive.string(), remote).size == 0);
    CHECK(fetched == 1);
  }
  SUBCASE("past the bound: the error, and the sandbox's copy still removed") {
    r.max_bytes = 10;
    CHECK_THROWS_AS(sdk::download_through_archive(r, "ws", sandbox_archive.string(), remote), Error);
    CHECK(removed == 2);
  }
  SUBCASE("a vanished sandbox: nothing to remove") {
    remote.pack = [](const std::string&, const std::function<void(std::string_view)>&) -> int {
      throw Error(ErrorCode::not_found, "gone");
    };
    CHECK_THROWS_AS(sdk::download_through_archive(r, "ws", sandbox_archive.string(), remote), Error);
    CHECK(removed == 1);
  }
}
