#include "corral/sdk/command_terminal.hpp"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <vector>

#include "corral/os/errno_error.hpp"

namespace corral::sdk {

CommandTerminal::CommandTerminal(std::uint16_t rows, std::uint16_t cols, std::function<void(std::string_view)> on_output)
    : on_output_(std::move(on_output)) {
  corral_end_ = os::UniqueFd(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!corral_end_.valid() || ::grantpt(corral_end_.get()) != 0 || ::unlockpt(corral_end_.get()) != 0)
    throw os::errno_error(ErrorCode::unavailable, "cannot make a terminal for the command (-t)", errno);
  char name[64];
  if (::ptsname_r(corral_end_.get(), name, sizeof name) != 0)
    throw os::errno_error(ErrorCode::unavailable, "cannot make a terminal for the command (-t)", errno);
  command_end_ = os::UniqueFd(::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!command_end_.valid())
    throw os::errno_error(ErrorCode::unavailable, "cannot open the command's terminal (-t)", errno);
  ::fcntl(corral_end_.get(), F_SETFL, O_NONBLOCK);
  resize(rows, cols);
  reader_ = std::thread([this] { relay(); });
}

CommandTerminal::~CommandTerminal() {
  // The command's end goes first: once nobody holds it, a read past the last output
  // fails (EIO) instead of waiting, and the reader knows it has everything.
  command_end_.reset();
  ending_ = true;
  reader_.join();
}

void CommandTerminal::resize(std::uint16_t rows, std::uint16_t cols) {
  if (rows == 0 || cols == 0) return;
  winsize size{};
  size.ws_row = rows;
  size.ws_col = cols;
  ::ioctl(corral_end_.get(), TIOCSWINSZ, &size);
}

void CommandTerminal::relay() {
  std::vector<char> buffer(64 << 10);
  // Once the command ended, what it wrote last may still be on its way through the
  // terminal: read on until the terminal says there is no more, for a second at most.
  std::optional<std::chrono::steady_clock::time_point> give_up;
  for (;;) {
    if (!give_up && ending_) give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    if (give_up && std::chrono::steady_clock::now() >= *give_up) return;
    pollfd p{corral_end_.get(), POLLIN, 0};
    if (::poll(&p, 1, give_up ? 20 : 100) <= 0) continue;
    const ssize_t got = ::read(corral_end_.get(), buffer.data(), buffer.size());
    if (got > 0) on_output_(std::string_view(buffer.data(), static_cast<size_t>(got)));
    else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
      if (give_up) return;  // EIO: nobody holds the command's end, and all it wrote is read
      // EIO before the end: the command closed its terminal; wait for it to end.
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

}  // namespace corral::sdk
