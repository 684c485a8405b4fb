#include "conformance/capture_ui.hpp"

#include <algorithm>
#include <cstring>

namespace corral {

CapturedStream::CapturedStream(std::size_t head_limit) : head_limit_(head_limit), hash_(std::make_unique<Sha256>()) {}

void CapturedStream::add(std::string_view data) {
  size_ += data.size();
  hash_->update(data);
  if (head_.size() < head_limit_) head_.append(data.substr(0, head_limit_ - head_.size()));
}

std::string CapturedStream::sha256() { return hash_->hex(); }

CaptureUi::CaptureUi(Ui& user, std::size_t head_limit) : user_(user), out_(head_limit), err_(head_limit) {}

namespace {

// True when `head`, of which the first `before` bytes were seen already, newly holds
// `marker`: only where it could newly appear, as it may straddle the previous piece.
bool newly_holds(const std::string& head, std::size_t before, const std::string& marker) {
  const std::size_t from = before < marker.size() ? 0 : before - marker.size() + 1;
  return head.find(marker, from) != std::string::npos;
}

}  // namespace

void CaptureUi::out(std::string_view data) {
  const std::size_t before = out_.head().size();
  out_.add(data);
  {
    std::lock_guard lock(timed_mutex_);
    for (auto& [marker, when] : timed_)
      if (!when && newly_holds(out_.head(), before, marker)) when = std::chrono::steady_clock::now();
  }
  if (cancel_fired_ || cancel_marker_.empty()) return;
  if (newly_holds(out_.head(), before, cancel_marker_)) cancel_fired_ = true;
}

void CaptureUi::time_stdout_marker(std::string marker) {
  std::lock_guard lock(timed_mutex_);
  timed_.emplace_back(std::move(marker), std::nullopt);
}

std::optional<std::chrono::steady_clock::time_point> CaptureUi::stdout_time_of(const std::string& marker) const {
  std::lock_guard lock(timed_mutex_);
  for (const auto& [m, when] : timed_)
    if (m == marker) return when;
  return std::nullopt;
}

void CaptureUi::err(std::string_view data) { err_.add(data); }

long CaptureUi::read_input(char* buffer, std::size_t capacity, int) {
  const std::size_t n = std::min(capacity, input_.size() - input_read_);
  std::memcpy(buffer, input_.data() + input_read_, n);
  input_read_ += n;
  return static_cast<long>(n);
}

bool CaptureUi::cancelled() {
  if (cancel_at_ && std::chrono::steady_clock::now() >= *cancel_at_) time_ran_out_ = true;
  return cancel_fired_ || time_ran_out_ || user_.cancelled();
}

}  // namespace corral
