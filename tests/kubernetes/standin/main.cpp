// Runs the stand-in Kubernetes API server on its own (for the official client checks and
// manual tries):
//   kubernetes-standin [--port N] [--dir DIR] [--token TOKEN] [--namespace NS]
// prints KUBERNETES_URL=, KUBECONFIG=, CA_FILE= and TOKEN= lines, then serves until SIGINT
// or SIGTERM.
#include <signal.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "standin.hpp"

int main(int argc, char** argv) {
  corral::kubernetes::standin::Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--port")) options.port = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--dir")) options.dir = argv[i + 1];
    else if (!std::strcmp(argv[i], "--token")) options.token = argv[i + 1];
    else if (!std::strcmp(argv[i], "--namespace")) options.ns = argv[i + 1];
    else {
      std::cerr << "usage: kubernetes-standin [--port N] [--dir DIR] [--token TOKEN] [--namespace NS]\n";
      return 64;
    }
  }
  if (argc % 2 == 0) {
    std::cerr << "usage: kubernetes-standin [--port N] [--dir DIR] [--token TOKEN] [--namespace NS]\n";
    return 64;
  }
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // the server threads inherit the mask
  signal(SIGPIPE, SIG_IGN);
  corral::kubernetes::standin::StandIn standin(options);
  std::cout << "KUBERNETES_URL=" << standin.url() << "\nKUBECONFIG=" << standin.kubeconfig().string()
            << "\nCA_FILE=" << standin.ca_file().string() << "\nTOKEN=" << standin.token() << std::endl;
  int sig = 0;
  sigwait(&set, &sig);
  return 0;
}
