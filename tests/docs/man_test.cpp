// The man pages the build writes into build/share/man: one per command, each listing the
// options `corral <command> --help` lists with the same descriptions (so neither can drift
// from the other), corral-plugin(7) from the authoring guide, and every page rendering
// without a warning. Also the completion scripts the build writes beside them.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli.hpp"
#include "command.hpp"
#include "corral/os/process.hpp"

namespace fs = std::filesystem;
using corral::test::CliEnv;
using corral::test::read_file;
using Options = std::map<std::string, std::string>;  // each flag and its description

namespace {

const fs::path kShare = CORRAL_SHARE_DIR;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string trim(std::string s) {
  s.erase(0, s.find_first_not_of(' '));
  s.erase(s.find_last_not_of(' ') + 1);
  return s;
}

// The flags ("-h", "--help") at the start of an option's tag or help line.
std::vector<std::string> flags_in(const std::string& names) {
  std::vector<std::string> flags;
  std::string word;
  std::istringstream in(names);
  while (in >> word) {
    if (word[0] != '-') break;
    std::istringstream parts(word);
    for (std::string part; std::getline(parts, part, ',');)
      if (!part.empty()) flags.push_back(part);
    if (word.back() != ',') break;
  }
  return flags;
}

// The options --help lists: "  -h,--help   Print this help message and exit", the
// description on the next line when the names fill their column.
Options help_options(const std::string& help) {
  Options options;
  bool in_options = false;
  const std::vector<std::string> lines = lines_of(help);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line == "Options:") in_options = true;
    if (line.empty() || line[0] != ' ') {
      if (line != "Options:") in_options = false;
      continue;
    }
    const std::string text = trim(line);
    if (!in_options || text[0] != '-') continue;
    const size_t gap = text.find("  ");
    std::string description = gap == std::string::npos ? "" : trim(text.substr(gap));
    if (description.empty() && i + 1 < lines.size()) description = trim(lines[++i]);
    for (const std::string& f : flags_in(text)) options[f] = description;
  }
  return options;
}

// The roff of a page as the text it prints: fonts and escapes taken out.
std::string plain(std::string roff) {
  for (const char* font : {"\\fB", "\\fI", "\\fR"})
    for (size_t at; (at = roff.find(font)) != std::string::npos;) roff.erase(at, 3);
  for (size_t at; (at = roff.find("\\-")) != std::string::npos;) roff.replace(at, 2, "-");
  for (size_t at; (at = roff.find("\\&")) != std::string::npos;) roff.erase(at, 2);
  for (size_t at; (at = roff.find("\\e")) != std::string::npos;) roff.replace(at, 2, "\\");
  return roff;
}

// The options of a page's OPTIONS section: ".TP", the flags, then the description.
Options page_options(const std::string& roff) {
  Options options;
  const std::vector<std::string> lines = lines_of(plain(roff));
  bool in_options = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind(".SH", 0) == 0) in_options = lines[i] == ".SH OPTIONS";
    if (!in_options || lines[i] != ".TP" || i + 2 >= lines.size()) continue;
    for (const std::string& f : flags_in(lines[i + 1])) options[f] = lines[i + 2];
  }
  return options;
}

// The command a page describes: "corral-providers-describe.1" is {"providers", "describe"}.
std::vector<std::string> command_of(const fs::path& page) {
  std::vector<std::string> words;
  std::istringstream in(page.stem().string());
  for (std::string w; std::getline(in, w, '-');) words.push_back(w);
  words.erase(words.begin());  // "corral"
  return words;
}

