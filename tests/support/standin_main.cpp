#include "standin_main.hpp"

#include <signal.h>

#include <cstdlib>
#include <iostream>

namespace corral::test {

std::function<void(const char*)> number_flag(int& target) {
  return [&target](const char* value) { target = std::atoi(value); };
}

std::function<void(const char*)> text_flag(std::string& target) {
  return [&target](const char* value) { target = value; };
}

int usage_error(std::string_view usage) {
  std::cerr << usage << '\n';
  return 64;
}

int serve_standin(int argc, char** argv, std::string_view usage, const StandinFlags& flags,
                  const std::function<std::shared_ptr<void>()>& start) {
  for (int i = 1; i + 1 < argc; i += 2) {
    auto flag = flags.find(argv[i]);
    if (flag == flags.end()) return usage_error(usage);
    flag->second(argv[i + 1]);
  }
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // the server threads inherit the mask
  signal(SIGPIPE, SIG_IGN);
  const std::shared_ptr<void> standin = start();
  int sig = 0;
  sigwait(&set, &sig);
  return 0;
}

}  // namespace corral::test
