// docs/reliability.md claims only what a test proves: every row of its fault tables names
// a test file and TEST_CASE (or SUBCASE) that exist, so a renamed or deleted test cannot
// leave a row that cites nothing.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kSource = CORRAL_SOURCE_DIR;

// Returns the whole file at `path`.
std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The tests' C++ sources, as paths relative to tests/.
std::vector<std::string> test_sources() {
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(kSource / "tests"))
    if (entry.is_regular_file() && entry.path().extension() == ".cpp")
      files.push_back(entry.path().lexically_relative(kSource / "tests").generic_string());
  return files;
}

// Every TEST_CASE, TEST_CASE_FIXTURE and SUBCASE name in `files`, unescaped.
std::set<std::string> test_names(const std::vector<std::string>& files) {
  static const std::regex declaration(R"re((?:TEST_CASE|SUBCASE)\s*\(\s*"((?:[^"\\]|\\.)*)")re");
  static const std::regex fixture(R"re(TEST_CASE_FIXTURE\s*\([^,]*,\s*"((?:[^"\\]|\\.)*)")re");
  std::set<std::string> names;
  for (const std::string& file : files) {
    const std::string text = slurp(kSource / "tests" / file);
    for (const std::regex* pattern : {&declaration, &fixture})
      for (std::sregex_iterator it(text.begin(), text.end(), *pattern), end; it != end; ++it)
        names.insert(std::regex_replace((*it)[1].str(), std::regex(R"(\\(.))"), "$1"));
  }
  return names;
}

// The last cell of a Markdown table row: where a row cites its test.
std::string last_cell(const std::string& row) {
  const size_t end = row.find_last_of('|');
  const size_t begin = row.find_last_of('|', end - 1);
  return row.substr(begin + 1, end - begin - 1);
}

// Whether the relative path `file` ends with the whole path components of `tail`.
bool ends_with_path(const std::string& file, const std::string& tail) {
  return file.size() > tail.size() && file.compare(file.size() - tail.size(), tail.size(), tail) == 0 &&
         file[file.size() - tail.size() - 1] == '/';
}

// Whether `cited` names a test: exactly, or as a prefix when the doc shortened it with "…".
bool names_a_test(const std::string& cited, const std::set<std::string>& names) {
  const std::string ellipsis = "…";
  if (cited.size() < ellipsis.size() || cited.compare(cited.size() - ellipsis.size(), ellipsis.size(), ellipsis) != 0)
    return names.count(cited) > 0;
  std::string prefix = cited.substr(0, cited.size() - ellipsis.size());
  while (!prefix.empty() && (prefix.back() == ' ' || prefix.back() == ';')) prefix.pop_back();
  for (const std::string& name : names)
    if (name.compare(0, prefix.size(), prefix) == 0) return true;
  return false;
}

}  // namespace

TEST_CASE("every row of docs/reliability.md cites a test file and test names that exist") {
  const std::vector<std::string> files = test_sources();
  const std::set<std::string> names = test_names(files);
  REQUIRE(names.size() > 100);  // the sources were found and parsed

  static const std::regex row_id(R"(^\| ([A-Z]+[0-9]+) \|)");
  static const std::regex file_ref(R"(([A-Za-z0-9_./-]+\.cpp))");
  static const std::regex quoted(R"re("([^"]+)")re");
  std::istringstream doc(slurp(kSource / "docs" / "reliability.md"));
  int rows = 0;
  for (std::string line; std::getline(doc, line);) {
    std::smatch id;
    if (!std::regex_search(line, id, row_id)) continue;
    ++rows;
    const std::string cell = last_cell(line);
    INFO("row ", id[1].str(), ": ", cell);
    const bool refers_back = cell.find("same TEST_CASE") != std::string::npos;
    CHECK_MESSAGE((refers_back || std::regex_search(cell, file_ref)), "the row cites no test file");
    for (std::sregex_iterator it(cell.begin(), cell.end(), file_ref), end; it != end; ++it) {
      const std::string cited = (*it)[1].str();
      bool found = false;
      for (const std::string& file : files) found = found || file == cited || ends_with_path(file, cited);
      CHECK_MESSAGE(found, "no tests/**/", cited);
    }
    for (std::sregex_iterator it(cell.begin(), cell.end(), quoted), end; it != end; ++it)
      CHECK_MESSAGE(names_a_test((*it)[1].str(), names), "no TEST_CASE or SUBCASE is named \"", (*it)[1].str(), "\"");
  }
  CHECK(rows > 50);
}
