#include "remote_shell.hpp"

#include <corral/sdk/shell.hpp>

namespace corral_ssh {

std::string command_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& word : argv) {
    if (!line.empty()) line += ' ';
    line += corral::sdk::shell_quote(word);
  }
  return line;
}

}  // namespace corral_ssh
