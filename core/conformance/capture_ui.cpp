#include "conformance/capture_ui.hpp"

namespace corral {

CapturedStream::CapturedStream(std::size_t head_limit) : head_limit_(head_limit), hash_(std::make_unique<Sha256>()) {}

void CapturedStream::add(std::string_view data) {
  size_ += data.size();
  hash_->update(data);
  if (head_.size() < head_limit_) head_.append(data.substr(0, head_limit_ - head_.size()));
}

std::string CapturedStream::sha256() { return hash_->hex(); }

CaptureUi::CaptureUi(Ui& user, std::size_t head_limit) : user_(user), out_(head_limit), err_(head_limit) {}

void CaptureUi::out(std::string_view data) {
  const std::size_t before = out_.head().size();
  out_.add(data);
  if (cancel_fired_ || cancel_marker_.empty()) return;
  // Only where the marker could newly appear: it may straddle the previous piece.
  const std::size_t from = before < cancel_marker_.size() ? 0 : before - cancel_marker_.size() + 1;
  if (out_.head().find(cancel_marker_, from) != std::string::npos) cancel_fired_ = true;
}

void CaptureUi::err(std::string_view data) { err_.add(data); }

bool CaptureUi::cancelled() {
  if (cancel_at_ && std::chrono::steady_clock::now() >= *cancel_at_) time_ran_out_ = true;
  return cancel_fired_ || time_ran_out_ || user_.cancelled();
}

}  // namespace corral
