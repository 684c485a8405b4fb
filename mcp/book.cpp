#include "book.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "corral/errors.hpp"

namespace corral::mcp {

Book::Slots::~Slots() {
  if (count_ > 0) book_->give_back(count_);
}

Book::Book(int max_sandboxes) : max_(max_sandboxes) {}

int Book::live() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(std::count_if(entries_.begin(), entries_.end(), [](const Entry& e) { return !e.adopted; }));
}

Book::Slots Book::reserve(int count) {
  std::lock_guard lock(mutex_);
  const int held = static_cast<int>(std::count_if(entries_.begin(), entries_.end(), [](const Entry& e) { return !e.adopted; }));
  if (held + reserved_ + count > max_)
    throw Error(ErrorCode::quota,
                fmt::format("this server may have {} sandbox{} at once and {} {} live or being made", max_,
                            max_ == 1 ? "" : "es", held + reserved_, held + reserved_ == 1 ? "is" : "are"),
                "stop one with sandbox_stop first (sandbox_list shows them); the user sets the limit with "
                "`corral mcp --max-sandboxes N`");
  reserved_ += count;
  return Slots(this, count);
}

void Book::hold(Slots& slots, Entry entry) {
  std::lock_guard lock(mutex_);
  if (slots.count_ > 0) {
    --slots.count_;
    --reserved_;
  }
  entries_.push_back(std::move(entry));
}

void Book::adopt(Entry entry) {
  std::lock_guard lock(mutex_);
  entry.adopted = true;
  entries_.push_back(std::move(entry));
}

bool Book::owns(const std::string& lease_id) const {
  std::lock_guard lock(mutex_);
  return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.lease_id == lease_id; });
}

std::vector<std::string> Book::env_of(const std::string& lease_id) const {
  std::lock_guard lock(mutex_);
  for (const Entry& e : entries_)
    if (e.lease_id == lease_id) return e.env;
  return {};
}

void Book::forget(const std::string& lease_id) {
  std::lock_guard lock(mutex_);
  std::erase_if(entries_, [&](const Entry& e) { return e.lease_id == lease_id; });
}

std::vector<Book::Entry> Book::entries() const {
  std::lock_guard lock(mutex_);
  return entries_;
}

std::vector<Book::Entry> Book::expired(Clock::time_point now) const {
  std::lock_guard lock(mutex_);
  std::vector<Entry> out;
  for (const Entry& e : entries_)
    if (!e.kept && !e.adopted && e.deadline <= now) out.push_back(e);
  return out;
}

void Book::give_back(int count) {
  std::lock_guard lock(mutex_);
  reserved_ -= count;
}

}  // namespace corral::mcp
