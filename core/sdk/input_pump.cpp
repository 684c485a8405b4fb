#include "corral/sdk/input_pump.hpp"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace corral::sdk {
namespace {

constexpr std::size_t kChunk = 64 << 10;
constexpr int kReadTimeoutMs = 100;  // how late a stopped pump notices

}  // namespace

InputPump::InputPump(const Host& host, Sink sink, EndFn on_end)
    : InputPump([&host](char* buffer, std::size_t capacity,
                        int timeout_ms) { return host.read_input(buffer, capacity, timeout_ms); },
                std::move(sink), std::move(on_end)) {}

InputPump::InputPump(Reader read, Sink sink, EndFn on_end)
    : read_(std::move(read)), sink_(std::move(sink)), on_end_(std::move(on_end)), thread_([this] { pump(); }) {}

InputPump::~InputPump() {
  stopping_ = true;
  thread_.join();
}

void InputPump::pump() {
  // A command that closed its stdin makes a write fail with EPIPE, not end the process
  // hosting the plugin: the signal stays pending on this thread, which then ends.
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
  std::vector<char> buffer(kChunk);
  while (!stopping_) {
    const long got = read_(buffer.data(), buffer.size(), kReadTimeoutMs);
    if (got < 0) continue;  // nothing yet
    if (got == 0) {
      if (on_end_) on_end_();
      return;
    }
    if (!sink_(std::string_view(buffer.data(), static_cast<std::size_t>(got)), stopping_)) return;
  }
}

bool write_to_fd(int fd, std::string_view data, const std::atomic<bool>& stopping) {
  while (!data.empty()) {
    pollfd p{fd, POLLOUT, 0};
    const int ready = ::poll(&p, 1, kReadTimeoutMs);
    if (stopping) return false;
    if (ready < 0 && errno != EINTR) return false;
    if (ready <= 0) continue;
    if (p.revents & (POLLERR | POLLHUP | POLLNVAL)) return false;
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return false;  // EPIPE: the command closed its stdin
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace corral::sdk
