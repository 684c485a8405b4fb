// Options several commands share, registered with one spelling and one help text.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace corral::cli {

// The value names of options whose values shell completion can list (it goes by these):
// a provider's name or alias, a kept lease's id or slug, and a shell completion knows.
inline constexpr const char* kProviderValue = "PROVIDER";
inline constexpr const char* kLeaseValue = "LEASE";
inline constexpr const char* kShellValue = "SHELL";
inline constexpr const char* kNetworkValue = "POLICY";

// Marks `option` as taking a kept lease's id or slug (LEASE): completion lists the leases,
// and an empty value is refused, never read as "no lease" (a fresh sandbox instead).
CLI::Option* names_lease(CLI::Option* option);
// --provider PROVIDER.
CLI::Option* add_provider_option(CLI::App& app, std::string& provider);
// --id LEASE: a kept lease by id or slug.
CLI::Option* add_lease_option(CLI::App& app, std::string& id);
// The required positional PROVIDER: a provider's name or alias.
CLI::Option* add_provider_argument(CLI::App& app, std::string& name);
// --json.
CLI::Option* add_json_flag(CLI::App& app, bool& json);
// --progress auto|never|json, checked by parse_progress_mode (progress_board.hpp) when run.
CLI::Option* add_progress_option(CLI::App& app, std::string& mode);

}  // namespace corral::cli
