// Feeding a command's stdin from the user's input (Command::forward_stdin): a thread that
// reads the host's input and hands it to the provider's way in (a pipe, a request), so
// the call's own thread stays free for the command's output.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <string_view>
#include <thread>

#include "corral/sdk.hpp"

namespace corral::sdk {

class InputPump {
 public:
  // Passes `data` on, whole; false when the command takes no more (its stdin was closed).
  // `stopping` turns true when the pump is destroyed: a sink that waits must give up then.
  using Sink = std::function<bool(std::string_view data, const std::atomic<bool>& stopping)>;
  // Called once, after the last input went to `sink`, when the input ended: close the
  // command's stdin. Not called when the sink refused or the pump was stopped first.
  using EndFn = std::function<void()>;

  // Reads input as Host::read_input does: bytes read, 0 at its end, -1 when none came within
  // `timeout_ms`.
  using Reader = std::function<long(char* buffer, std::size_t capacity, int timeout_ms)>;

  // Starts pumping `host`'s input (valid for as long as the pump) into `sink`.
  InputPump(const Host& host, Sink sink, EndFn on_end);
  // Starts pumping what `read` gives (another source: a local file) into `sink`.
  InputPump(Reader read, Sink sink, EndFn on_end);
  // Stops pumping, at the latest a read timeout (0.1 s) later, and waits for the thread.
  ~InputPump();
  InputPump(const InputPump&) = delete;
  InputPump& operator=(const InputPump&) = delete;

 private:
  void pump();

  Reader read_;
  Sink sink_;
  EndFn on_end_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

// A Sink that writes to non-blocking descriptor `fd` (a pipe to the command), waiting while it is full
// until the data is written, the reader is gone (false) or `stopping`.
bool write_to_fd(int fd, std::string_view data, const std::atomic<bool>& stopping);

}  // namespace corral::sdk
