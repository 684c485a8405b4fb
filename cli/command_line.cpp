#include "command_line.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "base/did_you_mean.hpp"
#include "base/printable.hpp"
#include "commands/commands.hpp"
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

constexpr std::string_view kProviderOptionsText =
    "Provider options are flags too: --<provider>-<option> VALUE (see `corral providers describe NAME`).";

// What an exit status means, `own` being the status when corral itself did not fail.
std::string exit_status_text(std::string_view own) {
  return fmt::format(
      "Exit status: {}; corral's own failures use {} usage, {} not found, {} unavailable,\n"
      "{} internal, {} quota, {} auth, {} config, {} timeout, {} interrupted (docs/exit-codes.md).",
      own, kExitUsage, kExitNotFound, kExitUnavailable, kExitInternal, kExitQuota, kExitAuth, kExitConfig, kExitTimeout,
      kExitCancelled);
}

// The text below a command's options: its details, how provider options are given where
// it takes them, and what its exit status says.
std::string footer_of(const Command& c) {
  std::string text;
  if (!c.details.empty()) text += std::string(c.details) + "\n\n";
  if (c.provider_options) text += std::string(kProviderOptionsText) + "\n\n";
  return text + exit_status_text(c.exit_status.empty() ? "0 when it succeeded" : c.exit_status);
}

// Prints a usage error the way corral prints every error; returns kExitUsage.
int usage_error(const std::string& message, const std::string& hint) {
  std::fputs(fmt::format("corral: error: {}\n  hint: {}\n", message, hint).c_str(), stderr);
  return kExitUsage;
}

// "corral run", "corral pool fill": the command `app` is, as the user types it.
std::string typed_name(const CLI::App* app) {
  std::string name;
  for (; app; app = app->get_parent()) name = app->get_name() + (name.empty() ? "" : " " + name);
  return name;
}

}  // namespace

CommandLine::CommandLine() : app_{"corral: run a command from your working tree in a sandbox from any provider"} {
  // Set before the subcommands are added: CLI11 copies fallthrough, the footer and the
  // subcommand limit into each subcommand as it is made.
  app_.name("corral");
  app_.require_subcommand(1);
  app_.fallthrough();  // -v works after the subcommand too
  app_.add_flag("-v,--verbose", verbose_, "Show what corral is doing on stderr");
  app_.set_version_flag("--version", version_line(), "Print corral's version and exit (as `corral version`)");
  app_.footer(fmt::format("{}\n\n{}", kProviderOptionsText, exit_status_text("`corral run`'s is its command's own")));
  for (const Command* c : command_table()) {
    CLI::App* parent = c->parent.empty() ? &app_ : app_of(c->parent);
    CLI::App* sub = parent->add_subcommand(std::string(c->name), std::string(c->summary));
    sub->footer(footer_of(*c));
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
    return usage_error(fmt::format("'{}' is not a corral command{}", printable(*word),
                                   near ? fmt::format(" (did you mean '{}'?)", *near) : ""),
                       "`corral --help` lists them");
  }
  const std::vector<std::string> given = args;
  try {
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    app_.parse(args);
  } catch (const CLI::ExtrasError&) {
    return refuse_extras(given);
  } catch (const CLI::ParseError& e) {
    const int rc = app_.exit(e);
    return rc == 0 ? 0 : kExitUsage;
  }
  if (!after_dashes_.empty() && !parsed().command.takes_words_after_dashes)
    return usage_error(fmt::format("{} runs no command, so it takes no words after --", typed_name(parsed().app)),
                       fmt::format("remove `-- {}`", printable(fmt::format("{}", fmt::join(after_dashes_, " ")))));
  return std::nullopt;
}

int CommandLine::refuse_extras(const std::vector<std::string>& given) const {
  const CLI::App* app = parsed().app;
  const std::string command = typed_name(app);
  const std::vector<std::string> extras = app_.remaining(true);
  const std::string first = extras.empty() ? std::string() : extras.front();
  const std::string help = fmt::format("`{} --help` lists what it takes", command);
  if (first.starts_with("--")) {
    // Its own options and the ones every command takes (-v).
    std::vector<std::string> names;
    for (const CLI::App* a = app; a; a = a->get_parent())
      for (const CLI::Option* o : a->get_options())
        for (const std::string& n : o->get_lnames()) names.push_back(n);
    const std::string flag = first.substr(2, first.find('=') - 2);
    const std::optional<std::string> near = nearest(flag, names);
    return usage_error(fmt::format("{} has no option --{}{}", command, printable(flag),
                                   near ? fmt::format(" (did you mean --{}?)", *near) : ""),
                       help);
  }
  if (first.size() > 1 && first.starts_with("-")) {
    if (!parsed().command.takes_words_after_dashes)
      return usage_error(fmt::format("{} has no option {}", command, printable(first)), help);
    // `corral run ls -la`: the command's flag. When every other word after the command's
    // name is one of the command's, the line to type is the same with -- in front.
    auto at = std::find(given.begin(), given.end(), app->get_name());
    std::vector<std::string> words(at == given.end() ? given.end() : std::next(at), given.end());
    const bool only_the_commands = std::all_of(words.begin(), words.end(), [&](const std::string& w) {
      return !w.starts_with("-") || std::find(extras.begin(), extras.end(), w) != extras.end();
    });
    return usage_error(
        fmt::format("{} has no option {}: is it the command's?", command, printable(first)),
        only_the_commands && !words.empty()
            ? fmt::format("put -- before the command, so its flags are its own: `{} -- {}`", command,
                          printable(fmt::format("{}", fmt::join(words, " "))))
            : fmt::format("put -- before the command, so its flags are its own: `{} [options] -- COMMAND ARGS...`",
                          command));
  }
  return usage_error(fmt::format("{} takes no word '{}' there", command, printable(first)), help);
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
