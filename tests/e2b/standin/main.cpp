// Runs the stand-in E2B on its own (for scripts/bench-e2b.sh and manual checks):
//   e2b-standin [--api-port N] [--envd-port N] [--key KEY] [--create-delay-ms N]
// (--create-delay-ms: create answers that much later, as E2B's ~500 ms median start does;
// default 0)
// prints "E2B_API_URL=... E2B_SANDBOX_URL=..." and serves until SIGINT or SIGTERM.
#include <signal.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "server.hpp"

int main(int argc, char** argv) {
  int api_port = 0, envd_port = 0, create_delay_ms = 0;
  std::string key = "e2b_standin_secret_key_0123456789";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--api-port")) api_port = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--envd-port")) envd_port = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--key")) key = argv[i + 1];
    else if (!std::strcmp(argv[i], "--create-delay-ms")) create_delay_ms = std::atoi(argv[i + 1]);
    else {
      std::cerr << "usage: e2b-standin [--api-port N] [--envd-port N] [--key KEY] [--create-delay-ms N]\n";
      return 64;
    }
  }
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // the server threads inherit the mask
  signal(SIGPIPE, SIG_IGN);
  corral::e2b::standin::StandIn standin(key, api_port, envd_port);
  standin.with([&](auto& state) { return state.create_delay_ms = create_delay_ms; });
  std::cout << "E2B_API_URL=" << standin.api_url() << " E2B_SANDBOX_URL=" << standin.sandbox_url() << std::endl;
  int sig = 0;
  sigwait(&set, &sig);
  return 0;
}
