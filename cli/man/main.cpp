// corral-share-gen SHARE VERSION GUIDE: writes what corral installs under share/ beside
// the binary: the man pages, SHARE/man/man1/corral*.1 from the command line --help prints
// and SHARE/man/man7/corral-plugin.7 from the reference part of the plugin authoring
// guide, and the completion scripts `corral completion SHELL` prints, each in its shell's
// folder. Run by the build; not installed.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "command_line.hpp"
#include "command_pages.hpp"
#include "completion_scripts.hpp"
#include "markdown.hpp"
#include "roff.hpp"

namespace fs = std::filesystem;
using namespace corral::cli;

namespace {

// Where the guide's reference part starts; what comes before it is the walk-through.
constexpr std::string_view kReferenceHeading = "The shape of a plugin";

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) throw std::runtime_error("cannot write " + file.string());
}

std::string plugin_page(const std::string& guide, std::string_view version) {
  const std::string_view reference = man::from_heading(guide, kReferenceHeading);
  if (reference.empty())
    throw std::runtime_error(fmt::format("the plugin guide has no \"## {}\" heading", kReferenceHeading));
  return man::heading("corral-plugin", 7, version, "docs/plugin-authoring.md") +
         ".SH NAME\ncorral\\-plugin \\- the reference for writing a corral provider plugin\n"
         ".SH DESCRIPTION\nThe reference part of corral's plugin authoring guide "
         "(docs/plugin\\-authoring.md in corral's sources, which also walks through a first plugin).\n" +
         man::markdown_to_roff(reference) +
         ".SH SEE ALSO\n\\fBcorral\\fR(1), \\fBcorral\\-conformance\\fR(1), \\fBcorral\\-providers\\fR(1)\n";
}

// Writes the command pages into `man`, first removing those of commands that are gone.
void write_command_pages(const fs::path& man, std::string_view version) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(man / "man1", ec))
    if (e.path().filename().string().rfind("corral", 0) == 0) fs::remove(e.path());
  CommandLine line;
  for (const man::Page& page : man::command_pages(line.app(), version))
    write(man / fmt::format("man{}", page.section) / fmt::format("{}.{}", page.name, page.section), page.roff);
}

// Where each shell looks for the completion of a command it is installed for.
void write_completions(const fs::path& share) {
  write(share / "bash-completion" / "completions" / "corral", std::string(*completion_script("bash")));
  write(share / "zsh" / "vendor-completions" / "_corral", std::string(*completion_script("zsh")));
  write(share / "fish" / "vendor_completions.d" / "corral.fish", std::string(*completion_script("fish")));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: corral-share-gen SHARE_DIR VERSION PLUGIN_GUIDE.md\n";
    return 64;
  }
  try {
    const fs::path share = argv[1];
    const std::string version = argv[2];
    std::ifstream in(argv[3], std::ios::binary);
    std::stringstream guide;
    guide << in.rdbuf();
    if (!in) throw std::runtime_error(fmt::format("cannot read {}", argv[3]));
    write_command_pages(share / "man", version);
    write(share / "man" / "man7" / "corral-plugin.7", plugin_page(guide.str(), version));
    write_completions(share);
  } catch (const std::exception& e) {
    std::cerr << "corral-share-gen: " << e.what() << "\n";
    return 70;
  }
  return 0;
}
