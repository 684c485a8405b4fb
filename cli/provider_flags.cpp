#include "provider_flags.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace corral::cli {

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
    if (arg.rfind("--", 0) != 0) {
      kept.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2), value;
    bool has_value = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    if (std::find(reserved.begin(), reserved.end(), name) != reserved.end()) {
      kept.push_back(arg);
      continue;
    }
    // The provider whose name (or alias) is the longest prefix "<provider>-".
    const ProviderSpec* spec = nullptr;
    std::string prefix;
    for (const ProviderEntry& e : registry.entries()) {
      if (!e.ok()) continue;
      const ProviderSpec& s = *e.spec;
      std::vector<std::string> names = s.aliases;
      names.push_back(s.name);
      for (const std::string& n : names)
        if (name.rfind(n + "-", 0) == 0 && n.size() + 1 > prefix.size()) {
          spec = &s;
          prefix = n + "-";
        }
    }
    if (!spec) {
      kept.push_back(arg);
      continue;
    }
    std::string option = name.substr(prefix.size());
    if (!spec->find_option(option)) {
      std::vector<std::string> valid;
      for (const OptionSpec& o : spec->options)
        if (!o.secret) valid.push_back(spec->flag(o));  // a secret is never a flag
      throw Error(ErrorCode::invalid_argument, fmt::format("unknown option --{}", name),
                  valid.empty() ? fmt::format("provider '{}' takes no options", spec->name)
                                : fmt::format("provider '{}' takes: {}", spec->name, fmt::join(valid, ", ")));
    }
    if (const OptionSpec* o = spec->find_option(option); o->secret)
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("--{} would put a secret on the command line (visible in ps and shell history)", name),
                  o->env.empty() ? fmt::format("set it under '{}:' in ~/.config/corral/config.yaml", spec->name)
                                 : fmt::format("export {}=... instead", o->env.front()));
    if (!has_value) {
      if (i + 1 >= args.size() || args[i + 1] == "--")
        throw Error(ErrorCode::invalid_argument, fmt::format("--{} needs a value", name),
                    fmt::format("write --{} VALUE or --{}=VALUE", name, name));
      value = args[++i];
    }
    flags[spec->name + "." + option] = value;
  }
  args = std::move(kept);
  return flags;
}

}  // namespace corral::cli
