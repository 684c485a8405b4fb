// Commands about providers: providers, providers describe, doctor.
#include <fmt/format.h>

#include <algorithm>

#include "commands.hpp"
#include "lease/fleet.hpp"
#include "corral/json.hpp"
#include "corral/errors.hpp"
#include "table.hpp"

namespace corral::cli {
namespace {

std::vector<Feature> parse_features(const std::vector<std::string>& names) {
  std::vector<Feature> out;
  for (const std::string& n : names) {
    auto f = parse_feature(n);
    if (!f) {
      std::vector<std::string> valid;
      for (Feature k : kAllFeatures) valid.emplace_back(to_string(k));
      throw Error(ErrorCode::invalid_argument, fmt::format("unknown feature '{}'", n),
                  fmt::format("features are: {}", fmt::join(valid, ", ")));
    }
    out.push_back(*f);
  }
  return out;
}

std::vector<ProviderKind> parse_kinds(const std::vector<std::string>& names) {
  std::vector<ProviderKind> out;
  for (const std::string& n : names) {
    auto k = parse_kind(n);
    if (!k) {
      std::vector<std::string> valid;
      for (ProviderKind v : kAllKinds) valid.emplace_back(to_string(v));
      throw Error(ErrorCode::invalid_argument, fmt::format("unknown kind '{}'", n),
                  fmt::format("kinds are: {}", fmt::join(valid, ", ")));
    }
    out.push_back(*k);
  }
  return out;
}

bool matches(const ProviderSpec& spec, const std::vector<Feature>& features, const std::vector<ProviderKind>& kinds) {
  for (Feature f : features)
    if (!spec.features.has(f)) return false;
  return kinds.empty() || std::find(kinds.begin(), kinds.end(), spec.kind) != kinds.end();
}


}  // namespace

int providers_command(Context& ctx, bool as_json, const ProviderFilter& filter) {
  auto features = parse_features(filter.features);
  auto kinds = parse_kinds(filter.kinds);
  const bool filtering = !features.empty() || !kinds.empty();
  if (as_json) {
    rapidjson::StringBuffer buffer;
    json::Writer w(buffer);
    w.StartArray();
    for (const ProviderEntry& e : ctx.registry().entries()) {
      if (filtering && (!e.ok() || !matches(*e.spec, features, kinds))) continue;
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
      w.EndObject();
    }
    w.EndArray();
    ctx.ui.out(std::string(buffer.GetString()) + "\n");
    return 0;
  }
  Table t({"PROVIDER", "KIND", "FEATURES", "SOURCE"});
  std::vector<const ProviderEntry*> broken;
  for (const ProviderEntry& e : ctx.registry().entries()) {
    if (!e.ok()) {
      broken.push_back(&e);
      continue;
    }
    const ProviderSpec& s = *e.spec;
    if (!matches(s, features, kinds)) continue;
    std::string name = s.name + (s.aliases.empty() ? "" : fmt::format(" ({})", fmt::join(s.aliases, ", ")));
    std::string source = e.source.origin + ": " + e.source.file.string();
    if (!e.overridden.empty()) source += fmt::format(" (overrides {})", fmt::join(e.overridden, ", "));
    if (e.isolation.mode == Isolation::process) source += " [isolation: process]";
    t.add({name, std::string(to_string(s.kind)), fmt::format("{}", fmt::join(s.features.names(), ", ")), source});
  }
  std::string text = t.empty() ? std::string("no providers match\n") : t.str();
  if (!filtering && !broken.empty()) {
    text += "\nNot loaded:\n";
    for (const ProviderEntry* e : broken)
      text += fmt::format("  {} [{}]: {}\n", e->name, to_string(e->error->cause), e->error->message);
  }
  ctx.ui.out(text);
  return 0;
}

int describe_command(Context& ctx, const std::string& name, bool as_json) {
  const ProviderEntry* e = &ctx.registry().entry(name);
  const ProviderSpec& s = *e->spec;
  if (as_json) {
    json::Document doc = json::parse(json::to_json(s), "spec");
    auto& alloc = doc.GetAllocator();
    for (auto& o : doc["options"].GetArray()) {
      std::string flag = fmt::format("--{}-{}", s.name, o["name"].GetString());
      o.AddMember("flag", rapidjson::Value(flag.c_str(), alloc), alloc);
    }
    doc.AddMember("version", rapidjson::Value(e->plugin_version.c_str(), alloc), alloc);
    doc.AddMember("abiVersion", rapidjson::Value(e->abi_version), alloc);
    doc.AddMember("library", rapidjson::Value(e->library.string().c_str(), alloc), alloc);
    doc.AddMember("registry", rapidjson::Value(e->source.file.string().c_str(), alloc), alloc);
    ctx.ui.out(json::dump(doc) + "\n");
    return 0;
  }
  std::string text = fmt::format("{} {}: {} provider, {}\n", s.name, e->plugin_version, to_string(s.kind), s.docs.category);
  if (!s.aliases.empty()) text += fmt::format("aliases: {}\n", fmt::join(s.aliases, ", "));
  text += fmt::format("targets: {}\nruns: {}; GPU: {}\ncleanup: {}\nbest for: {}\ncaveat: {}\n",
                      fmt::join(s.targets, ", "), s.docs.location, s.docs.gpu, s.docs.cleanup_owner, s.docs.best_fit,
                      s.docs.caveat);
  text += "\nFeatures:\n";
  for (Feature f : kAllFeatures)
    if (s.features.has(f)) text += fmt::format("  {:<16} {}\n", to_string(f), describe(f));
  text += "\nSettings (flag > environment > corral.yaml > user config > default):\n";
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
  text += t.empty() ? "  none\n" : t.str();
  text += fmt::format("\nLoaded from {} (listed in {}), built for plugin ABI version {}\n", e->library.string(),
                      e->source.file.string(), e->abi_version);
  ctx.ui.out(text);
  return 0;
}

int doctor_command(Context& ctx, const ProviderChoice& choice, bool all, bool as_json) {
  bool healthy = true;
  std::vector<std::pair<std::string, std::vector<DoctorCheck>>> results;
  // Registry problems first: they explain a provider that is missing.
  std::vector<DoctorCheck> registry_checks;
  for (const RegistrySource& s : ctx.registry().sources())
    registry_checks.push_back({"registry " + s.file.string(), true, s.origin, ""});
  for (const ProviderEntry& e : ctx.registry().entries())
    if (!e.ok()) {
      registry_checks.push_back({"plugin " + e.name, false, e.error->message, "fix or remove this registry entry"});
      healthy = false;
    }
  if (ctx.registry().sources().empty()) {
    registry_checks.push_back({"registries", false, "no registry found",
                               "reinstall corral: share/corral/providers.yaml belongs beside bin/corral"});
    healthy = false;
  }
  results.emplace_back("registry", registry_checks);

  // Leases that need the user: corrupt claim files and leases a killed corral left.
  std::vector<DoctorCheck> lease_checks;
  size_t fine = 0;
  for (const LeaseRow& row : list_leases(ctx.claims)) {
    if (row.state == LeaseState::corrupt)
      lease_checks.push_back({"lease " + row.file.lease_id, false, "corrupt claim: " + row.file.problem,
                              "`corral stop --id " + row.file.lease_id + "` removes it"});
    else if (row.state == LeaseState::abandoned)
      lease_checks.push_back({"lease " + row.file.claim->slug, false, "abandoned by a corral that died",
                              "`corral stop --orphans` removes it"});
    else
      ++fine;
  }
  for (const DoctorCheck& c : lease_checks) healthy = healthy && c.ok;
  lease_checks.push_back({"lease claims readable", true, fmt::format("{} in use or kept", fine), ""});
  results.emplace_back("leases", lease_checks);

  std::vector<std::string> names;
  if (all) names = ctx.registry().names();
  else names.push_back(ctx.providers.spec(ctx.providers.resolve(choice)).name);  // unknown: a usage error
  for (const std::string& name : names) {
    std::vector<DoctorCheck> checks;
    try {
      auto session = ctx.providers.open(name, choice);
      checks = session->doctor();
    } catch (const Error& e) {
      checks.push_back({"provider loads and accepts its settings", false, e.what(), e.hint()});
    }
    for (const DoctorCheck& c : checks) healthy = healthy && c.ok;
    results.emplace_back(name, std::move(checks));
  }

  if (as_json) {
    rapidjson::StringBuffer buffer;
    json::Writer w(buffer);
    w.StartObject();
    w.Key("ok");
    w.Bool(healthy);
    w.Key("sections");
    w.StartArray();
    for (const auto& [section, checks] : results) {
      w.StartObject();
      json::write_string(w, "name", section);
      w.Key("checks");
      w.StartArray();
      for (const DoctorCheck& c : checks) json::write_check(w, c);
      w.EndArray();
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    ctx.ui.out(std::string(buffer.GetString()) + "\n");
  } else {
    std::string text;
    for (const auto& [section, checks] : results) {
      text += section + ":\n";
      for (const DoctorCheck& c : checks) {
        text += fmt::format("  [{}] {}{}\n", c.ok ? "ok" : "FAIL", c.name, c.detail.empty() ? "" : ": " + c.detail);
        if (!c.ok && !c.hint.empty()) text += fmt::format("         hint: {}\n", c.hint);
      }
    }
    ctx.ui.out(text);
  }
  return healthy ? 0 : kExitUnavailable;
}

}  // namespace corral::cli
