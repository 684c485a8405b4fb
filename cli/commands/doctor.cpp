// `corral doctor`: whether corral and a provider (or every one, --all) can work here: the
// registries, the leases that need the user, then each provider's own checks.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "commands/commands.hpp"
#include "corral/errors.hpp"
#include "json_line.hpp"
#include "lease/fleet.hpp"
#include "lease/handle.hpp"
#include "options.hpp"

namespace corral::cli {
namespace {

struct DoctorOptions {
  std::string provider;
  bool all = false;  // every installed provider
  bool json = false;
};

struct Section {
  std::string name;
  std::vector<DoctorCheck> checks;
};

// Registry problems come first: they explain a provider that is missing.
std::vector<DoctorCheck> registry_checks(const Registry& registry) {
  std::vector<DoctorCheck> checks;
  for (const RegistrySource& s : registry.sources()) {
    // A registry file refused whole is its own failure, not a fine file and a bad plugin.
    const auto refused = std::find_if(registry.entries().begin(), registry.entries().end(), [&](const ProviderEntry& e) {
      return !e.ok() && e.library.empty() && e.source.file == s.file;
    });
    if (refused == registry.entries().end())
      checks.push_back({"registry " + s.file.string(), true, s.origin, ""});
    else
      checks.push_back({"registry " + s.file.string(), false, refused->error->message,
                        "fix the file: none of the plugins it lists is loaded until then"});
  }
  for (const ProviderEntry& e : registry.entries())
    if (!e.ok() && !e.library.empty())
      checks.push_back({"plugin " + e.name, false, e.error->message, "fix or remove this registry entry"});
  if (registry.sources().empty())
    checks.push_back({"registries", false, "no registry found",
                      "reinstall corral: share/corral/providers.yaml belongs beside bin/corral"});
  return checks;
}

// Leases that need the user: corrupt claim files and leases a killed corral left.
std::vector<DoctorCheck> lease_checks(const ClaimStore& claims) {
  std::vector<DoctorCheck> checks;
  size_t fine = 0;
  for (const LeaseRow& row : list_leases(claims)) {
    if (row.state == LeaseState::corrupt)
      checks.push_back({"lease " + row.file.lease_id, false, "corrupt claim: " + row.file.problem,
                        "`" + cleanup_command("", row.file.lease_id) + "` removes it"});
    else if (row.state == LeaseState::abandoned)
      checks.push_back({"lease " + row.file.claim->slug, false, "abandoned by a corral that died",
                        "`corral stop --orphans` removes it"});
    else
      ++fine;
  }
  checks.push_back({"lease claims readable", true, fmt::format("{} in use or kept", fine), ""});
  return checks;
}

// The provider's own checks, or the one failure that it would not load or open.
std::vector<DoctorCheck> provider_checks(Context& ctx, const std::string& name, const ProviderChoice& choice) {
  try {
    auto session = ctx.providers.open(name, choice, ctx.ui);
    return session->doctor();
  } catch (const Error& e) {
    return {{"provider loads and accepts its settings", false, e.what(), e.hint()}};
  }
}

void write_json(json::Writer& w, const std::vector<Section>& sections, bool healthy) {
  w.StartObject();
  w.Key("ok");
  w.Bool(healthy);
  w.Key("sections");
  w.StartArray();
  for (const Section& section : sections) {
    w.StartObject();
    json::write_string(w, "name", section.name);
    w.Key("checks");
    w.StartArray();
    for (const DoctorCheck& c : section.checks) json::write_check(w, c);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

std::string text_of(const std::vector<Section>& sections) {
  std::string text;
  for (const Section& section : sections) {
    text += section.name + ":\n";
    for (const DoctorCheck& c : section.checks) {
      text += fmt::format("  [{}] {}{}\n", c.ok ? "ok" : "FAIL", c.name, c.detail.empty() ? "" : ": " + c.detail);
      if (!c.ok && !c.hint.empty()) text += fmt::format("         hint: {}\n", c.hint);
    }
  }
  return text;
}

int doctor_command(Context& ctx, const DoctorOptions& o) {
  std::vector<Section> sections{{"registry", registry_checks(ctx.registry())}, {"leases", lease_checks(ctx.claims)}};
  const ProviderChoice choice = ctx.choice(o.provider);
  std::vector<std::string> names;
  if (o.all) names = ctx.registry().names();
  else names.push_back(ctx.providers.spec(ctx.providers.resolve(choice)).name);  // unknown: a usage error
  for (const std::string& name : names) sections.push_back({name, provider_checks(ctx, name, choice)});
  bool healthy = true;
  for (const Section& section : sections)
    for (const DoctorCheck& c : section.checks) healthy = healthy && c.ok;
  if (o.json) ctx.ui.out(json_line([&](json::Writer& w) { write_json(w, sections, healthy); }));
  else ctx.ui.out(text_of(sections));
  return healthy ? 0 : kExitUnavailable;
}

Runner define(CLI::App& app) {
  auto o = std::make_shared<DoctorOptions>();
  add_provider_option(app, o->provider);
  app.add_flag("--all", o->all, "Check every installed provider");
  add_json_flag(app, o->json);
  return [o](Context& ctx) { return doctor_command(ctx, *o); };
}

}  // namespace

const Command kDoctor = {
    .name = "doctor",
    .summary = "Check that corral and a provider can work here",
    .provider_options = true,
    .define = define,
};

}  // namespace corral::cli
