// A thread for work meant to run beside its creator. Linux queues a new thread on its
// creator's CPU, where it waits until the creator sleeps or the load balancer moves it:
// milliseconds when the other CPUs idle, as on a virtual machine whose idle CPUs halt.
// A ParallelThread starts on another CPU the process may use, then may run on any.
//
// Threads: a ParallelThread belongs to the thread that made it, which joins it (or
// whoever it was moved to); the work runs on the new thread.
#pragma once

#include <pthread.h>

#include <functional>

namespace corral::os {

class ParallelThread {
 public:
  ParallelThread() = default;
  // Starts `work` on a thread of its own; an exception escaping `work` ends the process,
  // as with std::thread. Throws std::system_error when no thread can be made.
  explicit ParallelThread(std::function<void()> work);
  ~ParallelThread();  // joins the thread, if it was not joined
  ParallelThread(ParallelThread&& other) noexcept;
  ParallelThread& operator=(ParallelThread&& other) noexcept;
  ParallelThread(const ParallelThread&) = delete;
  ParallelThread& operator=(const ParallelThread&) = delete;

  bool joinable() const { return started_; }
  // Waits for the work to end.
  void join();

 private:
  pthread_t thread_{};
  bool started_ = false;
};

}  // namespace corral::os
