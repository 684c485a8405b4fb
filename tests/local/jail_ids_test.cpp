// JailIds: the register of the uids local jails run as when corral is root, one per
// sandbox. Two sandboxes never share one, a registration outlives its corral only while
// its sandbox's folder exists, and nothing planted in the register is followed.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cli.hpp"
#include "corral/errors.hpp"
#include "jail_ids.hpp"

namespace fs = std::filesystem;
using corral::local::JailIdReservation;
using corral::local::JailIds;
using corral::local::kJailIdCount;
using corral::local::kJailIdFirst;

namespace {

bool nothing_known(uid_t) { return false; }

}  // namespace

TEST_CASE("a reserved uid is corral's, registered to its sandbox folder, and freed when never committed") {
  corral::test::TempDir dir;
  const JailIds ids(dir.path() / "ids", nothing_known);
  const fs::path sandbox = dir.path() / "local-0011223344";
  uid_t uid = 0;
  {
    JailIdReservation r = ids.reserve(sandbox);
    uid = r.user().uid;
    CHECK(corral::local::is_jail_id(uid));
    CHECK(r.user().gid == uid);
    CHECK(ids.owner_of(uid) == sandbox);
    struct stat st {};
    REQUIRE(::stat(ids.dir().c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0700);
  }
  CHECK(ids.owner_of(uid).empty());  // the sandbox was never made: nothing stays
  {
    JailIdReservation r = ids.reserve(sandbox);
    uid = r.user().uid;
    r.commit();
  }
  CHECK(ids.owner_of(uid) == sandbox);
  ids.release(uid, dir.path() / "someone-else");
  CHECK(ids.owner_of(uid) == sandbox);  // only its owner frees it
  ids.release(uid, sandbox);
  CHECK(ids.owner_of(uid).empty());
}

TEST_CASE("reservations at once from many threads never share a uid") {
  corral::test::TempDir dir;
  // A range of 64: the threads collide often, as many corrals on a busy machine would.
  const JailIds ids(dir.path() / "ids", nothing_known, kJailIdFirst, 64);
  std::mutex mutex;
  std::vector<JailIdReservation> held;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 6; ++i) {
        JailIdReservation r = ids.reserve(dir.path() / ("sandbox-" + std::to_string(t) + "-" + std::to_string(i)));
        std::lock_guard lock(mutex);
        held.push_back(std::move(r));
      }
    });
  for (std::thread& t : threads) t.join();
  std::set<uid_t> uids;
  for (const JailIdReservation& r : held) uids.insert(r.user().uid);
  CHECK(uids.size() == held.size());
  CHECK(held.size() == 48);
}

TEST_CASE("a registration whose sandbox folder is gone is free again; one whose folder is there is not") {
  corral::test::TempDir dir;
  const JailIds ids(dir.path() / "ids", nothing_known, kJailIdFirst + 7, 1);  // one uid: every try meets it
  const fs::path kept = dir.path() / "kept";
  fs::create_directory(kept);
  ids.reserve(kept).commit();
  CHECK_THROWS_WITH_AS(ids.reserve(dir.path() / "next"), doctest::Contains("no free uid"), corral::Error);
  CHECK(ids.owner_of(kJailIdFirst + 7) == kept);
  // Its corral was killed, and the sandbox's folder removed since (`stop --orphans`).
  fs::remove(kept);
  JailIdReservation again = ids.reserve(dir.path() / "next");
  CHECK(again.user().uid == kJailIdFirst + 7);
  CHECK(ids.owner_of(kJailIdFirst + 7) == dir.path() / "next");
}

TEST_CASE("a uid the machine knows (a user, a group, a subordinate range) is never handed out") {
  corral::test::TempDir dir;
  const uid_t first = kJailIdFirst + 100;
  const JailIds ids(dir.path() / "ids", [&](uid_t uid) { return uid != first + 3; }, first, 8);
  for (int i = 0; i < 20; ++i) CHECK(ids.reserve(dir.path() / std::to_string(i)).user().uid == first + 3);
  CHECK(JailIds::known_to_this_machine(0));  // root
  CHECK_FALSE(JailIds::known_to_this_machine(kJailIdFirst + kJailIdCount / 2));
}

TEST_CASE("a link or a folder planted at a registration is never followed or taken over") {
  corral::test::TempDir dir;
  const JailIds ids(dir.path() / "ids", nothing_known, kJailIdFirst, 1);
  fs::create_directories(ids.dir());
  const fs::path target = dir.path() / "target";
  { std::ofstream(target) << "untouched"; }
  fs::create_symlink(target, ids.dir() / std::to_string(kJailIdFirst));
  CHECK_THROWS_WITH_AS(ids.reserve(dir.path() / "a"), doctest::Contains("no free uid"), corral::Error);
  CHECK(corral::test::read_file(target) == "untouched");
  fs::remove(ids.dir() / std::to_string(kJailIdFirst));
  fs::create_directory(ids.dir() / std::to_string(kJailIdFirst));
  CHECK_THROWS_WITH_AS(ids.reserve(dir.path() / "a"), doctest::Contains("no free uid"), corral::Error);
  CHECK(fs::is_directory(ids.dir() / std::to_string(kJailIdFirst)));
}
