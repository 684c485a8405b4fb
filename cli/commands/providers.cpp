// `corral providers`: the installed providers, where each comes from and how it runs.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "commands/commands.hpp"
#include "conformance/record.hpp"
#include "corral/errors.hpp"
#include "json_line.hpp"
#include "options.hpp"
#include "table.hpp"

namespace corral::cli {
namespace {

struct ProvidersOptions {
  bool json = false;
  std::vector<std::string> features;  // --feature (repeatable)
  std::vector<std::string> kinds;     // --kind (repeatable)
};

// The values `names` spell, each parsed by `parse`; a usage error listing `all` for one
// that is not one of them (`what`: "feature", "kind").
template <typename T, typename Parse, typename All>
std::vector<T> parse_all(const std::vector<std::string>& names, Parse parse, const All& all, const char* what) {
  std::vector<T> out;
  for (const std::string& n : names) {
    std::optional<T> value = parse(n);
    if (!value) {
      std::vector<std::string> valid;
      for (T v : all) valid.emplace_back(to_string(v));
      throw Error(ErrorCode::invalid_argument, fmt::format("unknown {} '{}'", what, n),
                  fmt::format("{}s are: {}", what, fmt::join(valid, ", ")));
    }
    out.push_back(*value);
  }
  return out;
}

// The providers --feature and --kind select; none given selects all.
struct Filter {
  std::vector<Feature> features;
  std::vector<ProviderKind> kinds;
  bool active() const { return !features.empty() || !kinds.empty(); }
  bool matches(const ProviderSpec& spec) const {
    for (Feature f : features)
      if (!spec.features.has(f)) return false;
    return kinds.empty() || std::find(kinds.begin(), kinds.end(), spec.kind) != kinds.end();
  }
};

void write_entry(json::Writer& w, const ProviderEntry& e) {
  w.StartObject();
  json::write_string(w, "name", e.name);
  w.Key("ok");
  w.Bool(e.ok());
  if (e.ok()) {
    const ProviderSpec& s = *e.spec;
    json::write_strings(w, "aliases", s.aliases);
    json::write_string(w, "kind", to_string(s.kind));
    json::write_string(w, "family", s.family);
    json::write_strings(w, "targets", s.targets);
    json::write_strings(w, "features", s.features.names());
    json::write_string(w, "version", e.plugin_version);
  } else {
    w.Key("error");
    w.StartObject();
    json::write_string(w, "cause", to_string(e.error->cause));
    json::write_string(w, "message", e.error->message);
    w.EndObject();
  }
  json::write_string(w, "library", e.library.string());
  json::write_string(w, "registry", e.source.file.string());
  json::write_string(w, "origin", e.source.origin);
  json::write_strings(w, "overrides", e.overridden);
  json::write_string(w, "isolation", std::string(to_string(e.isolation.mode)));
  if (e.ok()) {
    w.Key("verification");
    const std::string verification = verification_json(read_verification(e));
    w.RawValue(verification.data(), verification.size(), rapidjson::kObjectType);
  }
  w.EndObject();
}

// One table row: the provider, its kind, its features, what the kit verified of them (its
// record, when it is for this very file) and where it was loaded from.
std::vector<std::string> row_of(const ProviderEntry& e) {
  const ProviderSpec& s = *e.spec;
  std::string name = s.name + (s.aliases.empty() ? "" : fmt::format(" ({})", fmt::join(s.aliases, ", ")));
  std::string source = e.source.origin + ": " + e.source.file.string();
  if (!e.overridden.empty()) source += fmt::format(" (overrides {})", fmt::join(e.overridden, ", "));
  if (e.isolation.mode == Isolation::process) source += " [isolation: process]";
  return {name, std::string(to_string(s.kind)), fmt::format("{}", fmt::join(s.features.names(), ", ")),
          verification_summary(read_verification(e), s), source};
}

// The table of working providers, then (unless filtering) the entries that did not load.
std::string providers_text(const Registry& registry, const Filter& filter) {
  Table t({"PROVIDER", "KIND", "FEATURES", "VERIFIED", "SOURCE"});
  std::vector<const ProviderEntry*> broken;
  for (const ProviderEntry& e : registry.entries()) {
    if (!e.ok()) broken.push_back(&e);
    else if (filter.matches(*e.spec)) t.add(row_of(e));
  }
  std::string text = t.empty() ? std::string("no providers match\n") : t.str();
  if (!filter.active() && !broken.empty()) {
    text += "\nNot loaded:\n";
    for (const ProviderEntry* e : broken)
      text += fmt::format("  {} [{}]: {}\n", e->name, to_string(e->error->cause), e->error->message);
  }
  return text;
}

int providers_command(Context& ctx, const ProvidersOptions& o) {
  const Filter filter{parse_all<Feature>(o.features, parse_feature, kAllFeatures, "feature"),
                      parse_all<ProviderKind>(o.kinds, parse_kind, kAllKinds, "kind")};
  if (!o.json) {
    ctx.ui.out(providers_text(ctx.registry(), filter));
    return 0;
  }
  ctx.ui.out(json_line([&](json::Writer& w) {
    w.StartArray();
    for (const ProviderEntry& e : ctx.registry().entries())
      if (!filter.active() || (e.ok() && filter.matches(*e.spec))) write_entry(w, e);
    w.EndArray();
  }));
  return 0;
}

Runner define(CLI::App& app) {
  auto o = std::make_shared<ProvidersOptions>();
  add_json_flag(app, o->json);
  app.add_option("--feature", o->features, "Only providers with this feature (repeatable)")->allow_extra_args(false);
  app.add_option("--kind", o->kinds, "Only providers of this kind (repeatable)")->allow_extra_args(false);
  return [o](Context& ctx) { return providers_command(ctx, *o); };
}

}  // namespace

const Command kProviders = {
    .name = "providers",
    .summary = "List installed providers",
    .define = define,
};

}  // namespace corral::cli
