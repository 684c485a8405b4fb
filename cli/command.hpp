// One row of corral's command table: everything about a command that --help, a man page
// or shell completion needs, and what runs it. The rows are in command_table.cpp; each
// is defined in its own file under commands/ beside its options and its handler.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <span>
#include <string_view>

#include "context.hpp"

namespace corral::cli {

// Runs a parsed command; returns the exit status, reports failures by throwing Error.
using Runner = std::function<int(Context& ctx)>;

struct Command {
  std::string_view name;      // as typed after its parent: "run", "describe"
  std::string_view parent;    // the command it belongs under ("providers"); "" at the top
  std::string_view summary;   // one line, as `corral --help` lists it
  // The text below its options in --help and its man page's description: paragraphs
  // apart by a blank line, each wrapped for --help (a man page joins a paragraph's lines).
  std::string_view details;
  // What its exit status says when corral itself did not fail; "" = 0 when it succeeded.
  std::string_view exit_status;
  bool provider_options = false;  // takes --<provider>-<option> VALUE flags
  bool needs_settings = true;     // false: runs whatever state settings and registries are in
  bool hidden = false;            // for corral's own scripts: not in --help, man pages or completion
  bool scans_workspace = false;   // scans the working tree at once: git's listing starts before parsing
  bool takes_words_after_dashes = false;  // the words after "--" are its own (Context::words_after_dashes)
  // Adds the command's options and positionals to `app`, its own CLI11 subcommand, and
  // returns what runs it with the values they were given; running nothing meanwhile.
  Runner (*define)(CLI::App& app) = nullptr;
};

// Every command, parents before their children, in the order --help lists them.
std::span<const Command* const> command_table();
// The top-level command called `name`, or nullptr.
const Command* find_command(std::string_view name);

}  // namespace corral::cli
