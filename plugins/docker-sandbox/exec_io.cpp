#include "exec_io.hpp"

#include <fcntl.h>

namespace corral::docker_sandbox {

ExecIo::ExecIo(const Command& command, const sdk::Host& host,
               std::function<void(std::string_view)> on_terminal_output)
    : host_(host) {
  int input_fd = -1;
  if (command.tty) {
    (void)host.window_size(rows_, cols_);
    terminal_.emplace(rows_, cols_, std::move(on_terminal_output));
    input_fd = terminal_->corral_end();
  } else if (command.forward_stdin) {
    input_.emplace();
    ::fcntl(input_->write.get(), F_SETFL, O_NONBLOCK);
    input_fd = input_->write.get();
  }
  if (input_fd < 0) return;
  pump_.emplace(
      host,
      [input_fd](std::string_view data, const std::atomic<bool>& stopping) {
        return sdk::write_to_fd(input_fd, data, stopping);
      },
      // The end of a pipe's input closes it (sbx exec -i then closes the command's); a
      // terminal has none: its keys go on until the command ends.
      [this] {
        if (input_) input_->write.reset();
      });
}

ExecIo::~ExecIo() { finish(); }

SbxIo ExecIo::sbx_io() const {
  SbxIo io;
  if (terminal_) {
    io.stdin_fd = terminal_->command_end();
    io.on_terminal = true;
  } else if (input_) {
    io.stdin_fd = input_->read.get();
  }
  return io;
}

void ExecIo::tick() {
  if (input_) input_->read.reset();
  if (terminal_ && host_.window_size(rows_, cols_)) terminal_->resize(rows_, cols_);
}

void ExecIo::finish() {
  pump_.reset();
  terminal_.reset();
}

}  // namespace corral::docker_sandbox
