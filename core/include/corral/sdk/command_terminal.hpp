// The terminal of a command run with -t: a pty made for that command alone, whose one end
// is the command's stdin, stdout and stderr (or those of the tool that runs it: the local
// jail makes it the command's controlling terminal, `sbx exec -t` relays it) and whose
// other end corral reads the output from and writes the keys to.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string_view>
#include <thread>

#include "corral/os/unique_fd.hpp"

namespace corral::sdk {

class CommandTerminal {
 public:
  // Opens the pty, sized `rows` x `cols`, and starts passing what the command writes to
  // `on_output` on a thread of its own. Throws Error(unavailable) when no pty can be had.
  CommandTerminal(std::uint16_t rows, std::uint16_t cols, std::function<void(std::string_view)> on_output);
  // Closes the command's end, passes on the output still on its way (a second at most)
  // and stops the thread. Call once the command ended.
  ~CommandTerminal();
  CommandTerminal(const CommandTerminal&) = delete;
  CommandTerminal& operator=(const CommandTerminal&) = delete;

  // The command's end, for its stdin (and stdout).
  int command_end() const { return command_end_.get(); }
  // corral's end (non-blocking), for the keys (and the local jail's signals).
  int corral_end() const { return corral_end_.get(); }
  // The terminal is now `rows` x `cols`: the command's foreground job gets SIGWINCH.
  void resize(std::uint16_t rows, std::uint16_t cols);

 private:
  void relay();

  os::UniqueFd corral_end_;
  os::UniqueFd command_end_;
  std::function<void(std::string_view)> on_output_;
  std::atomic<bool> ending_{false};
  std::thread reader_;
};

}  // namespace corral::sdk
