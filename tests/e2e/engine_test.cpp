// The run contract on every failure path, through the real loader and ABI, with the
// testbox provider failing on demand.
#include <doctest/doctest.h>

#include <signal.h>

#include <chrono>
#include <thread>

#include "cli.hpp"
#include "corral/json.hpp"
#include "corral/os/process.hpp"
#include "small_disk.hpp"

namespace fs = std::filesystem;
using corral::test::CliEnv;
using corral::test::read_file;

namespace {

const std::string kSecret = "tb-secret-value-987654";

struct Testbox : CliEnv {
  fs::path boxes = root().path() / "boxes";
  fs::path h = root().path() / "handle.json";
  Testbox() {
    fs::create_directories(boxes);
    add_registry("testbox", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so"});
    env["TESTBOX_DIR"] = boxes.string();
    env["TESTBOX_TOKEN"] = kSecret;
    root().write("work/file.txt", "synced");
  }
  size_t live() const {
    size_t n = 0;
    for (auto& e : fs::directory_iterator(boxes)) n += e.is_directory() ? 1 : 0;
    return n;
  }
  corral::json::Document handle() const { return corral::json::parse(read_file(h), "handle"); }
  corral::test::CliResult run_tb(std::vector<std::string> args) const {
    args.insert(args.begin(), {"run", "--provider", "testbox", "--lease-output", h.string()});
    return run(args);
  }
};

}  // namespace

TEST_CASE("a plain run creates, syncs, runs and destroys") {
  Testbox tb;
  auto r = tb.run_tb({"--", "cat", "file.txt"});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out == "synced");
  CHECK(tb.live() == 0);
  CHECK(tb.claims().empty());
  auto h = tb.handle();
  CHECK(h["provider"].GetString() == std::string("testbox"));
  CHECK(h["timingsMs"].HasMember("exec"));
}

TEST_CASE("a failure after acquisition still returns the handle and removes the sandbox") {
  for (const char* step : {"upload", "exec"}) {
    CAPTURE(step);
    Testbox tb;
    tb.env["TESTBOX_FAIL"] = step;
    auto r = tb.run_tb({"--", "true"});
    CHECK(r.exit_code == 69);
    CHECK(r.err.find(std::string("testbox ") + step + " failed") != std::string::npos);
    auto h = tb.handle();
    CHECK_FALSE(h["kept"].GetBool());
    CHECK(h["error"]["code"].GetString() == std::string("unavailable"));
    CHECK(tb.live() == 0);
    CHECK(tb.claims().empty());
  }
}

TEST_CASE("keep-on-failure keeps a sandbox whose sync failed") {
  Testbox tb;
  tb.env["TESTBOX_FAIL"] = "upload";
  auto r = tb.run_tb({"--keep-on-failure", "--", "true"});
  CHECK(r.exit_code == 69);
  CHECK(tb.handle()["kept"].GetBool());
  CHECK(tb.live() == 1);
  CHECK(tb.claims().size() == 1);
}

TEST_CASE("secrets never appear in errors, output or the handle") {
  Testbox tb;
  tb.env["TESTBOX_FAIL"] = "exec";
  auto r = tb.run_tb({"--", "true"});
  CHECK(r.err.find(kSecret) == std::string::npos);
  CHECK(r.err.find("token ***") != std::string::npos);
  CHECK(read_file(tb.h).find(kSecret) == std::string::npos);
  auto fwd = tb.run_tb({"--env", "TESTBOX_TOKEN", "--", "true"});
  CHECK(fwd.exit_code == 64);
  CHECK(fwd.err.find("refusing to forward TESTBOX_TOKEN") != std::string::npos);
  CHECK(tb.live() == 0);
}

TEST_CASE("no provider's secret is forwarded, whichever provider runs") {
  Testbox tb;
  auto r = tb.run({"run", "--provider", "local", "--env", "TESTBOX_TOKEN", "--", "true"});
  CHECK(r.exit_code == 64);
  CHECK(r.err.find("provider 'testbox''s secret") != std::string::npos);
  auto flag = tb.run_tb({"--testbox-token", kSecret, "--", "true"});
  CHECK(flag.exit_code == 64);
  CHECK(flag.err.find("export TESTBOX_TOKEN") != std::string::npos);
  CHECK(flag.err.find(kSecret) == std::string::npos);
}

