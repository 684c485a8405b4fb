// `corral providers describe NAME`: a provider's features and settings, with the flag and
// environment variables that set each.
#include <fmt/format.h>

#include <memory>

#include "commands/commands.hpp"
#include "conformance/record.hpp"
#include "corral/json.hpp"
#include "docs_matrix.hpp"
#include "options.hpp"
#include "table.hpp"

namespace corral::cli {
namespace {

struct DescribeOptions {
  std::string name;
  bool json = false;
};

// The spec as JSON, each option with its flag (null for a secret, which corral refuses on
// the command line), and where the plugin was loaded from.
std::string describe_json(const ProviderEntry& e) {
  const ProviderSpec& s = *e.spec;
  json::Document doc = json::parse(json::to_json(s), "spec");
  auto& alloc = doc.GetAllocator();
  for (auto& o : doc["options"].GetArray()) {
    const OptionSpec& option = *s.find_option(o["name"].GetString());
    rapidjson::Value flag;  // null
    if (!option.secret) flag.SetString(s.flag(option).c_str(), alloc);
    o.AddMember("flag", flag, alloc);
  }
  doc.AddMember("version", rapidjson::Value(e.plugin_version.c_str(), alloc), alloc);
  doc.AddMember("abiVersion", rapidjson::Value(e.abi_version), alloc);
  doc.AddMember("library", rapidjson::Value(e.library.string().c_str(), alloc), alloc);
  doc.AddMember("registry", rapidjson::Value(e.source.file.string().c_str(), alloc), alloc);
  json::Document verification = json::parse(verification_json(read_verification(e)), "verification");
  doc.AddMember("verification", rapidjson::Value(verification, alloc), alloc);
  return json::dump(doc) + "\n";
}

// The settings table: each option, its flag (none for a secret), env vars, default and help.
std::string settings_table(const ProviderSpec& s) {
  Table t({"OPTION", "FLAG", "ENV", "DEFAULT", "HELP"});
  for (const OptionSpec& o : s.options) {
    std::string def = o.default_value ? *o.default_value : "";
    std::string help = o.help;
    if (o.secret) help = "(secret) " + help;
    else if (o.trusted) help = "(user only: never from a repository's corral.yaml) " + help;
    if (!o.choices.empty()) help += fmt::format(" [{}]", fmt::join(o.choices, "|"));
    t.add({fmt::format("{}.{}", s.name, o.name), o.secret ? "(env or config only)" : s.flag(o),
           fmt::format("{}", fmt::join(o.env, ", ")), def, help});
  }
  return t.empty() ? "  none\n" : t.str();
}

std::string describe_text(const ProviderEntry& e) {
  const ProviderSpec& s = *e.spec;
  std::string text =
      fmt::format("{} {}: {} provider, {}\n", s.name, e.plugin_version, to_string(s.kind), s.docs.category);
  if (!s.aliases.empty()) text += fmt::format("aliases: {}\n", fmt::join(s.aliases, ", "));
  text += fmt::format("targets: {}\nruns: {}; GPU: {}\ncleanup: {}\nbest for: {}\ncaveat: {}\n",
                      fmt::join(s.targets, ", "), s.docs.location, s.docs.gpu, s.docs.cleanup_owner, s.docs.best_fit,
                      s.docs.caveat);
  text += fmt::format("means here: {}\n", docs::meanings(s));
  // Each feature as the plugin's record shows it: verified by the kit, failed, or only declared.
  const Verification v = read_verification(e);
  text += "\nFeatures:\n";
  for (Feature f : kAllFeatures) {
    if (!s.features.has(f)) continue;
    const std::string verdict = v.record ? std::string(to_string(v.record->verdict(to_string(f)))) : "declared";
    text += fmt::format("  {:<26} {:<14} {}\n", to_string(f), verdict, describe(f));
  }
  if (v.record)
    text += fmt::format("Verified by the conformance kit of corral {} on {}; the run contract: {}.\n",
                        v.record->kit_version, v.record->date, to_string(v.record->contract));
  else
    text += fmt::format("Not verified: {}; `corral conformance --provider {} --record FILE` makes one.\n", v.why_not,
                        s.name);
  text += "\nSettings (flag > environment > corral.yaml > user config > default):\n";
  text += settings_table(s);
  text += fmt::format("\nLoaded from {} (listed in {}), built for plugin ABI version {}\n", e.library.string(),
                      e.source.file.string(), e.abi_version);
  return text;
}

Runner define(CLI::App& app) {
  auto o = std::make_shared<DescribeOptions>();
  add_provider_argument(app, o->name);
  add_json_flag(app, o->json);
  // `corral providers --json describe NAME` asks for JSON too.
  const CLI::App* providers = app.get_parent();
  return [o, providers](Context& ctx) {
    const ProviderEntry& e = ctx.registry().entry(o->name);
    ctx.ui.out(o->json || providers->count("--json") > 0 ? describe_json(e) : describe_text(e));
    return 0;
  };
}

}  // namespace

const Command kDescribe = {
    .name = "describe",
    .parent = "providers",
    .summary = "Show a provider's features and settings",
    .define = define,
};

}  // namespace corral::cli
