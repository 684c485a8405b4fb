#include "plugin_host/providers.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "base/did_you_mean.hpp"
#include "base/env_file.hpp"
#include "base/printable.hpp"

namespace corral {
namespace {

constexpr const char* kDefaultProvider = "local";

}  // namespace

Providers::Providers(std::function<const Registry&()> registry, const Config& config, EnvLookup env,
                     MakeInstance make_instance)
    : registry_(std::move(registry)), config_(config), env_(std::move(env)), make_instance_(std::move(make_instance)) {}

std::string Providers::resolve(const ProviderChoice& choice, std::string* from) const {
  auto said = [&](const std::string& source) {
    if (from) *from = source;
  };
  if (!choice.provider.empty()) {
    said("--provider");
    return choice.provider;
  }
  if (auto v = env_("CORRAL_PROVIDER"); v && !v->empty()) {
    said("CORRAL_PROVIDER");
    return *v;
  }
  std::string file;
  if (auto v = config_.provider(&file)) {
    said(file);
    return *v;
  }
  said("default");
  return kDefaultProvider;
}

void Providers::require(const ProviderSpec& spec, Feature feature, std::string_view what,
                        const std::vector<std::string>& having) {
  if (spec.features.has(feature)) return;
  const std::string listing =
      fmt::format("`corral providers --feature {}` lists the providers that have it", to_string(feature));
  throw Error(ErrorCode::unsupported,
              fmt::format("{} needs the '{}' feature, which provider '{}' does not have", what, to_string(feature),
                          spec.name),
              having.empty() ? listing
                             : fmt::format("the installed providers that have it: {}; {}", fmt::join(having, ", "),
                                           listing));
}

std::vector<std::string> Providers::having(Feature feature) const {
  std::vector<std::string> out;
  for (const ProviderEntry& e : registry_().entries())
    if (e.ok() && e.spec->features.has(feature)) out.push_back(e.name);
  return out;
}

const ProviderEntry& Providers::entry(const std::string& name) const { return registry_().entry(name); }

const ProviderSpec& Providers::spec(const std::string& name) const { return *entry(name).spec; }

void Providers::check_section_names() const {
  const Registry& registry = registry_();
  for (const auto& [name, file] : config_.section_names()) {
    if (registry.find(name) || registry.find_broken(name)) continue;
    const std::vector<std::string> known = registry.names();
    const std::optional<std::string> near = nearest(name, known);
    throw ConfigError(fmt::format("{}: '{}' is neither a setting nor an installed provider{}", file, name,
                                  near ? fmt::format(" (did you mean '{}'?)", *near) : ""),
                      fmt::format("the installed providers are {}; remove the section, or install its plugin",
                                  fmt::join(known, ", ")));
  }
}

StringMap Providers::option_values(const std::string& name, const ProviderChoice& choice,
                                   const std::function<void(const std::string&)>& warn) const {
  const ProviderSpec& spec = this->spec(name);
  check_section_names();
  StringMap flags;
  for (const auto& [key, value] : choice.option_flags) {
    size_t dot = key.find('.');
    std::string provider = key.substr(0, dot), option = key.substr(dot + 1);
    if (!spec.answers_to(provider))
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("--{}-{} is an option of provider '{}', but this command uses '{}'", provider, option,
                              provider, spec.name));
    flags[option] = value;
  }
  StringMap values;
  for (auto& [option, resolved] : resolve_options(spec, flags, env_, config_)) {
    if (!resolved.warning.empty() && warn) warn(resolved.warning);
    values[option] = resolved.value;
  }
  return values;
}

std::unique_ptr<ProviderSession> Providers::open(const std::string& name, const ProviderChoice& choice, Ui& ui) {
  const ProviderEntry& found = entry(name);
  const StringMap values = option_values(name, choice, [&ui](const std::string& m) { ui.warn(m); });
  HostHooks hooks;
  hooks.emit = [&ui](int stream, std::string_view data) {
    if (stream == CORRAL_STDERR) ui.err(data);
    else ui.out(data);
  };
  hooks.cancelled = [&ui] { return ui.cancelled(); };
  hooks.log = [&ui](int level, const std::string& message) {
    if (level >= CORRAL_LOG_WARN) ui.warn(message);
    else if (level == CORRAL_LOG_INFO) ui.info(message);
  };
  hooks.progress = [&ui](const std::string& message) { ui.progress(message); };
  hooks.stop_requests = [&ui] { return ui.stop_requests(); };
  hooks.stop_signal = [&ui] { return ui.stop_signal(); };
  hooks.read_input = [&ui](char* buffer, std::size_t capacity, int timeout_ms) {
    return ui.read_input(buffer, capacity, timeout_ms);
  };
  hooks.window_size = [&ui](std::uint16_t& rows, std::uint16_t& cols) { return ui.window_size(rows, cols); };
  ProviderEntry how = found;
  if (isolated_grace_) {
    how.isolation.mode = Isolation::process;
    how.isolation.cancel_grace = std::min(how.isolation.cancel_grace, *isolated_grace_);
  }
  return std::make_unique<ProviderSession>(make_instance_ ? make_instance_(how) : registry_().instance(how), values,
                                           std::move(hooks));
}

void Providers::refuse_secret(const std::string& name) const {
  // Any installed provider's secret, not just this one's: a local run must not leak the
  // E2B key either.
  for (const ProviderEntry& entry : registry_().entries()) {
    if (!entry.ok()) continue;
    for (const OptionSpec& o : entry.spec->options)
      if (o.secret && std::find(o.env.begin(), o.env.end(), name) != o.env.end())
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("refusing to forward {}: it holds provider '{}''s secret '{}'", name, entry.spec->name,
                                o.name),
                    "pass the command its own credential under another name");
  }
}

StringMap Providers::forwarded_env(const std::vector<std::string>& requested,
                                   const std::function<void(const std::string&)>& warn) const {
  StringMap env;
  // The config's list is for every run, in every environment: a name not set here is
  // left out, and said so. What the run asks for comes after, and wins.
  std::vector<std::string> unset_in_config;
  for (const std::string& name : config_.env_names()) {
    if (!is_env_name(name))
      throw ConfigError(fmt::format("{}: 'env' lists '{}', which is no variable name", config_.env_file(),
                                    printable(name)),
                        "a name is letters, digits and _, not first a digit");
    refuse_secret(name);
    if (auto value = env_(name)) env[name] = *value;
    else unset_in_config.push_back(name);
  }
  for (const std::string& item : requested) {
    const auto eq = item.find('=');
    const std::string name = item.substr(0, eq);
    if (!is_env_name(name))
      // Only the name is shown: what follows '=' may be a credential.
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("--env takes NAME or NAME=VALUE, not '{}{}'", printable(name),
                              eq == std::string::npos ? "" : "=…"),
                  "a name is letters, digits and _, not first a digit");
    if (eq != std::string::npos) {
      env[name] = item.substr(eq + 1);  // the user's own value: nothing of this machine's leaves with it
      continue;
    }
    refuse_secret(name);
    auto value = env_(name);
    if (!value)
      throw Error(ErrorCode::invalid_argument, fmt::format("--env {}: {} is not set in this environment", name, name),
                  fmt::format("export {}=... first, give its value with --env {}=VALUE, or drop it", name, name));
    env[name] = *value;
  }
  std::erase_if(unset_in_config, [&](const std::string& n) { return env.count(n) > 0; });
  if (!unset_in_config.empty() && warn)
    warn(fmt::format("not forwarded, as not set here: {} (the env list of {})", fmt::join(unset_in_config, ", "),
                     config_.env_file()));
  return env;
}

}  // namespace corral
