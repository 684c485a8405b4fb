// Warm pools end to end on the local provider (real bwrap jails): `pool fill`, `pool
// status`, `pool drain`, a run taking a pooled sandbox and the refill it starts, the
// races (two runs, one pooled sandbox; two fills of one pool), expiry and `stop --orphans`,
// and a filler killed mid-way.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <signal.h>

#include <fstream>
#include <set>
#include <thread>

#include "cli.hpp"
#include "corral/json.hpp"

namespace fs = std::filesystem;
using corral::test::Background;
using corral::test::CliEnv;
using corral::test::CliResult;
using corral::test::eventually;
using corral::test::read_file;

namespace {

corral::json::Document parse(const std::string& text) { return corral::json::parse(text, "corral output"); }

struct PoolCli : CliEnv {
  PoolCli() {
    root().write("work/file.txt", "v1\n");
    root().write("work/old.txt", "deleted later\n");
  }
  // `pool status --json`: the pools.
  corral::json::Document status() const {
    CliResult r = run({"pool", "status", "--json"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    return parse(r.out);
  }
  // The ready sandboxes of the only pool (0 when there is none).
  int ready() const {
    auto doc = status();
    return doc.GetArray().Empty() ? 0 : static_cast<int>(corral::json::get_int(doc.GetArray()[0], "ready"));
  }
  // `run --lease-output FILE -- ARGS`, the handle parsed.
  std::pair<CliResult, corral::json::Document> run_with_handle(const std::vector<std::string>& command,
                                                               const std::string& name = "handle.json") const {
    const std::string file = (root().path() / name).string();
    std::vector<std::string> args = {"run", "--lease-output", file, "--"};
    args.insert(args.end(), command.begin(), command.end());
    CliResult r = run(args);
    return {r, parse(read_file(file))};
  }
};

bool pooled(const corral::json::Value& handle) { return corral::json::get_bool(handle, "pooled"); }

}  // namespace

TEST_CASE("pool fill makes N ready; a run takes one, syncs what changed, and a background refill restores N") {
  PoolCli env;
  CliResult r = env.run({"pool", "fill", "--size", "2"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(env.local_sandboxes().size() == 2);
  // Under a quarter second a sandbox (a local one is ready in milliseconds), the fill says
  // the pool saves runs little; the time it measured is in its report.
  const size_t each = r.err.find(" ms each)");
  REQUIRE_MESSAGE(each != std::string::npos, r.err);
  const long ms = std::stol(r.err.substr(r.err.rfind('(', each) + 1));
  CHECK((r.err.find("a local sandbox starts about as fast without a pool") != std::string::npos) == (ms < 250));
  auto doc = env.status();
  REQUIRE(doc.GetArray().Size() == 1);
  const auto& pool = doc.GetArray()[0];
  CHECK(corral::json::get_string(pool, "provider") == "local");
  CHECK(corral::json::get_int(pool, "ready") == 2);
  CHECK(corral::json::get_int(pool, "size") == 2);
  CHECK(corral::json::get_bool(pool, "canPause"));
  CHECK(env.lease_states() == std::vector<std::string>{"pooled", "pooled"});
  // Filled to its size already: another fill makes nothing.
  r = env.run({"pool", "fill", "--size", "2", "--json"});
  CHECK(corral::json::get_int(parse(r.out), "made") == 0);

  // The workspace changes after the fill: the run sees exactly the new tree.
  const std::set<std::string> before = env.pooled_sandboxes();
  env.root().write("work/file.txt", "v2\n");
  fs::remove(env.workspace() / "old.txt");
  // Named, not a structured binding: clang 14 refuses one captured by INFO's lambda.
  const auto taken = env.run_with_handle({"sh", "-c", "cat file.txt; test -e old.txt && echo stale; true"});
  const CliResult& run = taken.first;
  const corral::json::Document& handle = taken.second;
  INFO(run.err);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "v2\n");
  CHECK(pooled(handle));
  CHECK(before.count(corral::json::get_string(handle, "sandboxId")) == 1);
  CHECK_FALSE(corral::json::get_bool(handle, "kept"));

  // The refill runs on after the run ended and brings the pool back to 2.
  CHECK(env.pool_settles_at(2));
  CHECK(env.local_sandboxes().size() == 2);
  CHECK(fs::exists(env.state_dir() / "corral/pools/refill.log"));

  // --no-pool creates anyway and leaves the pool alone.
  r = env.run({"run", "--no-pool", "--lease-output", (env.root().path() / "np.json").string(), "--", "true"});
  CHECK(r.exit_code == 0);
  CHECK_FALSE(pooled(parse(read_file(env.root().path() / "np.json"))));
  CHECK(env.ready() == 2);

  r = env.run({"pool", "drain"});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(env.claims().empty());
  CHECK(env.local_sandboxes().empty());
  CHECK(env.status().GetArray().Empty());
}

TEST_CASE("a pool filled with --no-refill is not refilled by the run that takes from it, and says so") {
  PoolCli env;
  CliResult r = env.run({"pool", "fill", "--size", "2", "--no-refill"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto doc = env.status();
  REQUIRE(doc.GetArray().Size() == 1);
  CHECK_FALSE(corral::json::get_bool(doc.GetArray()[0], "refills"));
  CHECK(env.run({"pool", "status"}).out.find("filled with --no-refill: runs do not refill it") != std::string::npos);
  // Full already: a second fill has nothing to mark, and says so.
  r = env.run({"pool", "fill", "--size", "2", "--no-refill"});
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("the pool is full already") == std::string::npos);  // it is one already
  r = env.run({"run", "-v", "--", "true"});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.err.find("the pool was filled with --no-refill: not refilling it") != std::string::npos);
  CHECK(r.err.find("refilling the pool in the background") == std::string::npos);
  CHECK(env.ready() == 1);
  CHECK_FALSE(fs::exists(env.state_dir() / "corral/pools/refill.log"));  // no refill ever started
  // Taken down to none, the pool stays empty; a run then makes its own sandbox.
  CHECK(env.run({"run", "--", "true"}).exit_code == 0);
  CHECK(env.ready() == 0);
  CHECK(env.run({"run", "--", "true"}).exit_code == 0);
  CHECK(env.local_sandboxes().empty());
  // A full pool filled without it cannot become one by a fill that makes nothing: told.
  REQUIRE(env.run({"pool", "fill", "--size", "1"}).exit_code == 0);
  r = env.run({"pool", "fill", "--size", "1", "--no-refill"});
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("the pool is full already, and --no-refill marks only the sandboxes a fill makes") !=
        std::string::npos);
  CHECK(env.run({"pool", "drain"}).exit_code == 0);
}

TEST_CASE("pool drain drains this working tree's pools only; --all drains every tree's") {
  PoolCli env;
  env.root().write("other/file.txt", "another project\n");
  const std::string other = (env.root().path() / "other").string();
  REQUIRE(env.run({"pool", "fill", "--size", "1"}).exit_code == 0);
  REQUIRE(env.run({"pool", "fill", "--size", "1"}, other).exit_code == 0);
  REQUIRE(env.status().GetArray().Size() == 2);

  CliResult r = env.run({"pool", "drain", "-v"}, other);
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.err.find("1 pooled sandbox of other working trees left (--all drains them too)") != std::string::npos);
  auto left = env.status();
  REQUIRE(left.GetArray().Size() == 1);
  CHECK(corral::json::get_string(left.GetArray()[0], "workspace") == env.workspace().string());
  CHECK(env.local_sandboxes().size() == 1);

