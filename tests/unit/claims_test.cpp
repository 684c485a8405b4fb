#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <thread>
#include <vector>

#include "lease/claims.hpp"
#include "cli.hpp"

namespace fs = std::filesystem;
using corral::Claim;
using corral::ClaimFile;
using corral::ClaimStore;
using corral::Error;
using corral::test::TempDir;

namespace {
Claim sample(const std::string& id, const std::string& slug) {
  Claim c;
  c.lease_id = id;
  c.slug = slug;
  c.provider = "local";
  c.sandbox_id = "sb-" + id;
  c.details = {{"k", "v"}};
  c.created_at = corral::now_rfc3339();
  return c;
}
}  // namespace

TEST_CASE("claims are written with mode 0600 and read back") {
  TempDir t;
  ClaimStore store(t.path() / "leases");
  store.write(sample("abc123", "calm-otter"));
  struct stat st {};
  REQUIRE(::stat((t.path() / "leases/abc123.json").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  auto c = store.read("abc123");
  REQUIRE(c);
  CHECK(c->slug == "calm-otter");
  CHECK(c->details.at("k") == "v");
  CHECK_FALSE(store.read("nope"));
  // No temp files are left behind.
  int files = 0;
  for (auto& e : fs::directory_iterator(t.path() / "leases")) files += e.path().extension() == ".json" ? 1 : 100;
  CHECK(files == 1);
}

TEST_CASE("a pooled claim keeps its pool tag; one without a tag reads back without one") {
  TempDir t;
  ClaimStore store(t.path() / "leases");
  Claim c = sample("abc123", "calm-otter");
  c.pool = corral::PoolTag{"0123456789abcdef", 3, 1764633600, 1764637200};
  store.write(c);
  store.write(sample("def456", "eager-yak"));
  auto pooled = store.read("abc123");
  REQUIRE(pooled);
  REQUIRE(pooled->pool);
  CHECK(pooled->pool->key == "0123456789abcdef");
  CHECK(pooled->pool->size == 3);
  CHECK(pooled->pool->filled_at == 1764633600);
  CHECK(pooled->pool->expires_at == 1764637200);
  auto plain = store.read("def456");
  REQUIRE(plain);
  CHECK_FALSE(plain->pool);
}

TEST_CASE("threads racing for a new host id all get the same one, and a damaged id is replaced") {
  TempDir t;
  for (int round = 0; round < 20; ++round) {
    fs::remove(t.path() / "host-id");
    std::vector<std::string> ids(8);
    std::vector<std::thread> threads;
    for (std::string& id : ids) threads.emplace_back([&] { id = ClaimStore(t.path() / "leases").host_id(); });
    for (std::thread& th : threads) th.join();
    CHECK(std::set<std::string>(ids.begin(), ids.end()).size() == 1);
    CHECK(ids[0].size() == 12);
  }
  std::ofstream(t.path() / "host-id") << "not an id\n";
  const std::string fresh = ClaimStore(t.path() / "leases").host_id();
  CHECK(fresh.size() == 12);
  CHECK(ClaimStore(t.path() / "leases").host_id() == fresh);
  int leftovers = 0;
  for (auto& e : fs::directory_iterator(t.path())) leftovers += e.path().filename() != "host-id" && e.path().filename() != "leases";
  CHECK(leftovers == 0);
}

TEST_CASE("a lease resolves by id or slug, and a miss lists what exists") {
  TempDir t;
  ClaimStore store(t.path());
  store.write(sample("aaa", "calm-otter"));
  store.write(sample("bbb", "brave-yak"));
  CHECK(store.resolve("bbb").slug == "brave-yak");
  CHECK(store.resolve("calm-otter").lease_id == "aaa");
  CHECK_THROWS_WITH_AS(store.resolve("zzz"), doctest::Contains("no lease 'zzz'"), corral::Error);
  CHECK_THROWS_AS(store.resolve("../etc/passwd"), corral::Error);
  store.remove("aaa");
  CHECK_FALSE(store.read("aaa"));
}

TEST_CASE("a pool tag with numbers no fill writes makes the claim corrupt, not arithmetic to overflow") {
  TempDir t;
  ClaimStore store(t.path());
  const std::string head = R"({"version":1,"leaseId":"abc123","slug":"calm-otter","provider":"local",)"
                           R"("sandboxId":"sb-1","kept":false,"pool":{"key":"0123456789abcdef",)";
  for (const char* numbers : {R"("size":0,"filledAt":1,"expiresAt":2)", R"("size":4294967297,"filledAt":1,"expiresAt":2)",
                              R"("size":2,"filledAt":-9223372036854775807,"expiresAt":2)",
                              R"("size":2,"filledAt":5,"expiresAt":4)",
                              R"("size":2,"filledAt":1,"expiresAt":9223372036854775807)"}) {
    INFO(numbers);
    t.write("abc123.json", head + numbers + "}}");
    CHECK_THROWS_WITH_AS(store.read("abc123"), doctest::Contains("pool tag out of range"), corral::Error);
  }
  t.write("abc123.json", head + R"("size":2,"filledAt":1764633600,"expiresAt":1764637200}})");
  auto fine = store.read("abc123");
  REQUIRE(fine);
  CHECK(fine->pool->size == 2);
}

TEST_CASE("a corrupt claim is an error naming the file, not a crash") {
  TempDir t;
  ClaimStore store(t.path());
  t.write("bad.json", "{\"leaseId\": ");
  CHECK_THROWS_WITH_AS(store.read("bad"), doctest::Contains("bad.json"), corral::Error);
  CHECK(store.all().empty());
}

TEST_CASE("concurrent processes updating one lease under its lock lose no update") {
  TempDir t;
  ClaimStore store(t.path());
  Claim c = sample("shared", "busy-bee");
  c.fingerprint = "0";
  store.write(c);
  constexpr int kProcs = 6, kRounds = 40;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcs; ++p) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      for (int i = 0; i < kRounds; ++i) {
        corral::LeaseLock lock = store.lock("shared");
        Claim mine = *store.read("shared");
        mine.fingerprint = std::to_string(std::stoi(mine.fingerprint) + 1);
        store.write(mine);
        // A second lease per process, written without contention, must stay intact too.
        store.write(sample("own" + std::to_string(p), "p" + std::to_string(p)));
      }
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  CHECK(store.read("shared")->fingerprint == std::to_string(kProcs * kRounds));
  CHECK(store.all().size() == kProcs + 1);
}

TEST_CASE("try_lock fails while another process holds the lease") {
  TempDir t;
  ClaimStore store(t.path());
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    corral::LeaseLock lock = store.lock("held");
    (void)!::write(ready[1], "x", 1);
    ::sleep(2);
    ::_exit(0);
  }
  char x;
  REQUIRE(::read(ready[0], &x, 1) == 1);
  CHECK_FALSE(store.try_lock("held").has_value());
  int status;
  ::waitpid(pid, &status, 0);
  CHECK(store.try_lock("held").has_value());
}

