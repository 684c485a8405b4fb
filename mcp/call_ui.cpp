#include "call_ui.hpp"

#include <fmt/format.h>

#include "corral/json.hpp"

namespace corral::mcp {
namespace {

constexpr std::size_t kMaxNotes = 32;

// The largest n <= `at` that does not split a UTF-8 sequence in `text`.
std::size_t char_boundary(std::string_view text, std::size_t at) {
  while (at > 0 && at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;
  return at;
}

}  // namespace

void BoundedStream::append(std::string_view data) {
  total_ += data.size();
  const std::size_t half = static_cast<std::size_t>(limit_ / 2);
  if (head_.size() < half) {
    const std::size_t take = std::min(half - head_.size(), data.size());
    head_.append(data.substr(0, take));
    data.remove_prefix(take);
  }
  tail_.append(data);
  // Trimmed in batches, so a stream of small writes costs amortised constant time.
  if (tail_.size() > 2 * (limit_ - half) + 4096) tail_.erase(0, tail_.size() - (limit_ - half));
}

std::string BoundedStream::text(std::string_view stream) const {
  std::string tail = tail_;
  const std::size_t keep = static_cast<std::size_t>(limit_ - limit_ / 2);
  if (tail.size() > keep) tail.erase(0, tail.size() - keep);
  if (!truncated()) {
    std::string all = head_ + tail;
    if (json::is_valid_utf8(all)) return all;
    return fmt::format("[corral: {} bytes of binary {} not shown; redirect it to a file and read that with "
                       "sandbox_read_file, which returns base64]",
                       total_, stream);
  }
  // Cut at character boundaries: the head's end, the tail's start.
  std::string head = head_.substr(0, char_boundary(head_, head_.size()));
  std::size_t start = 0;
  while (start < tail.size() && start < 4 && (static_cast<unsigned char>(tail[start]) & 0xC0) == 0x80) ++start;
  tail.erase(0, start);
  if (!json::is_valid_utf8(head) || !json::is_valid_utf8(tail))
    return fmt::format("[corral: {} bytes of binary {} not shown; redirect it to a file and read that with "
                       "sandbox_read_file, which returns base64]",
                       total_, stream);
  const std::uint64_t left_out = total_ - head.size() - tail.size();
  return fmt::format("{}\n[corral: {} bytes of {} left out here; to see it all, redirect it to a file and read "
                     "that with sandbox_read_file, or run with download]\n{}",
                     head, left_out, stream, tail);
}

std::optional<std::string> BoundedStream::whole() const {
  if (truncated()) return std::nullopt;
  return head_ + tail_;
}

CallUi::CallUi(std::uint64_t max_output, const std::atomic<bool>& server_stopping, ProgressFn progress)
    : stdout_(max_output), stderr_(max_output), server_stopping_(server_stopping), progress_(std::move(progress)) {}

CallUi::CallUi(std::uint64_t max_output, CallUi& call)
    : stdout_(max_output), stderr_(max_output), server_stopping_(call.server_stopping_), parent_(&call) {}

std::optional<std::string> CallUi::stdout_bytes_whole() {
  std::lock_guard lock(mutex_);
  return stdout_.whole();
}

void CallUi::out(std::string_view data) {
  {
    std::lock_guard lock(mutex_);
    stdout_.append(data);
  }
  if (progress_) progress_("stdout", data);
}

void CallUi::err(std::string_view data) {
  {
    std::lock_guard lock(mutex_);
    stderr_.append(data);
  }
  if (progress_) progress_("stderr", data);
}

void CallUi::note(const std::string& message) {
  std::lock_guard lock(mutex_);
  if (notes_.size() < kMaxNotes) notes_.push_back(message);
}

void CallUi::warn(const std::string& message) { note("warning: " + message); }

std::string CallUi::stdout_text() {
  std::lock_guard lock(mutex_);
  return stdout_.text("stdout");
}
std::string CallUi::stderr_text() {
  std::lock_guard lock(mutex_);
  return stderr_.text("stderr");
}
std::uint64_t CallUi::stdout_bytes() {
  std::lock_guard lock(mutex_);
  return stdout_.total();
}
std::uint64_t CallUi::stderr_bytes() {
  std::lock_guard lock(mutex_);
  return stderr_.total();
}
std::vector<std::string> CallUi::notes() {
  std::lock_guard lock(mutex_);
  return notes_;
}

}  // namespace corral::mcp
