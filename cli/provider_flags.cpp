#include "provider_flags.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace corral::cli {
namespace {

// A loaded provider's option the flag `--<name>` sets: the provider whose name (or alias)
// is the longest prefix "<provider>-", and the rest of the name.
struct FlagTarget {
  const ProviderSpec* spec = nullptr;
  std::string option;
};

FlagTarget target_of(const Registry& registry, const std::string& name) {
  FlagTarget target;
  size_t prefix = 0;
  for (const ProviderEntry& e : registry.entries()) {
    if (!e.ok()) continue;
    std::vector<std::string> names = e.spec->aliases;
    names.push_back(e.spec->name);
    for (const std::string& n : names)
      if (name.rfind(n + "-", 0) == 0 && n.size() + 1 > prefix) {
        target.spec = &*e.spec;
        prefix = n.size() + 1;
      }
  }
  if (target.spec) target.option = name.substr(prefix);
  return target;
}

// The option `--<name>` sets, or a usage error: an option the provider lacks (listing those
// it has) or a secret, which would show in ps and shell history.
const OptionSpec& option_of(const FlagTarget& target, const std::string& name) {
  const ProviderSpec& spec = *target.spec;
  const OptionSpec* o = spec.find_option(target.option);
  if (!o) {
    std::vector<std::string> valid;
    for (const OptionSpec& option : spec.options)
      if (!option.secret) valid.push_back(spec.flag(option));  // a secret is never a flag
    throw Error(ErrorCode::invalid_argument, fmt::format("unknown option --{}", name),
                valid.empty() ? fmt::format("provider '{}' takes no options", spec.name)
                              : fmt::format("provider '{}' takes: {}", spec.name, fmt::join(valid, ", ")));
  }
  if (o->secret)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("--{} would put a secret on the command line (visible in ps and shell history)", name),
                o->env.empty() ? fmt::format("set it under '{}:' in ~/.config/corral/config.yaml", spec.name)
                               : fmt::format("export {}=... instead", o->env.front()));
  return *o;
}

}  // namespace

StringMap take_provider_flags(std::vector<std::string>& args, const Registry& registry,
                              const std::vector<std::string>& reserved) {
  StringMap flags;
  std::vector<std::string> kept;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      kept.insert(kept.end(), args.begin() + static_cast<long>(i), args.end());
      break;
    }
    std::string name = arg.rfind("--", 0) == 0 ? arg.substr(2) : std::string();
    const size_t eq = name.find('=');
    const bool has_value = eq != std::string::npos;
    std::string value = has_value ? name.substr(eq + 1) : std::string();
    if (has_value) name.resize(eq);
    const FlagTarget target = name.empty() || std::find(reserved.begin(), reserved.end(), name) != reserved.end()
                                  ? FlagTarget{}
                                  : target_of(registry, name);
    if (!target.spec) {
      kept.push_back(arg);
      continue;
    }
    option_of(target, name);
    if (!has_value) {
      if (i + 1 >= args.size() || args[i + 1] == "--")
        throw Error(ErrorCode::invalid_argument, fmt::format("--{} needs a value", name),
                    fmt::format("write --{} VALUE or --{}=VALUE", name, name));
      value = args[++i];
    }
    flags[target.spec->name + "." + target.option] = value;
  }
  args = std::move(kept);
  return flags;
}

void refuse_provider_flags(const StringMap& flags, const Registry& registry, const std::string& command) {
  // The key names a loaded provider and one of its options: take_provider_flags made it.
  const std::string& key = flags.begin()->first;
  const size_t dot = key.find('.');
  const ProviderSpec& spec = *registry.find(key.substr(0, dot))->spec;
  const std::string flag = spec.flag(*spec.find_option(key.substr(dot + 1)));
  throw Error(ErrorCode::invalid_argument, fmt::format("{} is a provider option; `corral {}` takes none", flag, command));
}

}  // namespace corral::cli
