// The plugin author's documentation says what corral/primitives.def declares: the feature
// table of docs/plugin-authoring.md lists every feature with exactly its primitives, the
// required primitives are the .def's, every primitive's contract is written down, and the
// registry examples' call-timeout comments exempt exactly the unbounded primitives.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "corral/features.hpp"

namespace fs = std::filesystem;
using namespace corral;

namespace {

const fs::path kSource = CORRAL_SOURCE_DIR;

// The part of `text` from the line starting with `from` up to the line starting with
// `to` (or the end).
std::string section(const std::string& text, const std::string& from, const std::string& to) {
  const size_t begin = text.find("\n" + from);
  REQUIRE_MESSAGE(begin != std::string::npos, "no line starts with \"", from, "\"");
  const size_t end = text.find("\n" + to, begin + 1);
  return text.substr(begin + 1, end == std::string::npos ? std::string::npos : end - begin - 1);
}

// The `backticked` words of `text`, leaving out any in parentheses.
std::set<std::string> backticked(std::string text) {
  text = std::regex_replace(text, std::regex(R"(\([^)]*\))"), "");
  static const std::regex word("`([a-z-]+)`");
  std::set<std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), word), end; it != end; ++it) out.insert((*it)[1].str());
  return out;
}

// The cells of a Markdown table row.
std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::stringstream in(row.substr(1));
  for (std::string cell; std::getline(in, cell, '|');) out.push_back(cell);
  return out;
}

// "`a`, `b`", or "none".
std::string listed(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "`" : ", `") + n + "`";
  return out.empty() ? "none" : out;
}

// The names of the primitives `pick` chooses.
std::set<std::string> primitive_names(bool (*pick)(const PrimitiveInfo&)) {
  std::set<std::string> out;
  for (const PrimitiveInfo& p : kPrimitives)
    if (pick(p)) out.insert(p.name);
  return out;
}

const std::string kAuthoring = test::read_file(kSource / "docs" / "plugin-authoring.md");

}  // namespace

TEST_CASE("the feature table of docs/plugin-authoring.md lists each feature of primitives.def with its primitives") {
  const std::string part = section(kAuthoring, "## Primitives and features", "The contract of each primitive");
  std::map<std::string, std::set<std::string>> documented;
  std::istringstream lines(part);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    const std::vector<std::string> row = cells(line);
    REQUIRE(row.size() >= 2);
    const std::set<std::string> feature = backticked(row[0]);
    REQUIRE_MESSAGE(feature.size() == 1, line);
    CHECK_MESSAGE(documented.emplace(*feature.begin(), backticked(row[1])).second, "listed twice: ", line);
  }
  for (Feature f : kAllFeatures) {
    std::set<std::string> declared;
    for (Primitive p : required_primitives(f)) declared.insert(primitive_name(p));
    const std::string feature(to_string(f));
    const auto row = documented.find(feature);
    if (row == documented.end()) {
      FAIL_CHECK("the table has no row for feature '", feature, "'");
      continue;
    }
    CHECK_MESSAGE(row->second == declared, "feature '", feature, "': the table says ", listed(row->second),
                  ", primitives.def ", listed(declared));
    documented.erase(row);
  }
  for (const auto& row : documented) FAIL_CHECK("the table has a row for '", row.first, "', which is no feature");
}

TEST_CASE("docs/plugin-authoring.md names the required primitives and gives the contract of every primitive") {
  const std::string part = section(kAuthoring, "## Primitives and features", "**Lifetime.**");
  const std::string first = part.substr(0, part.find(" are required"));
  CHECK(backticked(first.substr(first.find('\n') + 1)) == primitive_names([](const PrimitiveInfo& p) {
          return p.required;
        }));
  const std::string contract = section(kAuthoring, "The contract of each primitive", "**Lifetime.**");
  for (const PrimitiveInfo& p : kPrimitives)
    CHECK_MESSAGE(std::regex_search(contract, std::regex(std::string("`[^`]*\\b") + p.name + "\\(")),
                  "no `... ", std::string(p.name), "(...)` in the contract of each primitive");
}

TEST_CASE("the docs' call-timeout comments exempt exactly the primitives primitives.def leaves unbounded") {
  const std::set<std::string> unbounded = primitive_names([](const PrimitiveInfo& p) { return !p.call_timeout; });
  int comments = 0;
  for (const char* doc : {"README.md", "docs/plugin-authoring.md"}) {
    std::istringstream lines(test::read_file(kSource / doc));
    for (std::string line; std::getline(lines, line);) {
      const size_t key = line.find("call-timeout: ");
      if (key == std::string::npos || line.find('#', key) == std::string::npos) continue;
      ++comments;
      const std::string comment = line.substr(line.find('#', key));
      std::set<std::string> named;
      for (const PrimitiveInfo& p : kPrimitives)
        if (std::regex_search(comment, std::regex(std::string("\\b") + p.name + "\\b"))) named.insert(p.name);
      CHECK_MESSAGE(named == unbounded, std::string(doc), ": ", line);
    }
  }
  CHECK(comments == 2);
}
