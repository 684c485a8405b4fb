#include "corral/sdk/setting_names.hpp"

namespace corral::sdk {

const OptionSpec& SettingNames::option(std::string_view name) const {
  // A message naming an option the spec lacks is the plugin's bug: say so, not a wrong hint.
  const OptionSpec* found = spec_.find_option(name);
  if (!found)
    throw Error(ErrorCode::internal, "provider '" + spec_.name + "' has no option '" + std::string(name) + "'");
  return *found;
}

std::string SettingNames::flag(std::string_view name) const { return spec_.flag(option(name)); }

std::string SettingNames::env(std::string_view name) const {
  const OptionSpec& o = option(name);
  if (o.env.empty())
    throw Error(ErrorCode::internal,
                "option '" + o.name + "' of provider '" + spec_.name + "' has no environment variable");
  return o.env.front();
}

std::string SettingNames::either(std::string_view name) const { return flag(name) + " or " + env(name); }

std::string SettingNames::aside(std::string_view name) const { return flag(name) + " (or " + env(name) + ")"; }

}  // namespace corral::sdk
