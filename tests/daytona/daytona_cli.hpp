// The Daytona end-to-end tests' fixture: the stand-in Daytona and a hermetic corral user
// wired to it, checking at the end that the API key never leaked into anything corral
// printed or stored.
#pragma once

#include <filesystem>
#include <string>

#include "provider_cli.hpp"
#include "standin/server.hpp"

namespace corral::test {

struct DaytonaCli : StandinCli<daytona::standin::StandIn> {
  DaytonaCli() : StandinCli("daytona") {
    cli.env["DAYTONA_API_KEY"] = server.api_key();
    cli.env["DAYTONA_API_URL"] = server.api_url();
  }
  // The workspace folder of sandbox `id` on this machine.
  std::filesystem::path workdir(const std::string& id) {
    return server.with([&](auto& st) { return daytona::standin::State::home_of(st.sandboxes.at(id)); }) / "workspace";
  }
};

}  // namespace corral::test
