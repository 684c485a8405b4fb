// SandboxStore: the local provider's sandbox folders. A create builds its folder under a
// staging name, locked, while any listing (in this process or another) removes staging
// folders nobody holds: the two must never trip over each other.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <atomic>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli.hpp"
#include "sandbox_store.hpp"

namespace fs = std::filesystem;
using corral::local::LocalSandbox;
using corral::local::SandboxStore;

TEST_CASE("creates racing listings that sweep abandoned staging folders all succeed, whole") {
  corral::test::TempDir dir;
  const SandboxStore store(dir.path() / "local");
  store.create("first", {});  // the folder exists for the listings to read
  std::atomic<bool> done{false};
  std::atomic<int> listings{0};
  // A staging folder is locked before it takes its staging name: a listing, however often
  // it runs, never finds one its maker has not locked yet, and never removes one in use.
  std::thread sweeper([&] {
    while (!done) {
      store.all();
      ++listings;
    }
  });
  std::vector<std::string> made;
  std::string failure;
  for (int i = 0; i < 500 && failure.empty(); ++i) {
    try {
      made.push_back(store.create("s" + std::to_string(i), {{"n", std::to_string(i)}}).id);
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  done = true;
  sweeper.join();
  CHECK_MESSAGE(failure.empty(), failure);
  CHECK(listings > 0);
  for (const std::string& id : made) {
    const auto found = store.find(id);
    REQUIRE_MESSAGE(found, id);
    CHECK(fs::is_directory(store.workspace_of(id)));
  }
  CHECK(store.all().size() == made.size() + 1);
  for (const auto& e : fs::directory_iterator(store.root()))
    CHECK_MESSAGE(e.path().filename().string().rfind(".new-", 0) != 0, e.path());
}

TEST_CASE("a folder still being made is left alone by a listing until it is a minute old") {
  corral::test::TempDir dir;
  const SandboxStore store(dir.path() / "local");
  store.create("first", {});
  const fs::path young = store.root() / ".mk-local-0123456789";
  const fs::path old = store.root() / ".mk-local-9876543210";
  fs::create_directory(young);
  fs::create_directory(old);
  const timespec minutes_ago[2] = {{::time(nullptr) - 120, 0}, {::time(nullptr) - 120, 0}};
  REQUIRE(::utimensat(AT_FDCWD, old.c_str(), minutes_ago, 0) == 0);
  CHECK(store.all().size() == 1);
  CHECK(fs::is_directory(young));  // its maker may be about to lock it
  CHECK(!fs::exists(old));         // its maker died between its mkdir and its rename
}

TEST_CASE("a staging name that is a link, a FIFO or a file is never followed, waited on or removed by a listing") {
  corral::test::TempDir dir;
  const SandboxStore store(dir.path() / "local");
  store.create("first", {});
  // Anyone who can write the state folder may plant these; a listing must pass them by.
  dir.write("outside/keep.txt", "not corral's");
  // Both prefixes a listing sweeps, the one made first old enough to be swept.
  for (const std::string prefix : {".new-", ".mk-"}) {
    fs::create_directory_symlink(dir.path() / "outside", store.root() / (prefix + "link"));
    REQUIRE(::mkfifo((store.root() / (prefix + "fifo")).c_str(), 0600) == 0);
    dir.write("local/" + prefix + "file", "a file");
    const timespec minutes_ago[2] = {{::time(nullptr) - 120, 0}, {::time(nullptr) - 120, 0}};
    for (const char* name : {"link", "fifo", "file"})
      REQUIRE(::utimensat(AT_FDCWD, (store.root() / (prefix + name)).c_str(), minutes_ago, AT_SYMLINK_NOFOLLOW) == 0);
  }
  CHECK(store.all().size() == 1);  // returns: the FIFOs are not opened for reading
  CHECK(corral::test::read_file(dir.path() / "outside/keep.txt") == "not corral's");
  for (const std::string prefix : {".new-", ".mk-"}) {
    CAPTURE(prefix);
    CHECK(fs::is_symlink(store.root() / (prefix + "link")));
    CHECK(fs::is_fifo(store.root() / (prefix + "fifo")));
    CHECK(fs::is_regular_file(store.root() / (prefix + "file")));
  }
}

TEST_CASE("remove takes a sandbox's whole folder: its record alone, a stray file beside it, a workspace") {
  corral::test::TempDir dir;
  const SandboxStore store(dir.path() / "local");
  const LocalSandbox in_memory = store.create("memory", {}, false, /*in_memory=*/true);
  const LocalSandbox with_stray = store.create("stray", {}, false, /*in_memory=*/true);
  dir.write("local/" + with_stray.id + "/sandbox.json.tmp", "half-written");  // the rmdir fails: the walk goes on
  const LocalSandbox on_disk = store.create("disk", {});
  dir.write("local/" + on_disk.id + "/workspace/sub/file", "made by the command");
  fs::permissions(store.workspace_of(on_disk.id) / "sub", fs::perms::owner_read | fs::perms::owner_exec,
                  fs::perm_options::replace);  // read-only, as a command may leave it
  for (const LocalSandbox& s : {in_memory, with_stray, on_disk}) {
    CAPTURE(s.slug);
    REQUIRE(fs::exists(store.dir_of(s.id)));
    store.remove(s.id);
    CHECK(!fs::exists(store.dir_of(s.id)));
    CHECK(!store.find(s.id));
    store.remove(s.id);  // gone already: nothing to do, no error
  }
  CHECK(store.all().empty());
}

TEST_CASE("a kept sandbox has a /tmp folder of its own beside its workspace, which a fork copies and remove takes") {
  corral::test::TempDir dir;
  const SandboxStore store(dir.path() / "local");
  const LocalSandbox kept = store.create("kept", {});
  struct stat st {};
  REQUIRE(::lstat(store.tmp_of(kept.id).c_str(), &st) == 0);
  CHECK(S_ISDIR(st.st_mode));
  CHECK((st.st_mode & 07777) == 01777);  // as a /tmp is, whatever the umask
  CHECK(store.kept_tmp(kept) == store.tmp_of(kept.id).string());
  dir.write("local/" + kept.id + "/tmp/.cache/pip/wheel", "cached");
  const LocalSandbox copy = store.fork(kept, "copy", {});
  CHECK(corral::test::read_file(store.tmp_of(copy.id) / ".cache/pip/wheel") == "cached");
  // An in-memory sandbox has none: each of its commands gets a fresh /tmp.
  const LocalSandbox in_memory = store.create("memory", {}, false, /*in_memory=*/true);
  CHECK(store.kept_tmp(in_memory).empty());
  // One made before /tmp was kept has none either, and still works as it did.
  fs::remove_all(store.tmp_of(copy.id));
  CHECK(store.kept_tmp(copy).empty());
  for (const LocalSandbox& s : {kept, copy, in_memory}) store.remove(s.id);
  CHECK(store.all().empty());
  CHECK(fs::is_empty(dir.path() / "local"));
}

namespace {
std::string record_of(const SandboxStore& store, const std::string& id) {
  std::ifstream in(store.dir_of(id) / "sandbox.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
void rewrite(const SandboxStore& store, const std::string& id, const std::string& text) {
  std::ofstream(store.dir_of(id) / "sandbox.json", std::ios::trunc) << text;
}
}  // namespace

TEST_CASE("a sandbox's record is written as before shapes, and a record never loosens what it says") {
  corral::test::TempDir dir;
  const SandboxStore store(dir.path() / "local");
  LocalSandbox s = store.create("calm-otter", {{"corral-lease", "l"}}, /*no_network=*/true, /*in_memory=*/true);
  store.set_paused(s, true);
  const std::string head = R"({"id":")" + s.id + R"(","slug":"calm-otter","createdAt":")" + s.created_at +
                           R"(","labels":{"corral-lease":"l"})";
  CHECK(record_of(store, s.id) == head + R"(,"network":"none","workspace":"memory","paused":true})" + "\n");
  auto found = store.find(s.id);
  REQUIRE(found);
  CHECK(found->no_network);
  CHECK(found->in_memory);
  CHECK(found->paused);
  CHECK(found->labels == s.labels);

  // Anything but absent means no network, null and nonsense included.
  rewrite(store, s.id, head + R"(,"network":null})");
  REQUIRE(store.find(s.id));
  CHECK(store.find(s.id)->no_network);
  rewrite(store, s.id, head + R"(,"network":{"open":true}})");
  CHECK(store.find(s.id)->no_network);
  rewrite(store, s.id, head + "}");
  CHECK_FALSE(store.find(s.id)->no_network);
  // A uid outside corral's range never makes a jail run as anyone else: no sandbox at all.
  for (const char* uid : {"0", "1000", "-1", "\"2080374784\"", "null"}) {
    INFO(uid);
    rewrite(store, s.id, head + R"(,"uid":)" + uid + "}");
    CHECK_FALSE(store.find(s.id));
  }
  rewrite(store, s.id, head + R"(,"uid":2080374785})");
  REQUIRE(store.find(s.id));
  CHECK(store.find(s.id)->user->uid == 2080374785u);
  rewrite(store, s.id, "[]");
  CHECK_FALSE(store.find(s.id));  // no id, no labels: not a sandbox of corral's
}

TEST_CASE("an allow list is recorded with the sandbox and read back; a damaged one reads as no network at all") {
  corral::test::TempDir dir;
  const SandboxStore store(dir.path() / "local");
  LocalSandbox s = store.create("calm-otter", {}, /*no_network=*/false, /*in_memory=*/false,
                                {"pypi.org", "host.corral.internal:5432"});
  const std::string head =
      R"({"id":")" + s.id + R"(","slug":"calm-otter","createdAt":")" + s.created_at + R"(","labels":{})";
  CHECK(record_of(store, s.id) == head + R"(,"network":"allow:pypi.org,host.corral.internal:5432"})" + "\n");
  auto found = store.find(s.id);
  REQUIRE(found);
  CHECK(found->no_network);  // its jails have a network of their own; the proxy is the way out
  CHECK(found->egress == std::vector<std::string>{"pypi.org", "host.corral.internal:5432"});
  for (const char* damaged : {R"("allow:")", R"("allow:http://x")", R"("allow:a.com:0")", R"("open")", "7"}) {
    INFO(damaged);
    rewrite(store, s.id, head + R"(,"network":)" + damaged + "}");
    REQUIRE(store.find(s.id));
    CHECK(store.find(s.id)->no_network);
    CHECK(store.find(s.id)->egress.empty());  // none: not even the listed hosts
  }
}

TEST_CASE("a sandbox's egress report adds up its commands' counts, is bounded, and a damaged one starts again") {
  corral::test::TempDir dir;
  const SandboxStore store(dir.path() / "local");
  LocalSandbox s = store.create("calm-otter", {}, false, false, {"pypi.org"});
  CHECK_FALSE(store.egress_of(s.id));
  store.add_egress(s.id, {{{"pypi.org", 443, 2, ""}}, {{"evil.example", 443, 1, "not in the allow list"}}});
  store.add_egress(s.id, {{{"pypi.org", 443, 1, ""}, {"pypi.org", 80, 1, ""}}, {}});
  auto total = store.egress_of(s.id);
  REQUIRE(total);
  REQUIRE(total->allowed.size() == 2);
  CHECK(total->allowed[0].count == 3);
  CHECK(total->allowed[1].port == 80);
  REQUIRE(total->refused.size() == 1);
  CHECK(total->refused[0].reason == "not in the allow list");

  // Past the bound, new destinations are counted as one.
  corral::EgressReport many;
  for (size_t i = 0; i < SandboxStore::kMaxEgressListed + 10; ++i)
    many.refused.push_back({"h" + std::to_string(i) + ".example", 443, 1, "not in the allow list"});
  store.add_egress(s.id, many);
  total = store.egress_of(s.id);
  REQUIRE(total);
  CHECK(total->refused.size() == SandboxStore::kMaxEgressListed + 1);
  CHECK(total->refused.back().host == "(others)");
  CHECK(total->refused.back().count == 11);  // 255 fit beside the one listed before; 11 did not

  std::ofstream(store.dir_of(s.id) / "egress.json", std::ios::trunc) << "{\"allowed\":";
  CHECK_FALSE(store.egress_of(s.id));
  store.add_egress(s.id, {{{"pypi.org", 443, 1, ""}}, {}});
  REQUIRE(store.egress_of(s.id));
  CHECK(store.egress_of(s.id)->allowed.at(0).count == 1);
}
