// A Ui that records what a run tells the user instead of showing it, for checking a
// provider's behaviour (the conformance kit). Output is hashed as it streams and only
// its head is kept, so a run printing gigabytes costs a few kilobytes.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/hash.hpp"
#include "base/ui.hpp"

namespace corral {

// One output stream as received: its size, its digest and its first bytes.
class CapturedStream {
 public:
  explicit CapturedStream(std::size_t head_limit);
  // Appends `data` (hashed, counted, kept while the head has room).
  void add(std::string_view data);
  std::uint64_t size() const { return size_; }
  // The first bytes, up to the head limit; complete when size() <= the limit.
  const std::string& head() const { return head_; }
  bool complete() const { return size_ == head_.size(); }
  // Lower-case hex SHA-256 of everything received; call once, at the end.
  std::string sha256();

 private:
  std::size_t head_limit_;
  std::string head_;
  std::uint64_t size_ = 0;
  std::unique_ptr<Sha256> hash_;
};

class CaptureUi : public Ui {
 public:
  // `user` is asked whether the user pressed Ctrl-C, so a long check stays interruptible.
  explicit CaptureUi(Ui& user, std::size_t head_limit = 1 << 20);

  // From now on cancelled() turns true once stdout's head contains `marker`: a Ctrl-C
  // pressed at a known point of the command, whether or not the provider asks.
  void cancel_when_stdout_has(std::string marker) { cancel_marker_ = std::move(marker); }
  bool cancel_fired() const { return cancel_fired_; }
  // Notes when stdout's head first holds `marker` (stdout_time_of()): whether output was
  // streamed as the command printed it, or handed over at its end, shows in the times.
  void time_stdout_marker(std::string marker);
  std::optional<std::chrono::steady_clock::time_point> stdout_time_of(const std::string& marker) const;
  // cancelled() turns true once `when` passes: the time for what this Ui records is up.
  void cancel_at(std::chrono::steady_clock::time_point when) { cancel_at_ = when; }
  bool time_ran_out() const { return time_ran_out_; }

  CapturedStream& stdout_stream() { return out_; }
  CapturedStream& stderr_stream() { return err_; }
  // Every note and warning corral or the provider gave, in order.
  const std::vector<std::string>& messages() const { return messages_; }

  void out(std::string_view data) override;
  void err(std::string_view data) override;
  void info(const std::string&) override {}
  void note(const std::string& message) override { messages_.push_back(message); }
  void warn(const std::string& message) override { messages_.push_back(message); }
  void progress(const std::string&) override {}
  bool cancelled() override;
  // The input piped in for the command: `input`, then its end.
  void set_input(std::string input) { input_ = std::move(input); }
  long read_input(char* buffer, std::size_t capacity, int timeout_ms) override;
  bool input_waiting() override { return input_read_ < input_.size(); }

 private:
  std::string input_;
  std::size_t input_read_ = 0;  // read_input runs on one thread at a time
  Ui& user_;
  CapturedStream out_;
  CapturedStream err_;
  std::vector<std::string> messages_;
  std::string cancel_marker_;
  mutable std::mutex timed_mutex_;  // out() runs on a plugin's thread
  std::vector<std::pair<std::string, std::optional<std::chrono::steady_clock::time_point>>> timed_;
  std::atomic<bool> cancel_fired_{false};  // set by out() on a plugin's thread, read anywhere
  std::optional<std::chrono::steady_clock::time_point> cancel_at_;
  std::atomic<bool> time_ran_out_{false};
};

}  // namespace corral
