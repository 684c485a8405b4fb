// Runs the stand-in Daytona on its own (for the official SDK check and manual tries):
//   daytona-standin [--api-port N] [--toolbox-port N] [--key KEY] [--create-delay-ms N]
// (--create-delay-ms: a new sandbox starts that long, as Daytona's ~200 ms median start
// does; default Faults::start_delay_ms)
// prints "DAYTONA_API_URL=..." and serves until SIGINT or SIGTERM.
#include <iostream>

#include "server.hpp"
#include "standin_main.hpp"

int main(int argc, char** argv) {
  int api_port = 0, toolbox_port = 0, create_delay_ms = -1;
  std::string key = "dtn_standin_secret_key_0123456789abcdef";
  return corral::test::serve_standin(
      argc, argv, "usage: daytona-standin [--api-port N] [--toolbox-port N] [--key KEY] [--create-delay-ms N]",
      {{"--api-port", corral::test::number_flag(api_port)},
       {"--toolbox-port", corral::test::number_flag(toolbox_port)},
       {"--key", corral::test::text_flag(key)},
       {"--create-delay-ms", corral::test::number_flag(create_delay_ms)}},
      [&] {
        auto standin = std::make_shared<corral::daytona::standin::StandIn>(key, api_port, toolbox_port);
        if (create_delay_ms >= 0)
          standin->with([&](auto& state) { return state.faults.start_delay_ms = create_delay_ms; });
        std::cout << "DAYTONA_API_URL=" << standin->api_url() << std::endl;
        return standin;
      });
}
