// The user's input as the stdin of a command running in a Daytona session (exec-stdin).
// Daytona's only way in is the input call, which takes JSON text and can never end a
// command's stdin: the input travels as the wrapper's input lines (command_line.hpp),
// then its end line, which the wrapper turns into the end of the program's stdin. It is
// pumped from its own thread over an HTTP client of its own, so the run's thread stays
// free to follow the output.
#pragma once

#include <atomic>
#include <mutex>
#include <string>

#include "corral/sdk.hpp"
#include "corral/sdk/http.hpp"
#include "corral/sdk/input_pump.hpp"
#include "toolbox.hpp"

namespace corral::daytona {

class CommandInput {
 public:
  // Starts passing `host`'s input to command `command_id` of session `session_id` in
  // `toolbox`'s sandbox; `toolbox` may be destroyed before this is.
  CommandInput(const Toolbox& toolbox, std::string session_id, std::string command_id, const sdk::Host& host);
  // Stops pumping: a call waiting for the command to read is abandoned.
  ~CommandInput();
  CommandInput(const CommandInput&) = delete;
  CommandInput& operator=(const CommandInput&) = delete;

  // Why input stopped reaching the command while it still ran, once; empty when it did not.
  std::string take_failure();

 private:
  // Sends `data`; false once the command takes no more (it ended, or sending failed).
  bool send(std::string_view data);

  sdk::http::Client client_;
  Toolbox toolbox_;
  std::string session_id_;
  std::string command_id_;
  std::atomic<bool> closing_{false};  // set first on destruction: a waiting call gives up
  std::mutex mutex_;
  std::string failure_;
  sdk::InputPump pump_;  // last: its thread starts once everything it uses is ready
};

}  // namespace corral::daytona
