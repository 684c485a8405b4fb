// A command in a Pod over the API server's exec WebSocket: subprotocol v5.channel.k8s.io,
// else v4.channel.k8s.io; stdout and stderr on channels 1 and 2, stdin on channel 0 (a
// local file or the user's input; v5 closes it with [255, 0], under v4 the command must
// stop reading by itself), and the exit status from the metav1.Status on channel 3. With
// a terminal (tty=true) its output, stderr included, is channel 1, and the user's terminal
// size goes on channel 4 at the start and at each change.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api.hpp"
#include "corral/sdk/remote/command_hooks.hpp"

namespace corral::kubernetes {

// The subprotocol that can close a command's stdin (Kubernetes 1.30 and later).
inline constexpr const char* kExecV5 = "v5.channel.k8s.io";

// How the stream ended.
struct ExecEnd {
  std::optional<int> exit_code;  // nullopt: the stream ended with no status (cut, Pod gone)
  std::string protocol;          // the subprotocol the server chose
};

// The resize-channel message that makes the command's terminal `rows` x `cols`: client-go's
// TerminalSize as JSON, {"Width":cols,"Height":rows}.
std::string resize_message(std::uint16_t rows, std::uint16_t cols);

// The exit status a channel-3 Status message says: 0 for Success, the ExitCode cause of
// NonZeroExitCode. Throws Error(unavailable) quoting any other failure (no /bin/sh, ...),
// and unexpected_answer, saying what came, for a Status that is none or a NonZeroExitCode
// whose code is no number from 1 to 255.
int exit_code_of_status(std::string_view status_json, const std::string& what);

// What a command's stdin is: nothing, a local file, or the user's input, each to its end.
struct ExecInput {
  std::string file;                 // a local file's bytes ("" = none)
  const sdk::Host* user = nullptr;  // else the user's input (Host::read_input), when set
  // With `user`: the command runs on a terminal of its own sized as the user's
  // (Host::window_size), the user's keys its input.
  bool terminal = false;
  bool any() const { return !file.empty() || user; }
};

// Runs `argv` in container `container` of Pod `pod` in `ns`, its output to `hooks` and
// `input` as its stdin (under v4, which cannot close stdin, the command must stop reading
// by itself). Throws Error: the upgrade's refusal (404: the Pod is gone), cancelled when
// hooks.stop said so, unavailable when it cannot connect or the Status says the command
// could not run.
ExecEnd exec_in_pod(Api& api, const std::string& ns, const std::string& pod, const std::string& container,
                    const std::vector<std::string>& argv, const sdk::remote::CommandHooks& hooks,
                    const ExecInput& input, const std::string& what);

}  // namespace corral::kubernetes
