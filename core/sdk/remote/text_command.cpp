#include "corral/sdk/remote/text_command.hpp"

#include <string>

#include "corral/json.hpp"
#include "corral/sdk/printable.hpp"

namespace corral::sdk::remote {
namespace {

[[noreturn]] void refuse(std::string_view provider, const std::string& what, std::string_view value) {
  throw Error(ErrorCode::invalid_argument,
              std::string(provider) + " carries a command as text, and " + what + " is not valid UTF-8 ('" +
                  printable(value.substr(0, 80)) + "'): it cannot reach the command as it is",
              "pass such bytes in a file of the workspace, or run it on a provider that passes arguments as bytes "
              "(local, kubernetes, docker-sandbox)");
}

}  // namespace

void require_text_command(const Command& command, std::string_view provider) {
  for (size_t i = 0; i < command.argv.size(); ++i)
    if (!json::is_valid_utf8(command.argv[i])) refuse(provider, "argument " + std::to_string(i + 1), command.argv[i]);
  if (!json::is_valid_utf8(command.shell)) refuse(provider, "the --shell command", command.shell);
  if (!json::is_valid_utf8(command.cwd)) refuse(provider, "the command's folder", command.cwd);
  for (const auto& [name, value] : command.env)
    if (!json::is_valid_utf8(name) || !json::is_valid_utf8(value)) refuse(provider, "variable " + name, value);
}

}  // namespace corral::sdk::remote
