// corral(1) and one page per command (corral-run(1), corral-providers-describe(1)), made
// from the CLI11 app --help prints: the same summaries, details, options and
// descriptions, so the pages cannot drift from --help.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace corral::cli::man {

struct Page {
  std::string name;  // "corral-run"
  int section = 1;
  std::string roff;
};

// The pages of `app` (corral's root) and of every command under it but hidden ones.
std::vector<Page> command_pages(const CLI::App& app, std::string_view version);

}  // namespace corral::cli::man
