// What `sbx exec` reads and where the command's terminal is, for one command: nothing
// (an empty stdin), the user's input on a pipe (sbx exec -i), or a terminal corral opens
// for sbx exec -it, sized as the user's, the user's keys its input.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "corral/os/unique_fd.hpp"
#include "corral/sdk.hpp"
#include "corral/sdk/command_terminal.hpp"
#include "corral/sdk/input_pump.hpp"
#include "corral/types.hpp"
#include "sbx_cli.hpp"

namespace corral::docker_sandbox {

class ExecIo {
 public:
  // Opens the pipe or terminal `command` asks for and starts pumping the user's input
  // into it; a terminal's output goes to `on_terminal_output` from a thread of its own.
  // Throws Error(unavailable) when no terminal can be had.
  ExecIo(const Command& command, const sdk::Host& host, std::function<void(std::string_view)> on_terminal_output);
  // Stops the pump and passes on what the terminal still holds (a second at most).
  ~ExecIo();
  ExecIo(const ExecIo&) = delete;
  ExecIo& operator=(const ExecIo&) = delete;

  // sbx's stdin (and terminal), for SbxCli::stream; on_tick left to the caller.
  SbxIo sbx_io() const;
  // Once sbx runs: drops corral's copy of the pipe's read end (so sbx ending fails the
  // pump's next write) and passes a change of the user's terminal size on.
  void tick();
  // Stops the pump and the terminal's relay; call once sbx ended, before the result.
  void finish();

 private:
  const sdk::Host& host_;
  std::optional<sdk::CommandTerminal> terminal_;
  std::optional<os::Pipe> input_;
  std::uint16_t rows_ = 24, cols_ = 80;
  std::optional<sdk::InputPump> pump_;  // last: stopped first
};

}  // namespace corral::docker_sandbox
