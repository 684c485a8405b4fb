// Runs the stand-in E2B on its own (for scripts/bench-e2b.sh and manual checks):
//   e2b-standin [--api-port N] [--envd-port N] [--key KEY] [--create-delay-ms N]
// (--create-delay-ms: create answers that much later, as E2B's ~500 ms median start does;
// default 0)
// prints "E2B_API_URL=... E2B_SANDBOX_URL=..." and serves until SIGINT or SIGTERM.
#include <iostream>

#include "server.hpp"
#include "standin_main.hpp"

int main(int argc, char** argv) {
  int api_port = 0, envd_port = 0, create_delay_ms = 0;
  std::string key = "e2b_standin_secret_key_0123456789";
  return corral::test::serve_standin(
      argc, argv, "usage: e2b-standin [--api-port N] [--envd-port N] [--key KEY] [--create-delay-ms N]",
      {{"--api-port", corral::test::number_flag(api_port)},
       {"--envd-port", corral::test::number_flag(envd_port)},
       {"--key", corral::test::text_flag(key)},
       {"--create-delay-ms", corral::test::number_flag(create_delay_ms)}},
      [&] {
        auto standin = std::make_shared<corral::e2b::standin::StandIn>(key, api_port, envd_port);
        standin->with([&](auto& state) { return state.create_delay_ms = create_delay_ms; });
        std::cout << "E2B_API_URL=" << standin->api_url() << " E2B_SANDBOX_URL=" << standin->sandbox_url()
                  << std::endl;
        return standin;
      });
}
