#include "corral/os/parallel_thread.hpp"

#include <sched.h>

#include <cerrno>
#include <memory>
#include <system_error>
#include <utility>

namespace corral::os {
namespace {

// What the new thread starts with: its work, and the CPUs it may run on once started.
struct Start {
  std::function<void()> work;
  cpu_set_t allowed{};
  bool restore = false;
};

// noexcept: an exception escaping the work ends the process, as std::thread's would.
void* run(void* arg) noexcept {
  std::unique_ptr<Start> start(static_cast<Start*>(arg));
  if (start->restore) (void)::sched_setaffinity(0, sizeof start->allowed, &start->allowed);
  start->work();
  return nullptr;
}

}  // namespace

ParallelThread::ParallelThread(std::function<void()> work) {
  auto start = std::make_unique<Start>();
  start->work = std::move(work);
  pthread_attr_t attr;
  if (int err = ::pthread_attr_init(&attr)) throw std::system_error(err, std::generic_category(), "pthread_attr_init");
  // Every CPU this process may use but the caller's, when there is one; a failure of any
  // step leaves the thread where Linux puts it.
  const int here = ::sched_getcpu();
  if (here >= 0 && here < CPU_SETSIZE && ::sched_getaffinity(0, sizeof start->allowed, &start->allowed) == 0) {
    cpu_set_t elsewhere = start->allowed;
    CPU_CLR(here, &elsewhere);
    start->restore =
        CPU_COUNT(&elsewhere) > 0 && ::pthread_attr_setaffinity_np(&attr, sizeof elsewhere, &elsewhere) == 0;
  }
  int err = ::pthread_create(&thread_, &attr, run, start.get());
  if (err == EINVAL && start->restore) {
    // A CPU of the set went offline meanwhile: start where Linux puts it.
    start->restore = false;
    ::pthread_attr_destroy(&attr);
    ::pthread_attr_init(&attr);
    err = ::pthread_create(&thread_, &attr, run, start.get());
  }
  ::pthread_attr_destroy(&attr);
  if (err) throw std::system_error(err, std::generic_category(), "pthread_create");
  start.release();  // the thread's now
  started_ = true;
}

ParallelThread::~ParallelThread() { join(); }

ParallelThread::ParallelThread(ParallelThread&& other) noexcept
    : thread_(other.thread_), started_(std::exchange(other.started_, false)) {}

ParallelThread& ParallelThread::operator=(ParallelThread&& other) noexcept {
  if (this != &other) {
    join();
    thread_ = other.thread_;
    started_ = std::exchange(other.started_, false);
  }
  return *this;
}

void ParallelThread::join() {
  if (!started_) return;
  ::pthread_join(thread_, nullptr);
  started_ = false;
}

}  // namespace corral::os
