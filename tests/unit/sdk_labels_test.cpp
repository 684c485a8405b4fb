// The SDK's label store for folder-based providers: every label corral can send comes back
// as it was, the write replaces the file whole, and a broken file is an error naming it.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "cli.hpp"
#include "corral/sdk/labels.hpp"

namespace fs = std::filesystem;
using namespace corral;
using corral::test::TempDir;

TEST_CASE("labels with newlines, '=', NUL, quotes and any UTF-8 round-trip through a sandbox's folder") {
  TempDir dir;
  const StringMap labels = {
      {"corral-lease", "abc123"},
      {"multi\nline key", "first line\nsecond=line\n"},
      {"a=b", "c=d"},
      {std::string("nul\0key", 7), std::string("nul\0value", 9)},
      {"quote\"back\\slash", "{\"json\": [1]}"},
      {"ünïcode ✓", "値\r\t"},
      {"empty", ""},
  };
  sdk::write_labels(dir.path(), labels);
  CHECK(sdk::read_labels(dir.path()) == labels);
  // The key=value lines the examples once wrote would have made two labels of this one.
  CHECK(sdk::read_labels(dir.path()).count("second") == 0);
  struct stat st {};
  REQUIRE(::stat(sdk::labels_file(dir.path()).c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
}

TEST_CASE("writing labels replaces the file whole and leaves no temporary file") {
  TempDir dir;
  sdk::write_labels(dir.path(), {{"old", "1"}, {"kept", "x"}});
  sdk::write_labels(dir.path(), {{"kept", "y"}});
  CHECK(sdk::read_labels(dir.path()) == StringMap{{"kept", "y"}});
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path())) names.push_back(e.path().filename().string());
  CHECK(names == std::vector<std::string>{"labels.json"});
}

TEST_CASE("a folder without labels has none; a broken label file is an error naming it") {
  TempDir dir;
  CHECK(sdk::read_labels(dir.path()).empty());
  for (const std::string text : {"corral-lease=abc\n", "[\"labels\"]", "{\"labels\": {\"a\": 1}}"}) {
    CAPTURE(text);
    dir.write("labels.json", text);
    try {
      sdk::read_labels(dir.path());
      FAIL("a broken label file was read");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::internal);
      CHECK(std::string(e.what()).find(sdk::labels_file(dir.path()).string()) != std::string::npos);
      CHECK(std::string(e.what()).find(" are corrupt: ") != std::string::npos);
    }
  }
  // Writing into a folder that does not exist says which file could not be written.
  try {
    sdk::write_labels(dir.path() / "gone", {{"a", "b"}});
    FAIL("labels were written into a missing folder");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find((dir.path() / "gone" / "labels.json").string()) != std::string::npos);
  }
}
