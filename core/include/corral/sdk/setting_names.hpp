// How a provider's messages name its settings, read from its spec: a hint then names
// exactly the flag and the variable the user can set ("--e2b-workdir",
// "CORRAL_E2B_WORKDIR", "E2B_API_KEY"), and renaming an option renames it everywhere.
#pragma once

#include <string>
#include <string_view>

#include "corral/types.hpp"

namespace corral::sdk {

class SettingNames {
 public:
  // The names of `spec`'s options (build it from JSON text with json::spec_from_json).
  explicit SettingNames(ProviderSpec spec) : spec_(std::move(spec)) {}

  // The provider's name, as --provider takes it ("e2b").
  const std::string& provider() const { return spec_.name; }
  // "--e2b-workdir": the flag of `option`; throws Error(internal) when the spec has no such option.
  std::string flag(std::string_view option) const;
  // "CORRAL_E2B_WORKDIR": the first variable of `option`; throws Error(internal) when it has none.
  std::string env(std::string_view option) const;
  // "--e2b-workdir or CORRAL_E2B_WORKDIR": both ways to set `option`.
  std::string either(std::string_view option) const;
  // "--e2b-workdir (or CORRAL_E2B_WORKDIR)": both ways, for the middle of a sentence.
  std::string aside(std::string_view option) const;

 private:
  // The option named `name`; throws Error(internal) naming it when the spec lacks it.
  const OptionSpec& option(std::string_view name) const;

  ProviderSpec spec_;
};

}  // namespace corral::sdk
