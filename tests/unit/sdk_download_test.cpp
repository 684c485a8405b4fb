// The SDK's download helpers run for real: download_script under /bin/sh against files on
// disk, its report read back, and DownloadFile's size bound.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "corral/errors.hpp"
#include "corral/sdk/download.hpp"
#include "corral/sdk/process.hpp"

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
  sdk::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.cwd = cwd.string();
  sdk::CapturedProcess r = sdk::capture_process(spec, 30);
  return {r.exit_code, r.err};
}

std::string listing(const fs::path& archive) {
  sdk::ProcessSpec spec;
  spec.argv = {"tar", "-tzf", archive.string()};
  return sdk::capture_process(spec, 30).out;
}

}  // namespace

TEST_CASE("download_script: a relative archive is placed from where the shell started, even through a symlink") {
  Scratch s;
  s.write("real/ws/sub/report.xml", "<ok/>\n");
  fs::create_directories(s.root / "start");
  fs::create_directory_symlink(s.root / "real/ws", s.root / "link");
  // Reached through the symlink: a path relative to the folder would land elsewhere.
  std::string script = sdk::download_script("../link/sub", {"report.xml", "*.log"}, "out.tar.gz");
  auto [code, err] = sh(script, s.root / "start");
  INFO(err);
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
  CHECK(gone == 2);
  CHECK_THROWS_AS(sdk::read_download_report(gone, gone_err), Error);
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