TEST_CASE("a repository config may not forward environment variables") {
  Testbox tb;
  tb.root().write("work/corral.yaml", "env: [TESTBOX_TOKEN]\n");
  auto r = tb.run_tb({"--", "true"});
  CHECK(r.exit_code == 78);
  CHECK(r.err.find("'env' is not allowed in a repository's config") != std::string::npos);
  CHECK(tb.live() == 0);
}

TEST_CASE("a failed create leaves no claim and no handle") {
  Testbox tb;
  tb.env["TESTBOX_FAIL"] = "create";
  auto r = tb.run_tb({"--", "true"});
  CHECK(r.exit_code == 69);
  CHECK_FALSE(fs::exists(tb.h));
  CHECK(tb.claims().empty());
  CHECK(fs::is_empty(tb.state_dir() / "corral" / "leases"));  // no stray lock file either
}

TEST_CASE("when the claim cannot be written the new sandbox is destroyed") {
  Testbox tb;
  // A first run makes the state folder's host id, which the failing run then only reads.
  REQUIRE(tb.run_tb({"--", "true"}).exit_code == 0);
  // No file may grow (the empty lock file can still be made), so the claim write fails.
  corral::os::ProcessSpec spec;
  spec.argv = {"sh", "-c", "trap '' XFSZ; ulimit -f 0; exec \"$0\" \"$@\"", corral::test::corral_binary(), "run",
               "--provider", "testbox", "--keep", "--", "true"};
  spec.env = tb.environment();
  spec.cwd = tb.workspace().string();
  auto p = corral::os::capture_process(spec, 60);
  corral::test::CliResult r{p.exit_code, p.out, p.err};
  CHECK(r.exit_code == 75);  // the file size limit is full, like a disk: quota, not a bug
  CHECK(r.err.find("cannot write lease claim") != std::string::npos);
  CHECK(r.err.find("File too large") != std::string::npos);
  CHECK(tb.live() == 0);
}

namespace {

// Whether `dir` holds no file (true when it does not exist).
bool holds_nothing(const fs::path& dir) {
  std::error_code ec;
  return !fs::exists(dir, ec) || fs::is_empty(dir, ec);
}

}  // namespace

TEST_CASE("a full disk under the state folder is a quota error at every write, and leaks nothing") {
  Testbox tb;
  const fs::path state = tb.state_dir() / "corral";
  corral::test::SmallDisk disk(state, 1u << 20);
  if (disk.skipped("the state folder")) return;
  const fs::path filler = state / "filler";
  // A first run makes the host id and the folders, so each case meets the full disk where it means to.
  REQUIRE(tb.run_tb({"--", "true"}).exit_code == 0);
  std::string words;  // what the error must say
  // A run that may keep its sandbox: only such a run records what it synced (a sandbox
  // made for one run is released at its end, and nothing reads the records).
  std::vector<std::string> keep;
  SUBCASE("the host id") {
    fs::remove(state / "host-id");
    disk.fill(filler.filename().string());
    words = "cannot create " + (state / "host-id").string();
  }
  SUBCASE("the claim, once the sandbox exists") {
    tb.env["TESTBOX_FILL"] = "create:" + filler.string();
    words = "cannot write lease claim";
  }
  SUBCASE("the workspace archive in tmp/, packed in one stream") {
    tb.root().write("work/big.bin", corral::test::random_bytes(2u << 20));
    words = "cannot write workspace archive";
  }
  SUBCASE("the workspace archive in tmp/, compressed on several threads") {
    tb.root().write("work/big.bin", corral::test::random_bytes(6u << 20));
    words = "cannot write workspace archive";
  }
  SUBCASE("the synced-files list") {
    tb.env["TESTBOX_FILL"] = "upload:" + filler.string();
    words = "cannot write synced file list";
    keep = {"--keep-on-failure"};
  }
  SUBCASE("the claim rewritten after the sync") {
    // No files: the synced-files list is empty, so still fits; the claim does not.
    fs::remove(tb.workspace() / "file.txt");
    tb.env["TESTBOX_FILL"] = "upload:" + filler.string();
    words = "cannot write lease claim";
    keep = {"--keep-on-failure"};
  }
  std::vector<std::string> args = keep;
  for (std::string a : {"--", "sh", "-c"}) args.push_back(a);
  args.push_back("echo ran >> " + (tb.root().path() / "ran").string());
  auto r = tb.run_tb(args);
  CHECK(r.exit_code == 75);
  CHECK_MESSAGE(r.err.find(words) != std::string::npos, r.err);
  CHECK(r.err.find("No space left on device") != std::string::npos);
  CHECK(r.err.find("the disk is not full") != std::string::npos);
  CHECK_FALSE(fs::exists(tb.root().path() / "ran"));  // the command never ran
  if (keep.empty()) {
    CHECK(tb.live() == 0);
    CHECK(tb.claims().empty());
  } else {
    // Kept, as --keep-on-failure asks, and claimed: `stop --all` below removes it.
    CHECK(tb.live() == 1);
    CHECK(tb.claims().size() == 1);
  }
  CHECK(holds_nothing(state / "tmp"));

  // With room again, the next corral finds nothing to clean and runs.
  tb.env.erase("TESTBOX_FILL");
  fs::remove(filler);
  fs::remove(tb.workspace() / "big.bin");
  CHECK(tb.run({"stop", "--orphans", "--provider", "testbox"}).exit_code == 0);
  if (!keep.empty()) CHECK(tb.run({"stop", "--all"}).exit_code == 0);
  CHECK(tb.run_tb({"--", "true"}).exit_code == 0);
  CHECK(tb.live() == 0);
  CHECK(tb.claims().empty());
}

