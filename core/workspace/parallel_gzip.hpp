// gzip on several threads: the tar stream cut into members of a fixed size, each
// compressed on a thread of its own and written in order. gzip -d, tar -xzf and
// libarchive read concatenated members as one stream, so the result is a plain .tar.gz.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace corral {

// gzip at its fastest level: the archive is packed for every sync and crosses a network
// or a local copy once, so packing time matters more than the last few percent of size.
inline constexpr const char* kGzipLevel = "1";
// How much of the tar stream one member holds.
inline constexpr std::size_t kGzipMemberBytes = 1u << 20;

// `in` as one complete gzip member at kGzipLevel; throws std::runtime_error.
std::string gzip_member(const std::string& in);

// Takes the tar stream in order, compresses it on `workers` threads in members of
// kGzipMemberBytes, and writes the members to `fd` in order, holding a few in flight.
// Destroying it before finish() (an error, a cancel) stops and joins the workers. Used
// from one thread; its workers are its own.
class ParallelGzip {
 public:
  ParallelGzip(int fd, unsigned workers);
  ~ParallelGzip();
  ParallelGzip(const ParallelGzip&) = delete;
  ParallelGzip& operator=(const ParallelGzip&) = delete;

  // Takes the next `size` bytes of the tar stream.
  void write(const char* data, std::size_t size);
  // Compresses what is left and writes every member; throws std::runtime_error, or
  // std::system_error when writing the file fails.
  void finish();

 private:
  struct Job {
    std::string data;  // tar in, gzip member out
    bool done = false;
    std::string error;
  };

  void submit();
  // Writes the oldest member when it is done (or, with `wait`, once it is); false when
  // there is none to write.
  bool write_next(bool wait);
  void work();

  const int fd_;
  const std::size_t max_in_flight_;
  std::string pending_;
  std::mutex mutex_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<std::shared_ptr<Job>> queue_;      // waiting for a worker
  std::deque<std::shared_ptr<Job>> in_flight_;  // submitted, not yet written, oldest first
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace corral
