// Runs the stand-in Daytona on its own (for the official SDK check and manual tries):
//   daytona-standin [--api-port N] [--toolbox-port N] [--key KEY] [--create-delay-ms N]
// (--create-delay-ms: a new sandbox starts that long, as Daytona's ~200 ms median start
// does; default Faults::start_delay_ms)
// prints "DAYTONA_API_URL=..." and serves until SIGINT or SIGTERM.
#include <signal.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "server.hpp"

int main(int argc, char** argv) {
  int api_port = 0, toolbox_port = 0, create_delay_ms = -1;
  std::string key = "dtn_standin_secret_key_0123456789abcdef";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--api-port")) api_port = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--toolbox-port")) toolbox_port = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--key")) key = argv[i + 1];
    else if (!std::strcmp(argv[i], "--create-delay-ms")) create_delay_ms = std::atoi(argv[i + 1]);
    else {
      std::cerr << "usage: daytona-standin [--api-port N] [--toolbox-port N] [--key KEY] [--create-delay-ms N]\n";
      return 64;
    }
  }
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // the server threads inherit the mask
  signal(SIGPIPE, SIG_IGN);
  corral::daytona::standin::StandIn standin(key, api_port, toolbox_port);
  if (create_delay_ms >= 0) standin.with([&](auto& state) { return state.faults.start_delay_ms = create_delay_ms; });
  std::cout << "DAYTONA_API_URL=" << standin.api_url() << std::endl;
  int sig = 0;
  sigwait(&set, &sig);
  return 0;
}