TEST_CASE("a full disk when --keep is recorded keeps the sandbox and says how it is listed") {
  Testbox tb;
  const fs::path state = tb.state_dir() / "corral";
  corral::test::SmallDisk disk(state, 1u << 20);
  if (disk.skipped("the state folder")) return;
  tb.env["TESTBOX_FILL"] = "exec:" + (state / "filler").string();
  auto r = tb.run_tb({"--keep", "--", "sh", "-c", "echo ran >> " + (tb.root().path() / "ran").string()});
  CHECK(r.exit_code == 0);  // the command's: it ran, once
  CHECK(read_file(tb.root().path() / "ran") == "ran\n");
  CHECK_MESSAGE(r.err.find("is kept, but its claim could not record it") != std::string::npos, r.err);
  CHECK(r.err.find("No space left on device") != std::string::npos);
  CHECK(r.err.find("`corral stop --orphans` would remove it") != std::string::npos);
  CHECK(tb.handle()["kept"].GetBool());
  CHECK(tb.live() == 1);
  const std::string lease = tb.handle()["leaseId"].GetString();
  auto listed = tb.run({"list", "--json"});
  REQUIRE(listed.exit_code == 0);
  auto doc = corral::json::parse(listed.out, "list");
  REQUIRE(doc.GetArray().Size() == 1);
  CHECK(corral::json::get_string(doc[0], "state") == std::string("abandoned"));

  tb.env.erase("TESTBOX_FILL");
  fs::remove(state / "filler");
  CHECK(tb.run({"stop", "--id", lease}).exit_code == 0);
  CHECK(tb.live() == 0);
  CHECK(tb.claims().empty());
}

TEST_CASE("a session handle that meets a full disk fails the run as quota, and nothing is left") {
  Testbox tb;
  const fs::path out = tb.root().path() / "out";
  corral::test::SmallDisk disk(out, 64u << 10);
  if (disk.skipped("the handle")) return;
  disk.fill();
  auto r = tb.run({"run", "--provider", "testbox", "--lease-output", (out / "handle.json").string(), "--", "sh", "-c",
                   "echo ran >> " + (tb.root().path() / "ran").string()});
  CHECK(r.exit_code == 75);
  CHECK_MESSAGE(r.err.find("cannot write session handle") != std::string::npos, r.err);
  CHECK(r.err.find("No space left on device") != std::string::npos);
  CHECK(read_file(tb.root().path() / "ran") == "ran\n");  // once
  CHECK_FALSE(fs::exists(out / "handle.json"));
  CHECK(tb.live() == 0);
  CHECK(tb.claims().empty());
}

