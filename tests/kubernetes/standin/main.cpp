// Runs the stand-in Kubernetes API server on its own (for the official client checks and
// manual tries):
//   kubernetes-standin [--port N] [--dir DIR] [--token TOKEN] [--namespace NS]
// prints KUBERNETES_URL=, KUBECONFIG=, CA_FILE= and TOKEN= lines, then serves until SIGINT
// or SIGTERM.
#include <iostream>

#include "standin.hpp"
#include "standin_main.hpp"

int main(int argc, char** argv) {
  constexpr const char* kUsage = "usage: kubernetes-standin [--port N] [--dir DIR] [--token TOKEN] [--namespace NS]";
  // A flag without its value is refused here, not left alone.
  if (argc % 2 == 0) return corral::test::usage_error(kUsage);
  corral::kubernetes::standin::Options options;
  return corral::test::serve_standin(argc, argv, kUsage,
                                     {{"--port", corral::test::number_flag(options.port)},
                                      {"--dir", [&](const char* value) { options.dir = value; }},
                                      {"--token", corral::test::text_flag(options.token)},
                                      {"--namespace", corral::test::text_flag(options.ns)}},
                                     [&] {
                                       auto standin = std::make_shared<corral::kubernetes::standin::StandIn>(options);
                                       std::cout << "KUBERNETES_URL=" << standin->url()
                                                 << "\nKUBECONFIG=" << standin->kubeconfig().string()
                                                 << "\nCA_FILE=" << standin->ca_file().string()
                                                 << "\nTOKEN=" << standin->token() << std::endl;
                                       return standin;
                                     });
}
