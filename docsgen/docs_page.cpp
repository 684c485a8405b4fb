#include "docs_page.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "docs_blocks.hpp"
#include "docs_matrix.hpp"

namespace corral::docs {
namespace {

std::string code_list(const std::vector<std::string>& items, std::string_view none) {
  if (items.empty()) return std::string(none);
  std::vector<std::string> quoted;
  for (const std::string& i : items) quoted.push_back("`" + i + "`");
  return fmt::format("{}", fmt::join(quoted, ", "));
}

std::string summary_table(const ProviderSpec& s) {
  const std::pair<const char*, std::string> rows[] = {
      {"Category", s.docs.category},
      {"Aliases", code_list(s.aliases, "none")},
      {"Family", s.family},
      {"Kind", fmt::format("`{}`: {}", to_string(s.kind), describe(s.kind))},
      {"Targets", fmt::format("{}", fmt::join(s.targets, ", "))},
      {"Runs", s.docs.location},
      {"GPU", s.docs.gpu},
      {"Workspace sync", workspace_sync(s.features)},
      {"Lifecycle", lifecycle(s)},
      {"Cleanup", s.docs.cleanup_owner},
      {"Authentication", authentication(s)},
      {"Best fit", s.docs.best_fit},
      {"Main caveat", s.docs.caveat},
  };
  std::string out = "| Property | Value |\n| --- | --- |\n";
  for (const auto& [name, value] : rows) out += fmt::format("| {} | {} |\n", name, cell(value));
  return out;
}

std::string features_table(const ProviderSpec& s) {
  std::string out = "| Feature | Supported | Meaning |\n| --- | --- | --- |\n";
  for (Feature f : kAllFeatures)
    out += fmt::format("| `{}` | {} | {} |\n", to_string(f), s.features.has(f) ? "yes" : "no", cell(describe(f)));
  return out;
}

std::string settings_section(const ProviderSpec& s) {
  if (s.options.empty()) return "This provider takes no settings.\n";
  std::string out = fmt::format(
      "Each setting is a flag, an environment variable (the first one set wins) or `{}.<option>` in a "
      "`corral.yaml`; a flag beats the environment, which beats the repository's `corral.yaml`, then the user's "
      "config, then the default. Secret settings are never printed, logged or forwarded into the sandbox; secret "
      "and user-only settings are never read from a repository's `corral.yaml`.\n\n",
      s.name);
  out += "| Option | Flag | Environment | Default | Type | Secret | Meaning |\n";
  out += "| --- | --- | --- | --- | --- | --- | --- |\n";
  for (const OptionSpec& o : s.options) {
    std::string meaning = o.help;
    if (!o.choices.empty()) meaning += fmt::format(" (one of: {})", fmt::join(o.choices, ", "));
    if (o.trusted && !o.secret) meaning += " (user-only: not from a repository's corral.yaml)";
    std::string def = o.default_value ? (o.default_value->empty() ? "\"\"" : "`" + *o.default_value + "`") : "none";
    std::string flag = o.secret ? "env or config only" : "`" + s.flag(o) + "`";
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} |\n", o.name, flag,
                       cell(code_list(o.env, "none")), cell(def), o.type, o.secret ? "yes" : "no", cell(meaning));
  }
  return out;
}

}  // namespace

std::string default_prose(const ProviderSpec& spec) {
  return fmt::format(
      "\n_No hand-written notes yet. Describe setup, credentials and limits of `{}` here: text between these "
      "markers survives regeneration._\n",
      spec.name);
}

std::string provider_page(const ProviderSpec& s, std::string_view prose) {
  std::string out = fmt::format(
      "{} {}` from the plugin's spec; edit only between the HAND-WRITTEN markers. -->\n\n", kPageMark, s.name);
  out += fmt::format("# {}\n\n{}, a `{}` provider. [All providers](README.md)\n\n", s.name, s.docs.category,
                     to_string(s.kind));
  out += fmt::format("{}{}{}\n\n", kProseMarkers.begin, prose, kProseMarkers.end);
  out += "## At a glance\n\n" + summary_table(s);
  out += "\n## Features\n\n" + features_table(s);
  out += "\n## Settings\n\n" + settings_section(s);
  out += fmt::format("\nSee them on this machine with `corral providers describe {}`.\n", s.name);
  return out;
}

std::string regenerate_page(const ProviderSpec& spec, const std::optional<std::string>& existing,
                            std::string_view what) {
  const bool empty = !existing || std::all_of(existing->begin(), existing->end(),
                                              [](unsigned char c) { return std::isspace(c); });
  if (empty) return provider_page(spec, default_prose(spec));
  std::optional<std::string> prose = extract_block(*existing, kProseMarkers, what);
  if (!prose)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{} has text but no '{}' ... '{}' block; regenerating it would erase that text", what,
                            kProseMarkers.begin, kProseMarkers.end),
                "put the two marker lines around the text to keep, or remove the file to start a fresh page");
  return provider_page(spec, *prose);
}

}  // namespace corral::docs