TEST_CASE("a sandbox that cannot be destroyed is reported with its cleanup command") {
  Testbox tb;
  tb.env["TESTBOX_FAIL"] = "destroy";
  auto r = tb.run_tb({"--", "true"});
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("could not stop sandbox") != std::string::npos);
  CHECK(r.err.find("corral stop --provider testbox --id") != std::string::npos);
  CHECK(tb.handle()["kept"].GetBool());
  CHECK(tb.claims().size() == 1);  // still tracked, so `corral stop` can finish the job
  tb.env.erase("TESTBOX_FAIL");
  CHECK(tb.run({"stop", "--all"}).exit_code == 0);
  CHECK(tb.live() == 0);
}

TEST_CASE("a sandbox whose destroy failed is listed as abandoned, and stop --orphans finishes the job") {
  Testbox tb;
  tb.env["TESTBOX_FAIL"] = "destroy";
  auto r = tb.run_tb({"--", "true"});
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("(or `corral stop --orphans`)") != std::string::npos);
  CHECK(tb.handle()["kept"].GetBool());  // for the caller: the sandbox still exists
  const std::string lease = tb.handle()["leaseId"].GetString();
  // Not kept by the user, and no corral holds it: the orphan sweep's, not the user's, to stop.
  auto listed = tb.run({"list", "--json"});
  REQUIRE(listed.exit_code == 0);
  auto doc = corral::json::parse(listed.out, "list");
  REQUIRE(doc.GetArray().Size() == 1);
  CHECK(corral::json::get_string(doc[0], "leaseId") == lease);
  CHECK(corral::json::get_string(doc[0], "state") == std::string("abandoned"));
  CHECK(tb.run({"list"}).err.find("could not stop their sandbox") != std::string::npos);
  CHECK(tb.live() == 1);

  auto still_failing = tb.run({"stop", "--orphans"});
  CHECK(still_failing.exit_code == 69);
  CHECK(tb.claims().size() == 1);  // a failed stop forgets nothing
  tb.env.erase("TESTBOX_FAIL");
  auto stop = tb.run({"stop", "--orphans"});
  INFO(stop.err);
  CHECK(stop.exit_code == 0);
  CHECK(stop.err.find("abandoned lease") != std::string::npos);
  CHECK(tb.live() == 0);
  CHECK(tb.claims().empty());
}

TEST_CASE("reusing a lease whose sandbox is gone says so and how to recover") {
  Testbox tb;
  REQUIRE(tb.run_tb({"--keep", "--", "true"}).exit_code == 0);
  std::string lease = tb.handle()["leaseId"].GetString();
  fs::remove_all(tb.boxes / ("tb-" + lease));
  auto r = tb.run({"run", "--id", lease, "--", "true"});
  CHECK(r.exit_code == 66);
  CHECK(r.err.find("no longer exists") != std::string::npos);
  CHECK(r.err.find("corral stop --provider testbox --id " + lease) != std::string::npos);
  CHECK(tb.run({"stop", "--id", lease}).exit_code == 0);  // forgetting a gone sandbox works
  CHECK(tb.claims().empty());
}

TEST_CASE("--id finds the lease's provider, and a contradicting --provider is refused") {
  Testbox tb;
  REQUIRE(tb.run_tb({"--keep", "--", "true"}).exit_code == 0);
  std::string slug = tb.handle()["slug"].GetString();
  auto r = tb.run({"run", "--id", slug, "--", "cat", "file.txt"});
  CHECK(r.out == "synced");
  auto wrong = tb.run({"run", "--provider", "local", "--id", slug, "--", "true"});
  CHECK(wrong.exit_code == 64);
  CHECK(wrong.err.find("belongs to provider 'testbox'") != std::string::npos);
}