TEST_CASE("a claim file that is a FIFO, a link or far too large is corrupt, never waited on or followed") {
  TempDir t;
  ClaimStore store(t.path() / "leases");
  fs::create_directories(store.dir());
  REQUIRE(::mkfifo((store.dir() / "aaaaaaaaaaaa.json").c_str(), 0600) == 0);
  fs::create_symlink("/etc/hostname", store.dir() / "bbbbbbbbbbbb.json");
  std::ofstream(store.dir() / "cccccccccccc.json") << std::string(2 << 20, ' ');
  std::ofstream(store.dir() / "dddddddddddd.json") << std::string(300'000, '[');
  std::vector<ClaimFile> files = store.scan();
  REQUIRE(files.size() == 4);
  for (const ClaimFile& f : files) {
    CAPTURE(f.lease_id);
    CHECK_FALSE(f.claim);
    CHECK_FALSE(f.problem.empty());
  }
  CHECK(files[0].problem.find("FIFO") != std::string::npos);
  CHECK(files[1].problem.find("symbolic link") != std::string::npos);
  CHECK(files[2].problem.find("larger than") != std::string::npos);
  CHECK(files[3].problem.find("nest deeper than") != std::string::npos);
  CHECK_THROWS_AS(store.read("aaaaaaaaaaaa"), Error);
  CHECK(store.all().empty());
  // Removing the link removes the link, not what it points to.
  store.remove("bbbbbbbbbbbb");
  CHECK_FALSE(fs::is_symlink(store.dir() / "bbbbbbbbbbbb.json"));
  CHECK(fs::exists("/etc/hostname"));
}

TEST_CASE("JSON nested deeper than the bound is an error naming the offset, not a crash") {
  CHECK_THROWS_WITH_AS(corral::json::parse(std::string(400'000, '['), "answer"),
                       doctest::Contains("nest deeper than 128 levels at offset 128"), Error);
  std::string deep_ok = std::string(128, '[') + std::string(128, ']');
  CHECK(corral::json::parse(deep_ok, "answer").IsArray());
  // Brackets inside strings are text, not nesting.
  std::string in_string = "{\"a\":\"" + std::string(1000, '[') + "\\\"\"}";
  CHECK(corral::json::parse(in_string, "answer").IsObject());
}
