#include "lease/cleanup_command.hpp"

#include "corral/sdk/shell.hpp"

namespace corral {

std::string cleanup_command(const std::string& provider, const std::string& lease_id) {
  std::string command = "corral stop";
  if (!provider.empty()) command += " --provider " + sdk::shell_quote(provider);
  return command + " --id " + sdk::shell_quote(lease_id);
}

}  // namespace corral