TEST_CASE("two runs on one lease take turns instead of racing") {
  Testbox tb;
  REQUIRE(tb.run_tb({"--keep", "--", "true"}).exit_code == 0);
  std::string lease = tb.handle()["leaseId"].GetString();
  auto a = tb.start({"run", "--id", lease, "--", "sh", "-c", "echo a >> log; sleep 1; echo a >> log"});
  auto b = tb.start({"run", "--id", lease, "--", "sh", "-c", "echo b >> log; sleep 1; echo b >> log"});
  CHECK(a.wait() == 0);
  CHECK(b.wait() == 0);
  std::string log = read_file(tb.boxes / ("tb-" + lease) / "workspace" / "log");
  CHECK((log == "a\na\nb\nb\n" || log == "b\nb\na\na\n"));
}

TEST_CASE("url, extend and cleanup of orphans work for a provider that has them") {
  Testbox tb;
  REQUIRE(tb.run_tb({"--keep", "--", "true"}).exit_code == 0);
  std::string lease = tb.handle()["leaseId"].GetString();
  auto url = tb.run({"url", "--id", lease, "--port", "3000"});
  CHECK(url.out == "https://3000-tb-" + lease + ".testbox.invalid\n");
  CHECK(tb.run({"extend", "--id", lease, "--by", "2h"}).exit_code == 0);
  CHECK(read_file(tb.boxes / ("tb-" + lease) / "seconds") == "7200");
  // An orphan: a corral sandbox at the provider that no claim here knows.
  fs::create_directories(tb.boxes / "tb-orphan0001" / "workspace");
  auto remote = tb.run({"list", "--remote", "--provider", "testbox"});
  CHECK(remote.out.find("tb-orphan0001") != std::string::npos);
  CHECK(remote.out.find("orphan\n") != std::string::npos);
  CHECK(remote.out.find("claimed here") != std::string::npos);
  CHECK(tb.run({"stop", "--orphans", "--provider", "testbox"}).exit_code == 0);
  CHECK_FALSE(fs::exists(tb.boxes / "tb-orphan0001"));
  CHECK(fs::exists(tb.boxes / ("tb-" + lease)));
}

TEST_CASE("provider option flags are validated, aliases work and foreign flags are refused") {
  Testbox tb;
  auto bad_type = tb.run_tb({"--testbox-size", "two", "--", "true"});
  CHECK(bad_type.exit_code == 64);
  CHECK(bad_type.err.find("flag --testbox-size") != std::string::npos);
  auto typo = tb.run_tb({"--testbox-sise", "2", "--", "true"});
  CHECK(typo.exit_code == 64);
  CHECK(typo.err.find("--testbox-size") != std::string::npos);
  CHECK(tb.run_tb({"--tb-size=3", "--", "true"}).exit_code == 0);
  auto foreign = tb.run_tb({"--local-network", "none", "--", "true"});
  CHECK(foreign.exit_code == 64);
  CHECK(foreign.err.find("option of provider 'local'") != std::string::npos);
  CHECK(tb.live() == 0);
}

TEST_CASE("a reused lease whose sandbox is gone still gets a session handle") {
  Testbox tb;
  REQUIRE(tb.run_tb({"--keep", "--", "true"}).exit_code == 0);
  std::string lease = tb.handle()["leaseId"].GetString();
  fs::remove(tb.h);
  fs::remove_all(tb.boxes / ("tb-" + lease));
  auto r = tb.run({"run", "--id", lease, "--lease-output", tb.h.string(), "--", "true"});
  CHECK(r.exit_code == 66);
  auto h = tb.handle();
  CHECK(h["leaseId"].GetString() == lease);
  CHECK(h["reused"].GetBool());
  CHECK(h["error"]["code"].GetString() == std::string("not-found"));
}

