// Options several commands share, registered with one spelling and one help text.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace corral::cli {

// --provider NAME.
CLI::Option* add_provider_option(CLI::App& app, std::string& provider);
// --id LEASE: a kept lease by id or slug.
CLI::Option* add_lease_option(CLI::App& app, std::string& id);
// --json.
CLI::Option* add_json_flag(CLI::App& app, bool& json);
// --progress auto|never|json, checked by parse_progress_mode (progress_board.hpp) when run.
CLI::Option* add_progress_option(CLI::App& app, std::string& mode);

}  // namespace corral::cli
