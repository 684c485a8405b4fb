#include "corral/types.hpp"

#include <algorithm>
#include <cctype>
#include <tuple>

namespace corral {

std::string_view to_string(ProviderKind kind) {
  switch (kind) {
    case ProviderKind::delegated_run: return "delegated-run";
    case ProviderKind::ssh_lease: return "ssh-lease";
    case ProviderKind::service_control: return "service-control";
  }
  return "?";
}

std::optional<ProviderKind> parse_kind(std::string_view name) {
  for (ProviderKind k : kAllKinds)
    if (to_string(k) == name) return k;
  return std::nullopt;
}

std::string_view describe(ProviderKind kind) {
  switch (kind) {
    case ProviderKind::delegated_run: return "the provider runs the command itself and streams its output back; no SSH";
    case ProviderKind::ssh_lease: return "corral leases a machine from the provider and runs the command over SSH";
    case ProviderKind::service_control:
      return "corral starts and stops a service the provider hosts; commands run inside that service";
  }
  return "";
}

bool is_option_type(std::string_view type) {
  return type == "string" || type == "int" || type == "bool" || type == "duration" || decides_destination(type);
}

bool decides_destination(std::string_view type) {
  return type == "url" || type == "host" || type == "path" || type == "program";
}

std::vector<std::string> spec_problems(const ProviderSpec& spec) {
  static constexpr std::string_view kLocations[] = {"local", "cloud", "self-hosted"};
  auto blank = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); });
  };
  std::vector<std::string> problems;
  const std::pair<const char*, const std::string*> fields[] = {
      {"docs.category", &spec.docs.category}, {"docs.location", &spec.docs.location},
      {"docs.gpu", &spec.docs.gpu},           {"docs.cleanupOwner", &spec.docs.cleanup_owner},
      {"docs.bestFit", &spec.docs.best_fit},  {"docs.caveat", &spec.docs.caveat},
  };
  for (const auto& [name, value] : fields)
    if (blank(*value)) problems.push_back(std::string(name) + " is missing");
  if (!blank(spec.docs.location) &&
      std::find(std::begin(kLocations), std::end(kLocations), spec.docs.location) == std::end(kLocations))
    problems.push_back("docs.location is '" + spec.docs.location + "', not one of local, cloud, self-hosted");
  // A meaning of a feature the provider does not advertise would describe nothing.
  for (const auto& [field, value, feature] :
       {std::tuple{"docs.pause", &spec.docs.pause, Feature::pause_resume},
        std::tuple{"docs.fork", &spec.docs.fork, Feature::fork},
        std::tuple{"docs.network", &spec.docs.network, Feature::network_policy}})
    if (!value->empty() && !spec.features.has(feature))
      problems.push_back(std::string(field) + " is given but features lack " + std::string(to_string(feature)));
  if (spec.targets.empty()) problems.push_back("targets is missing");
  for (const OptionSpec& o : spec.options)
    if (blank(o.help)) problems.push_back("options '" + o.name + "': help is missing");
  // A sandbox paused when idle is only worth keeping if corral can resume it.
  if (std::find(spec.idle.begin(), spec.idle.end(), "pause") != spec.idle.end() &&
      !spec.features.has(Feature::pause_resume))
    problems.push_back("idle lists 'pause' but features lack pause-resume");
  // tree-sync says how the upload of archive-sync travels, not whether there is one.
  if (spec.features.has(Feature::tree_sync) && !spec.features.has(Feature::archive_sync))
    problems.push_back("features list tree-sync but not archive-sync");
  return problems;
}

const OptionSpec* ProviderSpec::find_option(std::string_view option_name) const {
  for (const OptionSpec& o : options)
    if (o.name == option_name) return &o;
  return nullptr;
}

bool ProviderSpec::answers_to(std::string_view n) const {
  return n == name || std::find(aliases.begin(), aliases.end(), n) != aliases.end();
}

}  // namespace corral
