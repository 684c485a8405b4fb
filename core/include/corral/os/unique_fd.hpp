// Descriptors that close with their owner: one type for a file, a folder or a lock, and
// one for a pipe, so no path of corral leaks a descriptor on an error or an early return.
//
// Threads: a UniqueFd or a Pipe belongs to one thread at a time; moving it hands it on.
#pragma once

namespace corral::os {

// An open file descriptor, closed with the object.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Gives up ownership: the caller closes the descriptor returned.
  int release();
  // Closes it now (a no-op when not open).
  void reset();

 private:
  int fd_ = -1;
};

// Both ends of a pipe, close-on-exec; throws Error(internal) when none can be made.
struct Pipe {
  Pipe();
  UniqueFd read;
  UniqueFd write;
};

}  // namespace corral::os
