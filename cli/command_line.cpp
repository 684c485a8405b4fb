#include "command_line.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "base/did_you_mean.hpp"
#include "base/printable.hpp"
#include "corral/errors.hpp"

namespace corral::cli {
namespace {

// Every long option name of `app` and its subcommands, at any depth.
void collect_long_names(const CLI::App& app, std::vector<std::string>& names) {
  for (const CLI::Option* o : app.get_options())
    for (const std::string& n : o->get_lnames()) names.push_back(n);
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    collect_long_names(*sub, names);
}

}  // namespace

CommandLine::CommandLine() : app_{"corral: run a command from your working tree in a sandbox from any provider"} {
  // Set before the subcommands are added: CLI11 copies fallthrough, the footer and the
  // subcommand limit into each subcommand as it is made.
  app_.name("corral");
  app_.require_subcommand(1);
  app_.fallthrough();  // -v works after the subcommand too
  app_.add_flag("-v,--verbose", verbose_, "Show what corral is doing on stderr");
  app_.footer(fmt::format(
      "Provider options are flags too: --<provider>-<option> VALUE (see `corral providers describe NAME`).\n"
      "Exit status: the command's own; corral's failures use {} usage, {} not found, {} unavailable,\n"
      "{} internal, {} quota, {} auth, {} config, {} timeout, {} interrupted (docs/exit-codes.md).",
      kExitUsage, kExitNotFound, kExitUnavailable, kExitInternal, kExitQuota, kExitAuth, kExitConfig, kExitTimeout,
      kExitCancelled));
  for (const Command* c : command_table()) {
    CLI::App* parent = c->parent.empty() ? &app_ : app_of(c->parent);
    CLI::App* sub = parent->add_subcommand(std::string(c->name), std::string(c->summary));
    if (!c->details.empty()) sub->footer(std::string(c->details));
    if (c->hidden) sub->group("");
    entries_.push_back({*c, sub, c->define ? c->define(*sub) : Runner{}});
  }
}

CLI::App* CommandLine::app_of(std::string_view name) {
  for (const Entry& e : entries_)
    if (e.command.parent.empty() && e.command.name == name) return e.app;
  throw std::logic_error(fmt::format("the command table lists '{}' as a parent before defining it", name));
}

std::vector<std::string> CommandLine::reserved_flags() const {
  std::vector<std::string> names;
  collect_long_names(app_, names);
  return names;
}

std::optional<int> CommandLine::parse(std::vector<std::string> args) {
  if (auto dashes = std::find(args.begin(), args.end(), "--"); dashes != args.end()) {
    after_dashes_.assign(std::make_move_iterator(dashes + 1), std::make_move_iterator(args.end()));
    args.erase(dashes, args.end());
  }
  // The first word that is not a flag names the command (corral's own flags take no
  // value); CLI11 would call a mistyped one "a subcommand is required".
  auto word = std::find_if(args.begin(), args.end(), [](const std::string& a) { return !a.starts_with("-"); });
  if (word != args.end() && !find_command(*word)) {
    std::vector<std::string> names;
    for (const Command* c : command_table())
      if (c->parent.empty() && !c->hidden) names.emplace_back(c->name);
    const std::optional<std::string> near = nearest(*word, names);
    std::fputs(fmt::format("corral: error: '{}' is not a corral command{}\n  hint: `corral --help` lists them\n",
                           printable(*word), near ? fmt::format(" (did you mean '{}'?)", *near) : "")
                   .c_str(),
               stderr);
    return kExitUsage;
  }
  try {
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    app_.parse(args);
    if (!after_dashes_.empty() && !parsed().command.takes_words_after_dashes) throw CLI::ExtrasError(after_dashes_);
  } catch (const CLI::ParseError& e) {
    const int rc = app_.exit(e);
    return rc == 0 ? 0 : kExitUsage;
  }
  return std::nullopt;
}

const CommandLine::Entry& CommandLine::parsed() const {
  const CLI::App* app = &app_;
  while (!app->get_subcommands().empty()) app = app->get_subcommands().front();
  for (const Entry& e : entries_)
    if (e.app == app) return e;
  throw std::logic_error("no command was parsed");
}

std::string CommandLine::top_name() const { return app_.get_subcommands().front()->get_name(); }

}  // namespace corral::cli
