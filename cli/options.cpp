#include "options.hpp"

namespace corral::cli {

CLI::Option* add_provider_option(CLI::App& app, std::string& provider) {
  return app.add_option("--provider", provider, "Provider to use (default: CORRAL_PROVIDER, corral.yaml, local)")
      ->type_name(kProviderValue);
}

CLI::Option* names_lease(CLI::Option* option) {
  return option->type_name(kLeaseValue)->check([](const std::string& value) {
    return value.empty() ? std::string("an empty value names no lease: give a lease's id or slug (`corral list` "
                                       "shows them)")
                         : std::string();
  });
}

CLI::Option* add_lease_option(CLI::App& app, std::string& id) {
  return names_lease(app.add_option("--id", id, "Lease id or slug"));
}

CLI::Option* add_provider_argument(CLI::App& app, std::string& name) {
  return app.add_option("name", name, "Provider name or alias")->type_name(kProviderValue)->required();
}

CLI::Option* add_json_flag(CLI::App& app, bool& json) {
  return app.add_flag("--json", json, "Machine-readable output");
}

CLI::Option* add_progress_option(CLI::App& app, std::string& mode) {
  return app
      .add_option("--progress", mode,
                  "How the run's phases show on stderr: auto (a live line on a terminal), never, or json "
                  "(one JSON object per line)")
      ->capture_default_str()
      ->type_name("{auto,never,json}");
}

}  // namespace corral::cli
