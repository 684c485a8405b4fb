#include "jail_terminal.hpp"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "corral/os/errno_error.hpp"

namespace corral::local {

JailTerminal::JailTerminal(std::uint16_t rows, std::uint16_t cols, std::function<void(std::string_view)> on_output)
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

JailTerminal::~JailTerminal() {
  ending_ = true;
  reader_.join();
}

void JailTerminal::resize(std::uint16_t rows, std::uint16_t cols) {
  if (rows == 0 || cols == 0) return;
  winsize size{};
  size.ws_row = rows;
  size.ws_col = cols;
  ::ioctl(corral_end_.get(), TIOCSWINSZ, &size);
}

void JailTerminal::relay() {
  std::vector<char> buffer(64 << 10);
  int left_after_end = 64;  // reads of what is left once the command ended: bounded
  for (;;) {
    // Once the command ended, what is left is read without waiting: something it left
    // behind may still hold the terminal and write on, and must not keep corral.
    const bool last = ending_.load();
    pollfd p{corral_end_.get(), POLLIN, 0};
    if (!last && ::poll(&p, 1, 100) <= 0) continue;
    const ssize_t got = ::read(corral_end_.get(), buffer.data(), buffer.size());
    if (got > 0) {
      on_output_(std::string_view(buffer.data(), static_cast<size_t>(got)));
      if (last && --left_after_end == 0) return;
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (last || (got < 0 && errno != EAGAIN)) return;
  }
}

}  // namespace corral::local
