// The Ui one tool call reports to: the command's output kept within the user's bound
// (its head and its tail, with what was left out counted), streamed as progress
// notifications when the client asked for them, the host's notes kept for the result,
// and the call's cancellation (notifications/cancelled, or the server ending).
//
// Threads: out(), err(), note()... and cancelled() may be called from the call's thread
// and a plugin's threads at once (one mutex); cancel() from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/ui.hpp"

namespace corral::mcp {

// One output stream kept within `limit` bytes: its first half and its last, cut on
// UTF-8 character boundaries, and the count of everything that came.
class BoundedStream {
 public:
  explicit BoundedStream(std::uint64_t limit) : limit_(limit) {}
  void append(std::string_view data);
  std::uint64_t total() const { return total_; }
  bool truncated() const { return total_ > limit_; }
  // The text a model reads: the stream as it came when it is text within the bound;
  // else its head and tail around a marker saying how much was left out and how to get it
  // all (`stream`: "stdout"); binary output is described, never dumped.
  std::string text(std::string_view stream) const;
  // The bytes as they came; nullopt when truncated().
  std::optional<std::string> whole() const;

 private:
  std::uint64_t limit_;
  std::uint64_t total_ = 0;
  std::string head_;
  std::string tail_;
};

class CallUi : public Ui {
 public:
  // Sends one progress notification's output chunk: the stream's name and the bytes.
  using ProgressFn = std::function<void(std::string_view stream, std::string_view chunk)>;

  // `server_stopping` is the server's own flag, which cancels every call; `progress` is
  // unset when the client sent no progress token.
  CallUi(std::uint64_t max_output, const std::atomic<bool>& server_stopping, ProgressFn progress);
  // A Ui for one step of `call`'s (reading a file through a command): its own bound, no
  // progress, cancelled when `call` is.
  CallUi(std::uint64_t max_output, CallUi& call);

  void out(std::string_view data) override;
  void err(std::string_view data) override;
  void info(const std::string&) override {}
  void note(const std::string& message) override;
  void warn(const std::string& message) override;
  void progress(const std::string&) override {}
  bool cancelled() override {
    return cancelled_.load() || server_stopping_.load() || (parent_ && parent_->cancelled());
  }

  // The server's own stop gives a command no grace to end by its signal: asked twice.
  int stop_requests() override {
    if (server_stopping_.load()) return 2;
    return parent_ ? parent_->stop_requests() : cancelled_.load() ? 1 : 0;
  }
  // Asks the call to stop, as Ctrl-C asks a run.
  void cancel() { cancelled_.store(true); }
  // The call's phases become spans of its trace while it is traced (set before it runs).
  PhaseTracer* tracer() override { return tracer_ ? tracer_ : parent_ ? parent_->tracer() : nullptr; }
  void set_tracer(PhaseTracer* tracer) { tracer_ = tracer; }
  std::string stdout_text();
  std::string stderr_text();
  // Everything the command wrote to stdout, byte for byte; nullopt when it wrote more
  // than the bound.
  std::optional<std::string> stdout_bytes_whole();
  std::uint64_t stdout_bytes();
  std::uint64_t stderr_bytes();
  // The host's notes and warnings during the call (bounded), for the result.
  std::vector<std::string> notes();

 private:
  PhaseTracer* tracer_ = nullptr;
  std::mutex mutex_;
  BoundedStream stdout_;
  BoundedStream stderr_;
  std::vector<std::string> notes_;
  std::atomic<bool> cancelled_{false};
  const std::atomic<bool>& server_stopping_;
  CallUi* parent_ = nullptr;
  ProgressFn progress_;
};

}  // namespace corral::mcp
