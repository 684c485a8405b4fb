// The E2B end-to-end tests' fixture: the stand-in E2B and a hermetic corral user wired to
// it, checking at the end that no secret (the API key, an envd token) leaked into
// anything corral printed or stored.
#pragma once

#include "provider_cli.hpp"
#include "standin/server.hpp"

namespace corral::test {

struct E2bCli : StandinCli<e2b::standin::StandIn> {
  E2bCli() : StandinCli("e2b") {
    cli.env["E2B_API_KEY"] = server.api_key();
    cli.env["E2B_API_URL"] = server.api_url();
    cli.env["E2B_SANDBOX_URL"] = server.sandbox_url();
  }
  ~E2bCli() {
    // Every envd token the stand-in handed out, as well as the key.
    for (const auto& token : server.with([](auto& st) { return st.issued_tokens; })) secrets.push_back(token);
  }
};

}  // namespace corral::test