std::vector<fs::path> pages() {
  std::vector<fs::path> out;
  for (const char* dir : {"man1", "man7"})
    for (const auto& e : fs::directory_iterator(kShare / "man" / dir)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("each command's man page lists exactly the options its --help lists, with the same descriptions") {
  CliEnv env;
  const std::string top_help = env.run({"--help"}).out;
  size_t commands = 0;
  for (const fs::path& page : pages()) {
    if (page.extension() != ".1") continue;
    CAPTURE(page.filename().string());
    std::vector<std::string> args = command_of(page);
    args.push_back("--help");
    const auto help = env.run(args);
    REQUIRE(help.exit_code == 0);
    const Options from_help = help_options(help.out);
    const Options from_page = page_options(read_file(page));
    REQUIRE(!from_help.empty());
    // No structured bindings: CAPTURE's lambda cannot capture them under clang 14.
    for (const auto& option : from_help) {
      const std::string& flag = option.first;
      CAPTURE(flag);
      REQUIRE(from_page.count(flag) == 1);
      CHECK(from_page.at(flag).rfind(option.second, 0) == 0);  // the page may add the default
    }
    for (const auto& option : from_page) {
      const std::string& flag = option.first;
      CAPTURE(flag);
      CHECK(from_help.count(flag) == 1);
    }
    if (!command_of(page).empty()) {
      ++commands;
      CHECK(top_help.find(command_of(page).front()) != std::string::npos);
    }
  }
  // A page per row of the command table but the hidden ones (the completion scripts').
  size_t rows = 0;
  for (const corral::cli::Command* c : corral::cli::command_table()) {
    const std::string name = c->parent.empty() ? std::string(c->name) : fmt::format("{}-{}", c->parent, c->name);
    CAPTURE(name);
    CHECK(fs::exists(kShare / "man" / "man1" / ("corral-" + name + ".1")) == !c->hidden);
    rows += c->hidden ? 0 : 1;
  }
  CHECK(commands == rows);
  CHECK(fs::exists(kShare / "man" / "man1" / "corral-providers-describe.1"));
}

TEST_CASE("a man page's description says what its command's exit status means, in filled paragraphs") {
  const std::string pause = read_file(kShare / "man" / "man1" / "corral-pause.1");
  CHECK(pause.find("Exit status: 0 when it succeeded; corral's own failures use 64 usage") != std::string::npos);
  CHECK(pause.find("the command's own") == std::string::npos);
  const std::string run = read_file(kShare / "man" / "man1" / "corral-run.1");
  CHECK(run.find("Exit status: the command's own") != std::string::npos);
  const std::string conformance = read_file(kShare / "man" / "man1" / "corral-conformance.1");
  CHECK(conformance.find("Exit status: 0 when every check passed or was skipped, 1 when one failed") !=
        std::string::npos);
  // --help's own line breaks are not forced on the page: man fills each paragraph.
  for (const fs::path& page : pages()) {
    if (page.extension() != ".1") continue;
    CAPTURE(page.filename().string());
    CHECK(read_file(page).find("\n.br\n") == std::string::npos);
  }
  CHECK(pause.find("unavailable, 70 internal") != std::string::npos);  // one line, not two
}

TEST_CASE("corral-plugin(7) is the reference part of the plugin authoring guide") {
  const std::string roff = plain(read_file(kShare / "man" / "man7" / "corral-plugin.7"));
  const std::string guide = read_file(fs::path(CORRAL_SOURCE_DIR) / "docs" / "plugin-authoring.md");
  for (const std::string& line : lines_of(guide)) {
    if (line.rfind("## ", 0) != 0) continue;
    const bool reference = guide.find(line) >= guide.find("## The shape of a plugin");
    CAPTURE(line);
    CHECK((roff.find(".SH \"" + line.substr(3) + "\"") != std::string::npos) == reference);
  }
  CHECK(roff.find("CORRAL_PLUGIN(AcmeProvider, \"1.0.0\", kSpec)") != std::string::npos);
  CHECK(roff.find("corral_plugin_entry_v1") != std::string::npos);
}

TEST_CASE("every man page renders without a warning") {
  if (corral::os::find_program("groff").empty()) {
    MESSAGE("skipped: groff is not installed (apt-get install groff-base)");
    return;
  }
  size_t checked = 0;
  for (const fs::path& page : pages()) {
    CAPTURE(page.filename().string());
    corral::os::ProcessSpec spec;
    spec.argv = {"groff", "-man", "-Tutf8", "-ww", "-z", page.string()};
    const corral::os::CapturedProcess r = corral::os::capture_process(spec, 60);
    CHECK(r.exit_code == 0);
    CHECK_MESSAGE(r.err.empty(), r.err);
    ++checked;
  }
  CHECK(checked > 20);
}

TEST_CASE("the completion scripts the build installs are what `corral completion` prints, and parse in their shells") {
  CliEnv env;
  const std::map<std::string, fs::path> files = {
      {"bash", kShare / "bash-completion" / "completions" / "corral"},
      {"zsh", kShare / "zsh" / "vendor-completions" / "_corral"},
      {"fish", kShare / "fish" / "vendor_completions.d" / "corral.fish"}};
  for (const auto& entry : files) {
    const std::string& shell = entry.first;
    const fs::path& file = entry.second;
    CAPTURE(shell);
    const auto printed = env.run({"completion", shell});
    REQUIRE(printed.exit_code == 0);
    CHECK(read_file(file) == printed.out);
    if (corral::os::find_program(shell).empty()) {
      MESSAGE("not parsed: " << shell << " is not installed");
      continue;
    }
    corral::os::ProcessSpec spec;
    spec.argv = shell == "fish" ? std::vector<std::string>{"fish", "--no-execute", file.string()}
                                : std::vector<std::string>{shell, "-n", file.string()};
    const corral::os::CapturedProcess r = corral::os::capture_process(spec, 60);
    CHECK_MESSAGE(r.exit_code == 0, r.err);
  }
}
