#include "state.hpp"

namespace corral::kubernetes::standin {

State::State(std::filesystem::path root) : root_(std::move(root)) {
  for (int i = 1; i <= 3; ++i)
    nodes.push_back({"node-" + std::to_string(i), "10.0.0." + std::to_string(10 + i), 4, 8.0 * (1 << 30),
                     {{"kubernetes.io/hostname", "node-" + std::to_string(i)}, {"kubernetes.io/os", "linux"},
                      {"kubernetes.io/arch", "amd64"}}});
}

bool State::take(const std::string& armed, int& times, const std::string& route) {
  if (times <= 0 || (armed != "*" && armed != route)) return false;
  --times;
  return true;
}

}  // namespace corral::kubernetes::standin
