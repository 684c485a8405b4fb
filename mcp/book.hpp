// The sandboxes this server made (and the kept leases it was told to adopt): the only
// ones its tools may act on, the count --max-sandboxes bounds, and what it stops when it
// ends. A tool reserves slots before it makes anything, so a flood of calls past the limit
// is refused up front and never makes an extra sandbox.
//
// Threads: every method is safe to call from any thread (one mutex).
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

namespace corral::mcp {

class Book {
 public:
  using Clock = std::chrono::steady_clock;

  // Slots reserved for sandboxes about to be made; the ones not turned into leases by
  // hold() go back to the book when this is destroyed.
  class Slots {
   public:
    Slots(Slots&& other) noexcept : book_(other.book_), count_(other.count_) { other.count_ = 0; }
    Slots& operator=(Slots&&) = delete;
    ~Slots();
    int count() const { return count_; }

   private:
    friend class Book;
    Slots(Book* book, int count) : book_(book), count_(count) {}
    Book* book_;
    int count_;
  };

  struct Entry {
    std::string lease_id;
    std::string slug;
    bool kept = false;     // survives the server (sandbox_start with keep, --allow-keep)
    bool adopted = false;  // the user's, named by --adopt: never stopped by the server
    std::vector<std::string> env;  // variables sandbox_start asked to forward to its commands
    Clock::time_point deadline;  // stopped by the server after this (not kept or adopted ones)
  };

  explicit Book(int max_sandboxes);

  // `count` slots, or quota naming the limit and how to free one.
  Slots reserve(int count);
  // Records a lease made with one of `slots`.
  void hold(Slots& slots, Entry entry);
  // Records a kept lease of the user's that tools may act on (no slot).
  void adopt(Entry entry);
  // True when the tools may act on `lease_id`.
  bool owns(const std::string& lease_id) const;
  // The variables sandbox_start asked to forward to `lease_id`'s commands.
  std::vector<std::string> env_of(const std::string& lease_id) const;
  // Forgets `lease_id` (stopped), freeing its slot.
  void forget(const std::string& lease_id);
  std::vector<Entry> entries() const;
  // The made, unkept leases whose deadline is past.
  std::vector<Entry> expired(Clock::time_point now) const;
  int live() const;

 private:
  void give_back(int count);

  mutable std::mutex mutex_;
  const int max_;
  int reserved_ = 0;  // slots reserved and not yet held
  std::vector<Entry> entries_;
};

}  // namespace corral::mcp
