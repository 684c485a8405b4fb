// corral's command line as CLI11 sees it, built from the command table: what --help
// prints, and what a man page or shell completion generator would walk (every command's
// name, summary, details, options and positionals). Building it runs nothing.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "command.hpp"

namespace corral::cli {

class CommandLine {
 public:
  CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  // The app: each table row a subcommand (under its parent), with its options.
  const CLI::App& app() const { return app_; }
  // Every long option name of every command: corral's own flags, which a provider's
  // option flag may never shadow.
  std::vector<std::string> reserved_flags() const;
  // Parses `args` (argv without the program name). Returns the status to exit with when
  // there is nothing to run (help printed: 0; a usage error reported: 64), else nullopt.
  // The words after the first "--" are not parsed: they are the command's own.
  std::optional<int> parse(std::vector<std::string> args);
  // After parse: the words after the line's first "--", byte for byte as given. CLI11
  // never sees them, since it would read "[a,b]" as a list of two words and "[]" as none.
  const std::vector<std::string>& words_after_dashes() const { return after_dashes_; }
  // After parse: the command the line names (the innermost) and what runs it.
  const Command& command() const { return parsed().command; }
  const Runner& runner() const { return parsed().run; }
  // After parse: the top-level command's name, as messages about the line name it.
  std::string top_name() const;

 private:
  struct Entry {
    const Command& command;
    CLI::App* app;
    Runner run;
  };
  CLI::App* app_of(std::string_view name);
  const Entry& parsed() const;
  // Reports the words CLI11 found no use for in `given` (the line as typed): an unknown
  // option with the nearest one, a command's own flag with the line to type instead.
  int refuse_extras(const std::vector<std::string>& given) const;

  CLI::App app_;
  bool verbose_ = false;  // main reads -v before parsing; registered for --help
  std::vector<Entry> entries_;
  std::vector<std::string> after_dashes_;
};

}  // namespace corral::cli