  r = env.run({"pool", "drain"}, other);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("nothing to drain for this working tree; 1 pooled sandbox of other working trees left "
                   "(`corral pool drain --all` drains every one)") != std::string::npos);
  CHECK(env.local_sandboxes().size() == 1);

  r = env.run({"pool", "drain", "--all"}, other);
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(env.status().GetArray().Empty());
  CHECK(env.local_sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE("two runs at once with a pool of one: exactly one of them gets the pooled sandbox") {
  PoolCli env;
  REQUIRE(env.run({"pool", "fill", "--size", "1"}).exit_code == 0);
  const std::set<std::string> pooled_ids = env.pooled_sandboxes();
  REQUIRE(pooled_ids.size() == 1);
  const std::string file_a = (env.root().path() / "a.json").string();
  const std::string file_b = (env.root().path() / "b.json").string();
  Background a = env.start({"run", "--lease-output", file_a, "--", "cat", "file.txt"});
  Background b = env.start({"run", "--lease-output", file_b, "--", "cat", "file.txt"});
  CHECK(a.wait() == 0);
  CHECK(b.wait() == 0);
  auto ha = parse(read_file(file_a));
  auto hb = parse(read_file(file_b));
  const std::string sa = corral::json::get_string(ha, "sandboxId");
  const std::string sb = corral::json::get_string(hb, "sandboxId");
  CHECK(sa != sb);
  // The sandbox that was pooled went to one run only (the other created one, or took the
  // refill's if that was quicker).
  CHECK(pooled_ids.count(sa) + pooled_ids.count(sb) == 1);
  CHECK(env.pool_settles_at(1));
  REQUIRE(env.run({"pool", "drain"}).exit_code == 0);
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("two fills of one pool at once never make it larger than its size") {
  PoolCli env;
  Background a = env.start({"pool", "fill", "--size", "2"});
  Background b = env.start({"pool", "fill", "--size", "2"});
  CHECK(a.wait() == 0);
  CHECK(b.wait() == 0);
  CHECK(env.pooled_sandboxes().size() == 2);
  CHECK(env.local_sandboxes().size() == 2);
  REQUIRE(env.run({"pool", "drain"}).exit_code == 0);
  CHECK(env.claims().empty());
}

TEST_CASE("stop --orphans leaves a pool alone until it expires; an expired pooled sandbox is removed, never used") {
  PoolCli env;
  REQUIRE(env.run({"pool", "fill", "--size", "1", "--pool-ttl", "1h"}).exit_code == 0);
  CliResult r = env.run({"stop", "--orphans"});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(env.pooled_sandboxes().size() == 1);
  CHECK(env.local_sandboxes().size() == 1);
  REQUIRE(env.run({"pool", "drain"}).exit_code == 0);

  // A pool that expires in a second: waiting for it is the test's only pause.
  REQUIRE(env.run({"pool", "fill", "--size", "1", "--pool-ttl", "1s"}).exit_code == 0);
  const std::set<std::string> expired = env.pooled_sandboxes();
  REQUIRE(eventually([&] {
    auto doc = env.status();
    return !doc.GetArray().Empty() && corral::json::get_int(doc.GetArray()[0], "expired") == 1;
  }));
  CHECK(env.lease_states() == std::vector<std::string>{"abandoned"});
  const auto taken = env.run_with_handle({"cat", "file.txt"});
  const CliResult& run = taken.first;
  const corral::json::Document& handle = taken.second;
  CHECK(run.exit_code == 0);
  CHECK(run.out == "v1\n");
  CHECK_FALSE(pooled(handle));
  CHECK(expired.count(corral::json::get_string(handle, "sandboxId")) == 0);
  // Removed, and replaced by the refill (whose sandboxes expire in a second too).
  CHECK(eventually([&] {
    for (const std::string& id : env.pooled_sandboxes())
      if (expired.count(id)) return false;
    return env.pooled_sandboxes().size() == 1;
  }));
  CHECK(eventually([&] {
    auto doc = env.status();
    return !doc.GetArray().Empty() && corral::json::get_int(doc.GetArray()[0], "expired") == 1;
  }));
  r = env.run({"stop", "--orphans"});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(env.claims().empty());
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("a filler killed mid-way leaves nothing that stop --orphans does not remove once the pool expires") {
  PoolCli env;
  Background fill = env.start({"pool", "fill", "--size", "4", "--pool-ttl", "2s"});
  REQUIRE(eventually([&] { return !env.claims().empty(); }));
  ::kill(fill.pid, SIGKILL);
  fill.wait();
  // What it made is pooled until its time is over, then abandoned.
  REQUIRE(eventually([&] {
    auto doc = env.status();
    return !doc.GetArray().Empty() && corral::json::get_int(doc.GetArray()[0], "expired") >= 1 &&
           corral::json::get_int(doc.GetArray()[0], "ready") == 0;
  }));
  CliResult r = env.run({"stop", "--orphans"});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(env.claims().empty());
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("testbox and mountbox pools: a vanished pooled sandbox is skipped; a provider that cannot pause says so") {
  PoolCli env;
  const fs::path boxes = env.root().path() / "boxes";
  fs::create_directories(boxes);
  const std::string dir = CORRAL_TEST_PLUGIN_DIR;
  env.add_registry("boxes", {dir + "/libcorral-testbox.so", dir + "/libcorral-mountbox.so"});
  env.env["TESTBOX_DIR"] = boxes.string();

  // testbox: the pooled sandbox's folder removed behind corral's back.
  CliResult r = env.run({"pool", "fill", "--provider", "testbox", "--size", "1"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::set<std::string> gone = env.pooled_sandboxes();
  REQUIRE(gone.size() == 1);
  fs::remove_all(boxes / *gone.begin());
  const std::string file = (env.root().path() / "h.json").string();
  r = env.run({"run", "--provider", "testbox", "--lease-output", file, "--", "cat", "file.txt"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "v1\n");
  auto h = parse(read_file(file));
  CHECK_FALSE(pooled(h));
  CHECK(gone.count(corral::json::get_string(h, "sandboxId")) == 0);
  CHECK(env.pool_settles_at(1));
  CHECK(env.pooled_sandboxes() != gone);
  REQUIRE(env.run({"pool", "drain", "--provider", "testbox"}).exit_code == 0);
  CHECK(env.claims().empty());

  // mountbox: no pause-resume, so its pool runs while it waits, and status says so.
  r = env.run({"pool", "fill", "--provider", "mountbox", "--size", "1"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.err.find("cannot pause: pooled sandboxes run while they wait") != std::string::npos);
  r = env.run({"pool", "status"});
  CHECK(r.out.find("cannot pause: pooled sandboxes run while they wait") != std::string::npos);
  auto doc = env.status();
  REQUIRE(doc.GetArray().Size() == 1);
  CHECK_FALSE(corral::json::get_bool(doc.GetArray()[0], "canPause"));
  r = env.run({"run", "--provider", "mountbox", "--lease-output", file, "--", "cat", "file.txt"});
  CHECK(r.out == "v1\n");
  CHECK(pooled(parse(read_file(file))));
  CHECK(env.pool_settles_at(1));
  REQUIRE(env.run({"pool", "drain"}).exit_code == 0);
  CHECK(env.claims().empty());
  CHECK(fs::is_empty(boxes));
}

TEST_CASE("a FIFO planted at the refill's log: the run still takes its pooled sandbox and says the refill could not start") {
  PoolCli env;
  CliResult r = env.run({"pool", "fill", "--size", "1"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const fs::path log = env.state_dir() / "corral/pools/refill.log";
  fs::remove(log);
  REQUIRE(::mkfifo(log.c_str(), 0600) == 0);
  const auto taken = env.run_with_handle({"cat", "file.txt"});
  const CliResult& run = taken.first;
  INFO(run.err);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "v1\n");
  CHECK(pooled(taken.second));
  // Refused before any child was made: nothing waits on the FIFO holding this run's lock.
  CHECK(run.err.find("could not refill the pool") != std::string::npos);
  CHECK(run.err.find("cannot open its log") != std::string::npos);
  CHECK(env.claims().empty());
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("the pools' folder is private, and a refill log past its bound starts over") {
  PoolCli env;
  CliResult r = env.run({"pool", "fill", "--size", "1"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const fs::path dir = env.state_dir() / "corral/pools";
  // Opened up behind corral's back: the next refill closes it again.
  REQUIRE(::chmod(dir.c_str(), 0755) == 0);
  const fs::path log = dir / "refill.log";
  {
    std::ofstream grown(log, std::ios::binary | std::ios::trunc);
    grown << std::string(2 << 20, 'x');  // past the 1 MiB bound
  }
  const auto taken = env.run_with_handle({"cat", "file.txt"});
  INFO(taken.first.err);
  CHECK(taken.first.exit_code == 0);
  CHECK(pooled(taken.second));
  CHECK(env.pool_settles_at(1));
  struct stat st {};
  REQUIRE(::stat(dir.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  REQUIRE(::stat(log.c_str(), &st) == 0);
  // What this refill wrote, not the 2 MiB before it.
  CHECK(st.st_size < (1 << 20));
  REQUIRE(env.run({"pool", "drain"}).exit_code == 0);
}

TEST_CASE("run --id naming a pooled lease is refused; the pool keeps it ready") {
  PoolCli env;
  REQUIRE(env.run({"pool", "fill", "--size", "1"}).exit_code == 0);
  const std::vector<fs::path> claims = env.claims();
  REQUIRE(claims.size() == 1);
  const std::string slug = corral::json::get_string(parse(read_file(claims[0])), "slug");
  CliResult r = env.run({"run", "--id", slug, "--", "sh", "-c", "echo used > file.txt"});
  INFO(r.err);
  CHECK(r.exit_code == 64);
  CHECK(r.err.find("waits in a warm pool") != std::string::npos);
  CHECK(r.err.find("drop --id") != std::string::npos);
  CHECK(env.ready() == 1);
  // Untouched: a run from the pool still sees the workspace as it was filled.
  const auto taken = env.run_with_handle({"cat", "file.txt"});
  CHECK(taken.first.out == "v1\n");
  CHECK(pooled(taken.second));
  CHECK(env.pool_settles_at(1));
  REQUIRE(env.run({"pool", "drain"}).exit_code == 0);
}

TEST_CASE("a provider option set by the environment or the config names another pool, not the one filled without it") {
  PoolCli env;
  REQUIRE(env.run({"pool", "fill", "--size", "1"}).exit_code == 0);
  const std::set<std::string> filled = env.pooled_sandboxes();
  // The pooled sandbox was made with /workspace; a run that asks for /work by its
  // environment must not be handed it.
  env.env["CORRAL_LOCAL_WORKDIR"] = "/work";
  auto other = env.run_with_handle({"pwd"}, "env.json");
  INFO(other.first.err);
  CHECK(other.first.exit_code == 0);
  CHECK(other.first.out == "/work\n");
  CHECK_FALSE(pooled(other.second));
  env.env.erase("CORRAL_LOCAL_WORKDIR");
  // The same through the user's config.
  env.root().write("config/corral/config.yaml", "local:\n  workdir: /w\n");
  other = env.run_with_handle({"pwd"}, "config.json");
  CHECK(other.first.exit_code == 0);
  CHECK(other.first.out == "/w\n");
  CHECK_FALSE(pooled(other.second));
  CHECK(env.pooled_sandboxes() == filled);
  fs::remove(env.config_dir() / "corral/config.yaml");
  const auto taken = env.run_with_handle({"pwd"}, "pooled.json");
  CHECK(taken.first.out == "/workspace\n");
  CHECK(pooled(taken.second));
  CHECK(env.pool_settles_at(1));
  REQUIRE(env.run({"pool", "drain"}).exit_code == 0);
}

TEST_CASE("a pool filled for one account is never taken, nor forgotten, by a run or a stop under another") {
  PoolCli env;
  const fs::path boxes = env.root().path() / "boxes";
  fs::create_directories(boxes);
  env.add_registry("boxes", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so"});
  env.env["TESTBOX_DIR"] = boxes.string();
  // Which account testbox works for comes from a file, as a kubeconfig's current context
  // does: the options stay the same when it changes.
  const fs::path account = env.root().write("account", "alice\n");
  env.env["TESTBOX_ACCOUNT_FILE"] = account.string();
  REQUIRE(env.run({"pool", "fill", "--provider", "testbox", "--size", "1"}).exit_code == 0);
  const std::set<std::string> alices = env.pooled_sandboxes();
  REQUIRE(alices.size() == 1);
  const std::string kept_file = (env.root().path() / "kept.json").string();
  CliResult r =
      env.run({"run", "--provider", "testbox", "--no-pool", "--keep", "--lease-output", kept_file, "--", "true"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::string alices_kept = corral::json::get_string(parse(read_file(kept_file)), "slug");

  env.root().write("account", "bob\n");
  // Alice's kept lease, used as bob: not called gone (bob cannot see it), nor forgotten.
  r = env.run({"run", "--provider", "testbox", "--id", alices_kept, "--", "true"});
  CHECK(r.exit_code == 78);
  CHECK_MESSAGE(r.err.find("other testbox settings") != std::string::npos, r.err);
  CHECK_MESSAGE(r.err.find("the lease is left as it is") != std::string::npos, r.err);
  CHECK_MESSAGE(r.err.find("no longer exists") == std::string::npos, r.err);
  const std::string file = (env.root().path() / "h.json").string();
  r = env.run({"run", "--provider", "testbox", "--no-pool", "--keep", "--lease-output", file, "--", "true"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  r = env.run({"run", "--provider", "testbox", "--lease-output", file, "--", "cat", "file.txt"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "v1\n");
  CHECK_FALSE(pooled(parse(read_file(file))));
  // Alice's pooled sandbox is still hers: claimed, ready, and never destroyed.
  CHECK(env.pooled_sandboxes() == alices);
  CHECK(fs::is_directory(boxes / "alice" / *alices.begin()));

  // Stopping everything as bob: bob's kept lease goes; alice's pooled one, which bob cannot
  // see, is kept, saying why, rather than forgotten.
  r = env.run({"stop", "--all"});
  CHECK(r.exit_code != 0);
  CHECK_MESSAGE(r.err.find("other testbox settings") != std::string::npos, r.err);
  CHECK(env.pooled_sandboxes() == alices);

  env.root().write("account", "alice\n");
  r = env.run({"run", "--provider", "testbox", "--lease-output", file, "--", "cat", "file.txt"});
  CHECK(r.exit_code == 0);
  CHECK(pooled(parse(read_file(file))));
  CHECK(alices.count(corral::json::get_string(parse(read_file(file)), "sandboxId")) == 1);
  // Back with alice, her kept lease is there to use and stop.
  r = env.run({"run", "--provider", "testbox", "--id", alices_kept, "--", "true"});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(env.run({"stop", "--id", alices_kept}).exit_code == 0);
  CHECK(env.pool_settles_at(1));
  REQUIRE(env.run({"pool", "drain", "--provider", "testbox"}).exit_code == 0);
}

TEST_CASE("a pool filled with one secret key is not taken by a run with another") {
  PoolCli env;
  const fs::path boxes = env.root().path() / "boxes";
  fs::create_directories(boxes);
  env.add_registry("boxes", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so"});
  env.env["TESTBOX_DIR"] = boxes.string();
  env.env["TESTBOX_TOKEN"] = "key-of-team-a";
  REQUIRE(env.run({"pool", "fill", "--provider", "testbox", "--size", "1"}).exit_code == 0);
  const std::set<std::string> filled = env.pooled_sandboxes();
  env.env["TESTBOX_TOKEN"] = "key-of-team-b";
  const std::string file = (env.root().path() / "h.json").string();
  CliResult r = env.run({"run", "--provider", "testbox", "--lease-output", file, "--", "true"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK_FALSE(pooled(parse(read_file(file))));
  CHECK(env.pooled_sandboxes() == filled);
  // Neither the key nor a digest of it is written where the pool is named.
  for (const fs::path& claim : env.claims()) {
    CHECK(read_file(claim).find("key-of-team-a") == std::string::npos);
    CHECK(read_file(claim).find("key-of-team-b") == std::string::npos);
  }
  env.env["TESTBOX_TOKEN"] = "key-of-team-a";
  REQUIRE(env.run({"pool", "drain", "--provider", "testbox"}).exit_code == 0);
}

TEST_CASE("fork, pause, resume and --shards --from refuse a pooled lease by name, as run --id does") {
  PoolCli env;
  REQUIRE(env.run({"pool", "fill", "--size", "1"}).exit_code == 0);
  const std::vector<fs::path> claims = env.claims();
  REQUIRE(claims.size() == 1);
  const std::string slug = corral::json::get_string(parse(read_file(claims[0])), "slug");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"fork", "--id", slug}, {"pause", "--id", slug}, {"resume", "--id", slug},
        {"run", "--shards", "2", "--from", slug, "--", "true"}}) {
    CliResult r = env.run(args);
    INFO(args[0], ": ", r.err);
    CHECK(r.exit_code == 64);
    CHECK(r.err.find("waits in a warm pool") != std::string::npos);
  }
  // Nothing was made of it, and it waits as it did.
  CHECK(env.claims().size() == 1);
  CHECK(env.ready() == 1);
  // status and stop may name it.
  CHECK(env.run({"status", "--id", slug}).exit_code == 0);
  CHECK(env.run({"stop", "--id", slug}).exit_code == 0);
  CHECK(env.claims().empty());
}

TEST_CASE("a link planted at a pool's lock file, or the pools' folder planted as one, is refused (78), never followed") {
  PoolCli env;
  REQUIRE(env.run({"pool", "fill", "--size", "1"}).exit_code == 0);
  const fs::path pools = env.state_dir() / "corral" / "pools";
  fs::path lock;
  for (const auto& e : fs::directory_iterator(pools))
    if (e.path().extension() == ".lock") lock = e.path();
  REQUIRE(!lock.empty());
  REQUIRE(env.run({"pool", "drain"}).exit_code == 0);
  const fs::path target = env.root().path() / "target";
  env.root().write("target", "untouched");
  fs::remove(lock);
  fs::create_symlink(target, lock);
  CliResult r = env.run({"pool", "fill", "--size", "1"});
  CHECK(r.exit_code == 78);
  CHECK_MESSAGE(r.err.find("the lock file " + lock.string() + " of pool") != std::string::npos, r.err);
  CHECK_MESSAGE(r.err.find("is a symbolic link") != std::string::npos, r.err);
  CHECK(read_file(target) == "untouched");
  fs::remove(lock);
  fs::remove_all(pools);
  const fs::path elsewhere = env.root().path() / "elsewhere";
  fs::create_directories(elsewhere);
  fs::create_directory_symlink(elsewhere, pools);
  r = env.run({"pool", "fill", "--size", "1"});
  CHECK(r.exit_code == 78);
  CHECK_MESSAGE(r.err.find("is a symbolic link") != std::string::npos, r.err);
  CHECK(fs::is_empty(elsewhere));
  CHECK(env.claims().empty());
}
