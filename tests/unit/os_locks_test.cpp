// The OS layer's locks: a FileLock held across processes and given back by a death, and
// SlotLock's N slots shared by every process of a machine without a daemon.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "cli.hpp"
#include "corral/errors.hpp"
#include "corral/os/file_lock.hpp"
#include "corral/os/slot_lock.hpp"

namespace fs = std::filesystem;
using corral::os::FileLock;
using corral::os::SlotLock;

namespace {

// A child process that takes slot `want` of `dir` (N = `slots`), says so on `ready` and
// waits to be killed. Its pid.
pid_t holder(const fs::path& dir, int slots) {
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(ready[0]);
    try {
      SlotLock held = SlotLock::take(dir, slots, "test slots");
      const char c = static_cast<char>('0' + held.slot());
      (void)!::write(ready[1], &c, 1);
      while (true) ::pause();
    } catch (...) {
      ::_exit(3);
    }
  }
  ::close(ready[1]);
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  ::close(ready[0]);
  return pid;
}

}  // namespace

TEST_CASE("a file lock excludes another holder, in this process or another, and is given back by a death") {
  corral::test::TempDir dir;
  const fs::path path = dir.path() / "x.lock";
  std::optional<FileLock> first = FileLock::try_acquire(path, "test lock");
  REQUIRE(first);
  CHECK_FALSE(FileLock::try_acquire(path, "test lock"));
  CHECK(FileLock::held_elsewhere(path));
  // A wait is told to stop. It says it waits only once the lock is still held after a
  // poll: a wait stopped at its first poll said nothing; one stopped at its second did.
  bool told = false;
  CHECK_THROWS_AS(FileLock::acquire(path, "test lock", {[&] { told = true; }, [] { return true; }}), corral::Error);
  CHECK_FALSE(told);
  int polls = 0;
  CHECK_THROWS_AS(FileLock::acquire(path, "test lock", {[&] { told = true; }, [&] { return ++polls == 2; }}),
                  corral::Error);
  CHECK(told);
  first.reset();
  CHECK_FALSE(FileLock::held_elsewhere(path));
  CHECK(FileLock::try_acquire(path, "test lock"));
  // Looking never makes a lock file.
  CHECK_FALSE(FileLock::held_elsewhere(dir.path() / "none.lock"));
  CHECK_FALSE(fs::exists(dir.path() / "none.lock"));
  // A link planted at a lock is refused, never followed.
  fs::create_symlink(dir.path() / "elsewhere", dir.path() / "link.lock");
  try {
    (void)FileLock::try_acquire(dir.path() / "link.lock", "test lock");
    FAIL("a link was followed");
  } catch (const corral::Error& e) {
    CHECK(e.code() == corral::ErrorCode::config);
  }
  CHECK_FALSE(fs::exists(dir.path() / "elsewhere"));
}

TEST_CASE("slots: N holders at most, from threads and processes alike; a waiter hears the count and Ctrl-C") {
  corral::test::TempDir dir;
  const fs::path slots = dir.path() / "slots";
  SlotLock a = SlotLock::take(slots, 2, "test slots");
  const pid_t other = holder(slots, 2);
  CHECK(SlotLock::in_use(slots, 2) == 2);
  CHECK(a.slot() >= 0);
  std::vector<int> heard;
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = true;
  });
  CHECK_THROWS_AS(
      SlotLock::take(slots, 2, "test slots", [&](int n) { heard.push_back(n); }, {{}, [&] { return stop.load(); }}),
      corral::Error);
  stopper.join();
  CHECK(heard == std::vector<int>{2});
  // A holder killed gives its slot back at once: the next taker gets it within a poll.
  ::kill(other, SIGKILL);
  ::waitpid(other, nullptr, 0);
  const auto start = std::chrono::steady_clock::now();
  SlotLock b = SlotLock::take(slots, 2, "test slots");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  CHECK(b.slot() != a.slot());
  a.release();
  CHECK(SlotLock::in_use(slots, 2) == 1);
  CHECK_THROWS_AS(SlotLock::take(slots, 0, "test slots"), corral::Error);
}

TEST_CASE("slots taken at once by many threads: never more holders than slots, and all get one in turn") {
  corral::test::TempDir dir;
  const fs::path slots = dir.path() / "slots";
  std::mutex mutex;
  int holding = 0, most = 0, done = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      SlotLock held = SlotLock::take(slots, 3, "test slots", {}, {}, std::chrono::milliseconds(5));
      {
        std::lock_guard lock(mutex);
        most = std::max(most, ++holding);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      std::lock_guard lock(mutex);
      --holding;
      ++done;
    });
  for (std::thread& t : threads) t.join();
  CHECK(most <= 3);
  CHECK(most >= 2);
  CHECK(done == 8);
}
