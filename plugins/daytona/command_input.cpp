#include "command_input.hpp"

#include "command_line.hpp"

#include <chrono>
#include <thread>
#include <utility>

namespace corral::daytona {

CommandInput::CommandInput(const Toolbox& toolbox, std::string session_id, std::string command_id,
                           const sdk::Host& host)
    : toolbox_(toolbox, client_),
      session_id_(std::move(session_id)),
      command_id_(std::move(command_id)),
      pump_(
          host, [this](std::string_view data, const std::atomic<bool>&) { return send(input_lines(data)); },
          [this] { send(kInputEnd); }) {}

CommandInput::~CommandInput() { closing_ = true; }

bool CommandInput::send(std::string_view data) {
  try {
    return toolbox_.send_input(session_id_, command_id_, data, [this] { return closing_.load(); });
  } catch (const Error& e) {
    if (closing_) return false;
    // A command that just ended may refuse input in other ways than 410 (the reader gone,
    // a 500), and its exit may show in the toolbox a moment later: that is no failure.
    for (int poll = 0; poll < 20; ++poll) {
      try {
        if (toolbox_.exit_code(session_id_, command_id_)) return false;
      } catch (const Error&) {
      }
      if (closing_) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (closing_) return false;
    std::lock_guard lock(mutex_);
    failure_ = std::string("could not pass the input on to the command in Daytona sandbox ") + toolbox_.sandbox_id() +
               ": " + e.what() + "; it may wait for input that never comes (Ctrl-C stops it)";
    return false;
  }
}

std::string CommandInput::take_failure() {
  std::lock_guard lock(mutex_);
  return std::exchange(failure_, {});
}

}  // namespace corral::daytona
