#include "corral/sdk/remote/command_hooks.hpp"

#include <utility>

namespace corral::sdk::remote {

CommandHooks command_hooks(const Host& host, CommandDeadline& deadline) {
  CommandHooks hooks;
  hooks.on_stdout = [&host](std::string_view d) { host.emit(CORRAL_STDOUT, d); };
  hooks.on_stderr = [&host](std::string_view d) { host.emit(CORRAL_STDERR, d); };
  hooks.stop = [&deadline] { return deadline.stop(); };
  hooks.warn = [&host](const std::string& w) { host.warn(w); };
  return hooks;
}

CommandHooks step_hooks(const Host& host, std::function<void(std::string_view)> on_stderr) {
  CommandHooks hooks;
  hooks.on_stdout = [](std::string_view) {};
  hooks.on_stderr = std::move(on_stderr);
  hooks.stop = [&host] { return host.cancelled(); };
  hooks.warn = [&host](const std::string& w) { host.warn(w); };
  return hooks;
}

CommandHooks quiet_hooks() {
  CommandHooks hooks;
  hooks.on_stdout = [](std::string_view) {};
  hooks.on_stderr = [](std::string_view) {};
  hooks.stop = [] { return false; };
  return hooks;
}

}  // namespace corral::sdk::remote
