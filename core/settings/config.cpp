#include "settings/config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "corral/errors.hpp"
#include "corral/os/read_file.hpp"
#include "corral/option_default.hpp"
#include "base/did_you_mean.hpp"
#include "base/env_file.hpp"
#include "base/paths.hpp"

namespace fs = std::filesystem;

namespace corral {
namespace {

// A settings file is a few lines: anything larger is a mistake or an attack.
constexpr std::uint64_t kMaxConfigBytes = 1 << 20;

// The top-level keys that are settings; every other key names a provider's section.
const std::vector<std::string> kSettingKeys = {"provider", "env",    "network", "idle",
                                               "secrets",  "limits", "prices"};

std::optional<ConfigFile> read(const fs::path& path) {
  std::optional<std::string> text;
  try {
    text = os::read_regular_file(path, kMaxConfigBytes, "config file");
  } catch (const Error& e) {
    throw ConfigError(e.what(), e.hint());
  }
  if (!text) return std::nullopt;
  try {
    return ConfigFile{path, YAML::Load(*text)};
  } catch (const YAML::Exception& e) {
    throw ConfigError(fmt::format("{}: {}", path.string(), e.what()));
  }
}

// What a node is, for "must be X, not Y" messages.
std::string_view shape_of(const YAML::Node& node) {
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  if (node.IsNull()) return "empty";
  return "a single value";
}

// The text of a scalar node; nullopt when absent or null. Any other shape is a
// ConfigError "FILE: 'KEY' must be EXPECTED, not a list", never yaml-cpp's
// TypedBadConversion (which would surface as an internal error).
std::optional<std::string> scalar(const YAML::Node& node, const ConfigFile& file, const std::string& key,
                                  std::string_view expected) {
  if (!node || node.IsNull()) return std::nullopt;
  if (!node.IsScalar())
    throw ConfigError(fmt::format("{}: '{}' must be {}, not {}", file.path.string(), key, expected, shape_of(node)));
  return node.Scalar();
}

// The text of a mapping key; a list or mapping as a key is a ConfigError naming `where`.
std::string key_name(const YAML::Node& key, const ConfigFile& file, std::string_view where) {
  if (!key.IsScalar())
    throw ConfigError(fmt::format("{}: {} must be names, not {}", file.path.string(), where, shape_of(key)));
  return key.Scalar();
}

// The section `<provider>:` of `file`, checked to be a mapping of option: single value;
// an undefined node when absent.
YAML::Node provider_section(const ConfigFile& file, const std::string& provider) {
  if (!file.root.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  YAML::Node section = file.root[provider];
  if (!section || section.IsNull()) return YAML::Node(YAML::NodeType::Undefined);
  if (!section.IsMap())
    throw ConfigError(fmt::format("{}: '{}' must be a mapping of option: value, not {}", file.path.string(), provider,
                                  shape_of(section)),
                      fmt::format("for example:\n  {}:\n    OPTION: VALUE", provider));
  for (const auto& kv : section) {
    const std::string key = key_name(kv.first, file, fmt::format("the option keys under '{}'", provider));
    scalar(kv.second, file, provider + "." + key, "a single value");
  }
  return section;
}

// The policy `node` holds (named `key` in messages); a ConfigError naming the file when
// it is not one.
NetworkPolicy network_value(const ConfigFile& file, const YAML::Node& node, const std::string& key) {
  std::string text = scalar(node, file, key, "a network policy (open, none or allow:HOST,...)").value_or("");
  try {
    return parse_network_policy(text);
  } catch (const Error& e) {
    throw ConfigError(fmt::format("{}: '{}': {}", file.path.string(), key, e.what()), e.hint());
  }
}

// 'network' is one policy, or a mapping of provider name to policy.
void check_network(const ConfigFile& file, const YAML::Node& node) {
  if (!node.IsMap()) {
    network_value(file, node, "network");
    return;
  }
  for (const auto& kv : node)
    network_value(file, kv.second, "network." + key_name(kv.first, file, "the provider names under 'network'"));
}

// The fields a secret's declaration may have.
const std::vector<std::string> kSecretKeys = {"hosts", "from", "header", "format"};

// Checks `secrets: {NAME: {hosts: [...], from, header, format}}`; returns the declaration
// of `wanted` when it is there.
std::optional<SecretDeclaration> check_secrets(const ConfigFile& file, const YAML::Node& node,
                                               const std::string& wanted = {}) {
  std::optional<SecretDeclaration> found;
  if (node.IsNull()) return found;
  if (!node.IsMap())
    throw ConfigError(fmt::format("{}: 'secrets' must be a mapping of variable names to their declarations, not {}",
                                  file.path.string(), shape_of(node)));
  for (const auto& kv : node) {
    const std::string name = key_name(kv.first, file, "the names under 'secrets'");
    const std::string where = "secrets." + name;
    if (!is_env_name(name))
      throw ConfigError(fmt::format("{}: '{}' is no variable name", file.path.string(), where));
    if (!kv.second.IsMap())
      throw ConfigError(fmt::format("{}: '{}' must be a mapping (hosts, from, header, format), not {}",
                                    file.path.string(), where, shape_of(kv.second)));
    SecretDeclaration d;
    d.file = file.path;
    for (const auto& field : kv.second) {
      const std::string key = key_name(field.first, file, "the fields of '" + where + "'");
      if (std::find(kSecretKeys.begin(), kSecretKeys.end(), key) == kSecretKeys.end()) {
        const std::optional<std::string> near = nearest(key, kSecretKeys, 2);
        throw ConfigError(fmt::format("{}: '{}.{}' is no field of a secret{}", file.path.string(), where, key,
                                      near ? fmt::format(" (did you mean '{}'?)", *near) : ""),
                          "a secret has hosts, from, header and format");
      }
    }
    const YAML::Node hosts = kv.second["hosts"];
    if (!hosts || !hosts.IsSequence() || hosts.size() == 0)
      throw ConfigError(fmt::format("{}: '{}.hosts' must be a list of the hosts it may be sent to", file.path.string(),
                                    where));
    for (std::size_t i = 0; i < hosts.size(); ++i)
      d.hosts.push_back(scalar(hosts[i], file, fmt::format("{}.hosts[{}]", where, i), "a host").value_or(""));
    d.from = scalar(kv.second["from"], file, where + ".from", "env:VAR, file:PATH or command:ARGV").value_or("");
    if (!d.from.empty() && d.from.rfind("env:", 0) != 0 && d.from.rfind("file:", 0) != 0 &&
        d.from.rfind("command:", 0) != 0)
      throw ConfigError(fmt::format("{}: '{}.from' must be env:VAR, file:PATH or command:ARGV, not '{}'",
                                    file.path.string(), where, d.from));
    d.header = scalar(kv.second["header"], file, where + ".header", "a header name").value_or(d.header);
    if (d.header.empty() || d.header.find_first_of(" :\t\r\n") != std::string::npos)
      throw ConfigError(fmt::format("{}: '{}.header' must be a header name, not '{}'", file.path.string(), where,
                                    d.header));
    d.format = scalar(kv.second["format"], file, where + ".format", "a text with {}").value_or(d.format);
    if (d.format.find("{}") == std::string::npos || d.format.find_first_of("\r\n") != std::string::npos)
      throw ConfigError(fmt::format("{}: '{}.format' must hold {{}} where the value goes, on one line, not '{}'",
                                    file.path.string(), where, d.format));
    if (name == wanted) found = std::move(d);
  }
  return found;
}

// The fields one provider's entry under `limits:` may have.
const std::vector<std::string> kLimitKeys = {"sandboxes", "creates-per-minute", "sandbox-hours-per-day"};

// A number above 0 (and below a million) under `where`, as YAML writes it: "8", "0.5".
double positive_number(const ConfigFile& file, const YAML::Node& node, const std::string& where,
                       std::string_view expected, bool zero_ok = false) {
  const std::string text = scalar(node, file, where, expected).value_or("");
  double value = -1;
  const bool numeric = !text.empty() && text.size() <= 12 && text.find_first_not_of("0123456789.") == std::string::npos &&
                       std::count(text.begin(), text.end(), '.') <= 1 && text.front() != '.' && text.back() != '.';
  if (numeric) value = std::stod(text);
  if (!(value > 0 || (zero_ok && value == 0)) || value >= 1e6)
    throw ConfigError(fmt::format("{}: '{}' must be {}, not '{}'", file.path.string(), where, expected, text));
  return value;
}

// A whole number of 1 or more under `where`.
int positive_count(const ConfigFile& file, const YAML::Node& node, const std::string& where) {
  const std::string text = scalar(node, file, where, "a whole number of 1 or more").value_or("");
  int value = 0;
  const bool digits = !text.empty() && text.size() <= 6 && text.find_first_not_of("0123456789") == std::string::npos;
  if (digits) value = std::stoi(text);
  if (value < 1)
    throw ConfigError(fmt::format("{}: '{}' must be a whole number of 1 or more, not '{}'", file.path.string(), where,
                                  text),
                      "leave it out for no limit");
  return value;
}

// Checks `limits: {NAME|default: {sandboxes: N, creates-per-minute: N}}`; returns the
// entry of `wanted` when there is one.
std::optional<ProviderLimits> check_limits(const ConfigFile& file, const YAML::Node& node,
                                           const std::string& wanted = {}) {
  std::optional<ProviderLimits> found;
  if (node.IsNull()) return found;
  if (!node.IsMap())
    throw ConfigError(fmt::format("{}: 'limits' must be a mapping of provider names (or 'default') to their "
                                  "limits, not {}",
                                  file.path.string(), shape_of(node)),
                      "for example:\n  limits:\n    e2b: {sandboxes: 20, creates-per-minute: 60}\n    default: "
                      "{sandboxes: 50}");
  for (const auto& kv : node) {
    const std::string name = key_name(kv.first, file, "the provider names under 'limits'");
    const std::string where = "limits." + name;
    if (!kv.second.IsMap())
      throw ConfigError(fmt::format("{}: '{}' must be a mapping (sandboxes, creates-per-minute, "
                                    "sandbox-hours-per-day), not {}",
                                    file.path.string(), where, shape_of(kv.second)));
    ProviderLimits limits;
    for (const auto& field : kv.second) {
      const std::string key = key_name(field.first, file, "the fields of '" + where + "'");
      if (key == "sandboxes") {
        limits.sandboxes = positive_count(file, field.second, where + "." + key);
      } else if (key == "creates-per-minute") {
        limits.creates_per_minute = positive_count(file, field.second, where + "." + key);
      } else if (key == "sandbox-hours-per-day") {
        limits.sandbox_hours_per_day =
            positive_number(file, field.second, where + "." + key, "a number of hours above 0, such as 8 or 0.5");
      } else {
        const std::optional<std::string> near = nearest(key, kLimitKeys, 3);
        throw ConfigError(fmt::format("{}: '{}.{}' is no limit{}", file.path.string(), where, key,
                                      near ? fmt::format(" (did you mean '{}'?)", *near) : ""),
                          "a provider's limits are sandboxes, creates-per-minute and sandbox-hours-per-day");
      }
    }
    if (name == wanted) found = limits;
  }
  return found;
}

// Checks `prices: {NAME: PRICE}` (of a sandbox-hour); returns the price of `wanted`.
std::optional<double> check_prices(const ConfigFile& file, const YAML::Node& node, const std::string& wanted = {}) {
  std::optional<double> found;
  if (node.IsNull()) return found;
  if (!node.IsMap())
    throw ConfigError(fmt::format("{}: 'prices' must be a mapping of provider names to the price of a sandbox-hour, "
                                  "not {}",
                                  file.path.string(), shape_of(node)),
                      "for example:\n  prices:\n    e2b: 0.083");
  for (const auto& kv : node) {
    const std::string name = key_name(kv.first, file, "the provider names under 'prices'");
    const double price =
        positive_number(file, kv.second, "prices." + name, "the price of a sandbox-hour, such as 0.083", true);
    if (name == wanted) found = price;
  }
  return found;
}

// Checks the shape of everything a settings file holds that corral knows how to read:
// a mapping whose keys are names, 'provider' a name, 'env' a list of names, and each
// mapping below the top a provider section of option: single value.
void check_shape(const ConfigFile& file) {
  if (file.root.IsNull()) return;
  if (!file.root.IsMap())
    throw ConfigError(
        fmt::format("{}: expected a mapping of settings, not {}", file.path.string(), shape_of(file.root)));
  for (const auto& kv : file.root) {
    const std::string key = key_name(kv.first, file, "the top-level keys");
    if (key == "provider") {
      scalar(kv.second, file, key, "a provider name");
    } else if (key == "env") {
      if (!kv.second.IsSequence() && !kv.second.IsNull())
        throw ConfigError(fmt::format("{}: 'env' must be a list of variable names, not {}", file.path.string(),
                                      shape_of(kv.second)));
      for (std::size_t i = 0; i < kv.second.size(); ++i)
        if (!scalar(kv.second[i], file, fmt::format("env[{}]", i), "a variable name"))
          throw ConfigError(fmt::format("{}: 'env[{}]' must be a variable name, not empty", file.path.string(), i));
    } else if (key == "network") {
      check_network(file, kv.second);
    } else if (key == "secrets") {
      check_secrets(file, kv.second);
    } else if (key == "limits") {
      check_limits(file, kv.second);
    } else if (key == "prices") {
      check_prices(file, kv.second);
    } else if (key == "idle") {
      const std::string action = scalar(kv.second, file, key, "pause or stop").value_or("");
      if (std::find(kIdleActions.begin(), kIdleActions.end(), action) == kIdleActions.end())
        throw ConfigError(fmt::format("{}: 'idle' must be pause or stop, not '{}'", file.path.string(), action));
    } else if (kv.second.IsMap() || kv.second.IsNull()) {
      provider_section(file, key);  // which providers there are is known later: section_names()
    } else {
      // A value no setting takes: a typo must not leave the user thinking it applies.
      // At most one edit in two letters: "idel" is idle's, "e2b" is no one's.
      const std::optional<std::string> near = nearest(key, kSettingKeys, std::min<std::size_t>(2, key.size() / 2));
      throw ConfigError(fmt::format("{}: '{}' is no setting{}, nor a provider's section (a mapping of option: "
                                    "value, not {})",
                                    file.path.string(), key, near ? fmt::format(" (did you mean '{}'?)", *near) : "",
                                    shape_of(kv.second)),
                        fmt::format("the settings are {}, and a mapping of options per provider (local:, e2b:, ...)",
                                    fmt::join(kSettingKeys, ", ")));
    }
  }
}

}  // namespace

Config Config::load(const fs::path& workspace_root) {
  std::optional<ConfigFile> repository = read(workspace_root / "corral.yaml");
  if (!repository) repository = read(workspace_root / ".corral.yaml");
  return from(read(paths::config_dir() / "config.yaml"), std::move(repository));
}

Config Config::from(std::optional<ConfigFile> user, std::optional<ConfigFile> repository) {
  if (repository && repository->root.IsMap()) {
    if (repository->root["env"])
      throw ConfigError(fmt::format("{}: 'env' is not allowed in a repository's config: a repository must not "
                                    "choose which of your environment variables leave this machine",
                                    repository->path.string()),
                        "forward variables with --env NAME, or list them under 'env:' in ~/.config/corral/config.yaml");
    if (repository->root["secrets"])
      throw ConfigError(fmt::format("{}: 'secrets' is not allowed in a repository's config: a repository must not "
                                    "choose which of your secrets a command may use, nor where they go",
                                    repository->path.string()),
                        "declare secrets under 'secrets:' in ~/.config/corral/config.yaml, or pass --secret NAME=HOST");
    if (repository->root["prices"])
      throw ConfigError(fmt::format("{}: 'prices' is not allowed in a repository's config: what your sandboxes cost "
                                    "is yours to say",
                                    repository->path.string()),
                        "set prices under 'prices:' in ~/.config/corral/config.yaml");
    if (repository->root["limits"])
      throw ConfigError(fmt::format("{}: 'limits' is not allowed in a repository's config: how many sandboxes this "
                                    "machine runs at once is yours to say, for every checkout alike",
                                    repository->path.string()),
                        "set limits under 'limits:' in ~/.config/corral/config.yaml");
    for (const char* forbidden : {"plugins", "registry", "registries"})
      if (repository->root[forbidden])
        throw ConfigError(fmt::format("{}: '{}' is not allowed in a repository's config: a repository may "
                                      "choose a provider and its options, never load code",
                                      repository->path.string(), forbidden),
                          "install plugins through a registry in ~/.config/corral/providers.d/ or "
                          "/etc/corral/providers.d/");
  }
  // After the trust checks, so a repository's forbidden key is named as such first.
  for (const auto* layer : {&user, &repository})
    if (*layer) check_shape(**layer);
  Config c;
  c.user_ = std::move(user);
  c.repository_ = std::move(repository);
  return c;
}

std::optional<std::string> Config::provider(std::string* from) const {
  for (const auto* layer : {&repository_, &user_}) {
    if (!*layer || !(*layer)->root.IsMap()) continue;
    if (auto v = scalar((*layer)->root["provider"], **layer, "provider", "a provider name")) {
      if (from) *from = (*layer)->path.string();
      return v;
    }
  }
  return std::nullopt;
}

std::optional<std::string> Config::idle(std::string* from) const {
  for (const auto* layer : {&repository_, &user_}) {
    if (!*layer || !(*layer)->root.IsMap()) continue;
    if (auto v = scalar((*layer)->root["idle"], **layer, "idle", "pause or stop")) {
      if (from) *from = (*layer)->path.string();
      return v;
    }
  }
  return std::nullopt;
}

std::optional<std::filesystem::path> Config::repository_path() const {
  if (!repository_) return std::nullopt;
  return repository_->path;
}

std::optional<std::string> Config::option(const std::string& provider, const std::string& option,
                                          std::string* from, bool user_only) const {
  for (const auto* layer : {&repository_, &user_}) {
    if (!*layer || !(*layer)->root.IsMap()) continue;
    if (user_only && layer == &repository_) continue;
    YAML::Node section = provider_section(**layer, provider);
    if (!section) continue;
    if (auto v = scalar(section[option], **layer, provider + "." + option, "a single value")) {
      if (from) *from = (*layer)->path.string();
      return v;
    }
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> Config::section_names() const {
  std::vector<std::pair<std::string, std::string>> names;
  for (const auto* layer : {&repository_, &user_}) {
    if (!*layer || !(*layer)->root.IsMap()) continue;
    const std::string file = (*layer)->path.string();
    for (const auto& kv : (*layer)->root) {
      const std::string key = kv.first.Scalar();
      if (key == "network" && kv.second.IsMap()) {
        for (const auto& by_provider : kv.second) names.emplace_back(by_provider.first.Scalar(), file);
      } else if (std::find(kSettingKeys.begin(), kSettingKeys.end(), key) == kSettingKeys.end()) {
        names.emplace_back(key, file);
      }
    }
  }
  return names;
}

std::vector<std::pair<std::string, std::string>> Config::option_keys(const std::string& provider) const {
  std::vector<std::pair<std::string, std::string>> keys;
  for (const auto* layer : {&repository_, &user_}) {
    if (!*layer || !(*layer)->root.IsMap()) continue;
    YAML::Node section = provider_section(**layer, provider);
    if (!section) continue;
    for (const auto& kv : section) keys.emplace_back(kv.first.Scalar(), (*layer)->path.string());
  }
  return keys;
}

std::optional<NetworkPolicy> Config::network(const ProviderSpec& spec, bool repository, std::string* from) const {
  const std::optional<ConfigFile>& layer = repository ? repository_ : user_;
  if (!layer || !layer->root.IsMap()) return std::nullopt;
  YAML::Node node = layer->root["network"];
  if (!node || node.IsNull()) return std::nullopt;
  if (from) *from = layer->path.string();
  if (!node.IsMap()) return network_value(*layer, node, "network");
  for (const auto& kv : node) {
    const std::string name = key_name(kv.first, *layer, "the provider names under 'network'");
    if (spec.answers_to(name)) return network_value(*layer, kv.second, "network." + name);
  }
  return std::nullopt;
}

std::vector<std::string> Config::env_names() const {
  std::vector<std::string> names;
  for (const auto* layer : {&user_}) {
    if (!*layer || !(*layer)->root.IsMap()) continue;
    YAML::Node env = (*layer)->root["env"];
    if (!env || env.IsNull()) continue;
    if (!env.IsSequence())
      throw ConfigError(fmt::format("{}: 'env' must be a list of variable names, not {}", (*layer)->path.string(),
                                    shape_of(env)));
    for (std::size_t i = 0; i < env.size(); ++i) {
      std::string name = scalar(env[i], **layer, fmt::format("env[{}]", i), "a variable name").value_or("");
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  return names;
}

std::optional<SecretDeclaration> Config::secret(const std::string& name) const {
  if (!user_ || !user_->root.IsMap() || !user_->root["secrets"]) return std::nullopt;
  return check_secrets(*user_, user_->root["secrets"], name);
}

ProviderLimits Config::limits(const std::string& name, const std::vector<std::string>& aliases) const {
  if (!user_ || !user_->root.IsMap() || !user_->root["limits"]) return {};
  const YAML::Node node = user_->root["limits"];
  if (auto own = check_limits(*user_, node, name)) return *own;
  for (const std::string& alias : aliases)
    if (auto by_alias = check_limits(*user_, node, alias)) return *by_alias;
  return check_limits(*user_, node, "default").value_or(ProviderLimits{});
}

std::optional<double> Config::price_per_hour(const std::string& name, const std::vector<std::string>& aliases) const {
  if (!user_ || !user_->root.IsMap() || !user_->root["prices"]) return std::nullopt;
  const YAML::Node node = user_->root["prices"];
  if (auto own = check_prices(*user_, node, name)) return own;
  for (const std::string& alias : aliases)
    if (auto by_alias = check_prices(*user_, node, alias)) return by_alias;
  return std::nullopt;
}

std::string Config::env_file() const { return user_ ? user_->path.string() : std::string("the user config"); }

void validate_option(const OptionSpec& option, const std::string& value, const std::string& source) {
  auto bad = [&](const std::string& expected) {
    return Error(ErrorCode::invalid_argument,
                 fmt::format("option '{}' (from {}) must be {}, not '{}'", option.name, source, expected,
                             option.secret ? std::string("***") : value));
  };
  if (option.type == "int") {
    if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos) throw bad("a whole number");
  } else if (option.type == "bool") {
    static const char* ok[] = {"true", "false", "1", "0", "yes", "no", "on", "off"};
    if (std::find(std::begin(ok), std::end(ok), value) == std::end(ok)) throw bad("true or false");
  } else if (option.type == "duration") {
    try {
      parse_duration(value);
    } catch (const Error&) {
      throw bad("a duration like 90s, 15m or 2h");
    }
  }
  if (!option.choices.empty() && std::find(option.choices.begin(), option.choices.end(), value) == option.choices.end())
    throw bad(fmt::format("one of {}", fmt::join(option.choices, ", ")));
}

namespace {

// Where `value` stands among a tightest-first option's choices (0 = tightest).
size_t tightness(const OptionSpec& option, const std::string& value) {
  return static_cast<size_t>(std::find(option.choices.begin(), option.choices.end(), value) - option.choices.begin());
}

// `from_repository` (a repository's value of a tightest-first option) replaced by what the
// user's config or the default gives when that is tighter: a checkout must not loosen the
// isolation the user chose.
void keep_within_user_choice(const OptionSpec& option, const ProviderSpec& spec, const Config& config,
                             ResolvedOption& from_repository) {
  std::string user_file;
  std::optional<ResolvedOption> user;
  if (auto v = config.option(spec.name, option.name, &user_file, /*user_only=*/true)) user = ResolvedOption{*v, user_file};
  else if (option.default_value) user = ResolvedOption{*option.default_value, "default"};
  if (!user || tightness(option, from_repository.value) <= tightness(option, user->value)) return;
  validate_option(option, user->value, user->source);
  user->warning = fmt::format(
      "{} sets {}.{}: {}, which is looser than '{}' from {}: a repository may only tighten isolation, so '{}' "
      "applies (pass --{}-{} to choose yourself)",
      from_repository.source, spec.name, option.name, from_repository.value, user->value,
      user->source == "default" ? "the default" : user->source, user->value, spec.name, option.name);
  from_repository = std::move(*user);
}

}  // namespace

std::map<std::string, ResolvedOption> resolve_options(const ProviderSpec& spec, const StringMap& flags,
                                                      const EnvLookup& env, const Config& config) {
  const auto repository = config.repository_path();
  for (const auto& [key, file] : config.option_keys(spec.name)) {
    const OptionSpec* known = spec.find_option(key);
    if (known && known->secret && repository && file == repository->string())
      throw ConfigError(fmt::format("{}: '{}.{}' may not be set by a repository's config: it is a secret, and a "
                                    "repository's files are shared with everyone who can read it",
                                    file, spec.name, key),
                        // Never a flag: corral refuses secrets on the command line.
                        known->env.empty()
                            ? std::string("set it in your own ~/.config/corral/config.yaml")
                            : fmt::format("export {}, or set it in your own ~/.config/corral/config.yaml",
                                          known->env.front()));
    if (known && known->trusted && repository && file == repository->string())
      throw ConfigError(fmt::format("{}: '{}.{}' may not be set by a repository's config: it decides where your "
                                    "credentials go or what runs on this machine",
                                    file, spec.name, key),
                        fmt::format("set it with --{}-{}{} or in your own ~/.config/corral/config.yaml", spec.name,
                                    key, known->env.empty() ? std::string() : ", " + known->env.front()));
    if (!known) {
      std::vector<std::string> valid;
      for (const auto& o : spec.options) valid.push_back(o.name);
      throw ConfigError(fmt::format("{}: '{}' has no option '{}'", file, spec.name, key),
                  valid.empty() ? std::string("this provider takes no options")
                                : fmt::format("its options are: {}", fmt::join(valid, ", ")));
    }
  }
  std::map<std::string, ResolvedOption> out;
  for (const OptionSpec& o : spec.options) {
    std::optional<ResolvedOption> r;
    if (auto it = flags.find(o.name); it != flags.end()) {
      r = ResolvedOption{it->second, fmt::format("flag --{}-{}", spec.name, o.name)};
    }
    for (size_t i = 0; !r && i < o.env.size(); ++i)
      if (auto v = env(o.env[i]); v && !v->empty()) r = ResolvedOption{*v, "env " + o.env[i]};
    if (!r) {
      std::string from;
      if (auto v = config.option(spec.name, o.name, &from, o.secret || o.trusted)) r = ResolvedOption{*v, from};
    }
    if (!r && o.default_value) r = ResolvedOption{expand_option_default(*o.default_value, env), "default"};
    if (!r) continue;
    validate_option(o, r->value, r->source);
    if (o.tightest_first && repository && r->source == repository->string()) keep_within_user_choice(o, spec, config, *r);
    out.emplace(o.name, std::move(*r));
  }
  return out;
}

}  // namespace corral