TEST_CASE("Ctrl-C while waiting for a busy lease gives up at once") {
  Testbox tb;
  REQUIRE(tb.run_tb({"--keep", "--", "true"}).exit_code == 0);
  std::string lease = tb.handle()["leaseId"].GetString();
  auto busy = tb.start({"run", "--id", lease, "--", "sh", "-c", "echo busy; sleep 8"});
  for (int i = 0; i < 200 && read_file(busy.out).empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto waiting = tb.start({"run", "--id", lease, "--", "true"});
  for (int i = 0; i < 200 && read_file(waiting.err).find("waiting for lease") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(read_file(waiting.err).find("waiting for lease") != std::string::npos);
  auto t0 = std::chrono::steady_clock::now();
  ::kill(waiting.pid, SIGINT);
  CHECK(waiting.wait() == 130);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(4));
  CHECK(busy.wait() == 0);
  CHECK(tb.live() == 1);  // the lease being used by someone else is untouched
}

TEST_CASE("a mounted lease is refused from another working tree, and keeps its details on reuse") {
  Testbox tb;
  tb.add_registry("mountbox", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-mountbox.so"});
  REQUIRE(tb.run({"run", "--provider", "mountbox", "--keep", "--lease-output", tb.h.string(), "--", "true"}).exit_code == 0);
  std::string lease = tb.handle()["leaseId"].GetString();
  // Reused from the same tree: runs in the mounted folder, here the user's own.
  auto same = tb.run({"run", "--id", lease, "--", "cat", "file.txt"});
  CHECK(same.exit_code == 0);
  CHECK(same.out == "synced");
  fs::path other = tb.root().path() / "other";
  tb.root().write("other/file.txt", "other tree");
  auto elsewhere = tb.run({"run", "--id", lease, "--", "cat", "file.txt"}, other.string());
  CHECK(elsewhere.exit_code == 64);
  CHECK(elsewhere.out.empty());
  CHECK(elsewhere.err.find("mounts " + tb.workspace().string()) != std::string::npos);
  // The claim's details survive a get() that reports fewer of them.
  auto status = tb.run({"status", "--id", lease, "--json"});
  CHECK(status.out.find("\"dir\"") != std::string::npos);
}

TEST_CASE("cleanup after Ctrl-C is not itself cancelled") {
  Testbox tb;
  auto bg = tb.start({"run", "--provider", "testbox", "--", "sh", "-c", "echo started; sleep 60"});
  for (int i = 0; i < 200 && read_file(bg.out).find("started") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ::kill(bg.pid, SIGINT);
  CHECK(bg.wait() == 130);
  CHECK(read_file(bg.err).find("destroy was told to stop") == std::string::npos);
  CHECK(tb.live() == 0);
  CHECK(tb.claims().empty());
}

TEST_CASE("warmup writes its handle as a run does: once the sandbox exists, with timings at the end, the error on failure") {
  Testbox tb;
  auto warm = tb.run({"warmup", "--provider", "testbox", "--lease-output", tb.h.string()});
  REQUIRE_MESSAGE(warm.exit_code == 0, warm.err);
  auto done = tb.handle();
  CHECK(done["kept"].GetBool());
  REQUIRE(done.HasMember("timingsMs"));
  CHECK(done["timingsMs"].HasMember("acquire"));
  CHECK(done["timingsMs"].HasMember("sync"));
  CHECK(tb.run({"stop", "--all"}).exit_code == 0);

  // Killed while it syncs: the handle written when the sandbox came to be names it.
  tb.env["TESTBOX_CRASH"] = "upload:hang";
  fs::remove(tb.h);
  corral::test::Background b = tb.start({"warmup", "--provider", "testbox", "--lease-output", tb.h.string()});
  REQUIRE(corral::test::eventually([&] { return fs::exists(tb.h) && read_file(tb.h).find("leaseId") != std::string::npos; }));
  ::kill(b.pid, SIGKILL);
  b.wait();
  auto early = tb.handle();
  CHECK_FALSE(early["kept"].GetBool());
  const std::string lease = early["leaseId"].GetString();
  CHECK(tb.live() == 1);
  CHECK(tb.run({"stop", "--id", lease}).exit_code == 0);
  CHECK(tb.live() == 0);

  // A failed sync: the sandbox is stopped and the final handle carries the error.
  tb.env.erase("TESTBOX_CRASH");
  tb.env["TESTBOX_FAIL"] = "upload";
  fs::remove(tb.h);
  auto failed = tb.run({"warmup", "--provider", "testbox", "--lease-output", tb.h.string()});
  CHECK(failed.exit_code != 0);
  auto last = tb.handle();
  CHECK_FALSE(last["kept"].GetBool());
  REQUIRE(last.HasMember("error"));
  CHECK(std::string(last["error"]["message"].GetString()).find("upload") != std::string::npos);
  CHECK(tb.live() == 0);
  CHECK(tb.claims().empty());
}
