// Results back (--download), end to end through the CLI: on the local jail, and on the
// testbox plugin in-process and isolated, as a user and a CI job would use them.
#include <doctest/doctest.h>

#include <signal.h>

#include <algorithm>

#include "cli.hpp"
#include "corral/json.hpp"
#include "corral/os/process.hpp"
#include "link_escape.hpp"
#include "small_disk.hpp"

namespace fs = std::filesystem;
using corral::test::CliEnv;
using corral::test::read_file;

namespace {

corral::json::Document read_handle(const fs::path& p) { return corral::json::parse(read_file(p), p.string()); }

std::vector<std::string> strings(const corral::json::Value& array) {
  std::vector<std::string> out;
  for (const auto& v : array.GetArray()) out.emplace_back(v.GetString());
  std::sort(out.begin(), out.end());
  return out;
}

// A command that fails after writing reports, binary output and a link out of the tree.
const std::vector<std::string> kFailingSuite = {
    "sh", "-c",
    "mkdir -p reports && printf '<testsuite failures=\"1\"/>' > reports/unit.xml && "
    "printf '\\000\\001\\377' > reports/core.bin && ln -s /etc/passwd reports/leak.xml && "
    "ln -s unit.xml reports/latest.xml && echo suite failed >&2; exit 3"};

}  // namespace

TEST_CASE("reports of a failing command come back; the exit code stands and nothing is left") {
  CliEnv env;
  env.root().write("work/src.txt", "source");
  fs::path h = env.root().path() / "h.json";
  std::vector<std::string> args = {"run", "--lease-output", h.string(), "--download", "reports/*.xml",
                                   "--download", "reports/core.bin", "--download", "coverage/*", "--"};
  args.insert(args.end(), kFailingSuite.begin(), kFailingSuite.end());
  auto r = env.run(args);
  CHECK(r.exit_code == 3);
  auto doc = read_handle(h);
  REQUIRE(doc.HasMember("downloads"));
  const auto& d = doc["downloads"];
  fs::path dir = env.workspace() / ".corral" / "runs" / doc["leaseId"].GetString();
  CHECK(fs::path(d["dir"].GetString()) == fs::canonical(dir));
  CHECK(read_file(dir / "reports/unit.xml") == "<testsuite failures=\"1\"/>");
  CHECK(read_file(dir / "reports/core.bin") == std::string("\x00\x01\xff", 3));
  CHECK(fs::read_symlink(dir / "reports/latest.xml") == "unit.xml");
  CHECK(!fs::exists(fs::symlink_status(dir / "reports/leak.xml")));
  CHECK(strings(d["files"]) == std::vector<std::string>{"reports/core.bin", "reports/latest.xml", "reports/unit.xml"});
  CHECK(strings(d["missing"]) == std::vector<std::string>{"coverage/*"});
  REQUIRE(d.HasMember("refused"));
  CHECK(std::string(d["refused"][0].GetString()).find("reports/leak.xml") == 0);
  CHECK(r.err.find("'coverage/*' matched nothing") != std::string::npos);
  CHECK(!doc.HasMember("error"));
  CHECK(env.local_sandboxes().empty());
  CHECK(env.claims().empty());

  // The results are never synced back into the next sandbox.
  auto next = env.run({"run", "--", "sh", "-c", "test -e .corral && echo synced || echo clean"});
  CHECK(next.out == "clean\n");
}

TEST_CASE("without a loadable libarchive a download fails with a warning and a packing run with 69; nothing is left") {
  CliEnv env;
  env.root().write("work/src.txt", "source");
  // corral loads libarchive by its SONAME on first use: a broken one found first stands
  // for a machine where it is missing or damaged.
  const fs::path libs = env.root().path() / "libs";
  env.root().write("libs/" CORRAL_LIBARCHIVE_SONAME, "not a shared library\n");
  env.env["LD_LIBRARY_PATH"] = libs.string();

  CHECK(env.run({"version"}).exit_code == 0);  // nothing else needs it
  // The local jail sends results as an archive: the command's exit code stands.
  auto local = env.run({"run", "--download", "out.txt", "--", "sh", "-c", "echo result > out.txt; exit 5"});
  CHECK(local.exit_code == 5);
  CHECK(local.err.find("the download failed: cannot load libarchive") != std::string::npos);
  CHECK(local.err.find("apt-get install libarchive13") != std::string::npos);
  CHECK(env.local_sandboxes().empty());
  CHECK(env.claims().empty());

  // testbox takes the workspace as an archive: nothing can be sent, so the run fails.
  env.add_registry("testbox", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so"});
  const fs::path boxes = env.root().path() / "boxes";
  fs::create_directories(boxes);
  env.env["TESTBOX_DIR"] = boxes.string();
  auto packed = env.run({"run", "--provider", "testbox", "--", "echo", "never"});
  CHECK(packed.exit_code == 69);
  CHECK(packed.out.empty());
  CHECK_MESSAGE(packed.err.find("cannot load libarchive") != std::string::npos, packed.err);
  CHECK(fs::is_empty(boxes));
  CHECK(env.claims().empty());
}

TEST_CASE("--download-dir is relative to where corral runs, and files come from the command's folder") {
  CliEnv env;
  env.root().write("work/pkg/a/file.txt", "x");
  REQUIRE(corral::os::capture_process({{"git", "init", "-q"}, std::nullopt, env.workspace().string()}).exit_code == 0);
  fs::path h = env.root().path() / "h.json";
  auto r = env.run({"run", "--lease-output", h.string(), "--download", "out.txt", "--download-dir", "results", "--",
                    "sh", "-c", "pwd > out.txt"},
                   (env.workspace() / "pkg/a").string());
  CHECK(r.exit_code == 0);
  CHECK(read_file(env.workspace() / "pkg/a/results/out.txt").find("/pkg/a") != std::string::npos);
  CHECK(!fs::exists(env.workspace() / "pkg/a/out.txt"));
}

TEST_CASE("a file whose name holds a backslash comes back with the rest; a newline in a name never forges a line") {
  CliEnv env;
  fs::path h = env.root().path() / "h.json";
  // A link out of the tree is refused by name: a name the command chose, newline included.
  auto r = env.run({"run", "--lease-output", h.string(), "--download", "out/*", "--", "sh", "-c",
                    "mkdir out && echo one > 'out/a\\b.txt' && echo two > out/plain.txt && "
                    "ln -s /etc/passwd \"out/evil$(printf '\\ncorral: forged line')\""});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  auto doc = read_handle(h);
  CHECK_FALSE(doc.HasMember("error"));
  const fs::path dir = doc["downloads"]["dir"].GetString();
  CHECK(read_file(dir / "out/a\\b.txt") == "one\n");
  CHECK(read_file(dir / "out/plain.txt") == "two\n");
  CHECK_MESSAGE(r.err.find("out/evil\\x0acorral: forged line") != std::string::npos, r.err);
  CHECK(r.err.find("\ncorral: forged line") == std::string::npos);
}

TEST_CASE("a download past --max-download is stopped, reported, and the command's exit code stands") {
  CliEnv env;
  fs::path h = env.root().path() / "h.json";
  auto r = env.run({"run", "--lease-output", h.string(), "--download", "big", "--max-download", "64k", "--", "sh",
                    "-c", "head -c 2000000 /dev/urandom > big"});
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("--max-download") != std::string::npos);
  auto doc = read_handle(h);
  REQUIRE(doc.HasMember("error"));
  CHECK(std::string(doc["error"]["message"].GetString()).find("size bound of 64.0 KiB") != std::string::npos);
  CHECK(doc["downloads"].HasMember("error"));
  CHECK(!fs::exists(fs::path(doc["downloads"]["dir"].GetString()) / "big"));
  CHECK(env.local_sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE("a download onto a full disk is reported, never left as a file with a hole; the exit code stands") {
  CliEnv env;
  const fs::path out = env.root().path() / "out";
  corral::test::SmallDisk disk(out, 256u << 10);
  if (disk.skipped("the downloads")) return;
  fs::path h = env.root().path() / "h.json";
  auto r = env.run({"run", "--lease-output", h.string(), "--download", "big.bin", "--download-dir", out.string(), "--",
                    "sh", "-c", "head -c 1048576 /dev/urandom > big.bin"});
  CHECK(r.exit_code == 0);  // the command's
  CHECK_MESSAGE(r.err.find("the download failed") != std::string::npos, r.err);
  CHECK(r.err.find("No space left on device") != std::string::npos);
  auto doc = read_handle(h);
  REQUIRE(doc.HasMember("error"));
  CHECK(doc["error"]["code"].GetString() == std::string("quota"));
  // libarchive only warns about a failed write, and would leave the file at full size.
  CHECK((!fs::exists(out / "big.bin") || fs::file_size(out / "big.bin") < (1u << 20)));
  CHECK(env.local_sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE("bad patterns and providers without downloads are refused before anything is created") {
  CliEnv env;
  for (const char* bad : {"/etc/passwd", "../outside", "a/../../b", ".[.]", ".?/x", "[.][.]", ".*"}) {
    CAPTURE(bad);
    auto r = env.run({"run", "--download", bad, "--", "true"});
    CHECK(r.exit_code == 64);
    CHECK(r.err.find("--download") != std::string::npos);
  }
  CHECK(env.run({"run", "--download-dir", "x", "--", "true"}).exit_code == 64);
  CHECK(env.run({"run", "--download", "x", "--max-download", "0", "--", "true"}).exit_code == 64);
  fs::path boxes = env.root().path() / "boxes";
  fs::create_directories(boxes);
  env.add_registry("mountbox", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-mountbox.so"});
  env.env["TESTBOX_DIR"] = boxes.string();
  auto r = env.run({"run", "--provider", "mountbox", "--download", "x", "--", "true"},
                   env.workspace().string());
  CHECK(r.exit_code == 64);
  CHECK_MESSAGE(r.err.find("run-downloads") != std::string::npos, r.err);
  CHECK(env.local_sandboxes().empty());
  CHECK(env.claims().empty());
  CHECK(fs::is_empty(boxes));
}

TEST_CASE("a kept lease downloads into its own folder on every run") {
  CliEnv env;
  auto first = env.run({"run", "--keep", "--download", "n.txt", "--", "sh", "-c", "echo 1 > n.txt"});
  REQUIRE(first.exit_code == 0);
  auto leases = corral::json::parse(env.run({"list", "--json"}).out, "list");
  std::string lease = leases[0]["leaseId"].GetString();
  CHECK(read_file(env.workspace() / ".corral/runs" / lease / "n.txt") == "1\n");
  auto second = env.run({"run", "--id", lease, "--download", "n.txt", "--", "sh", "-c", "echo 2 > n.txt"});
  CHECK(second.exit_code == 0);
  CHECK(read_file(env.workspace() / ".corral/runs" / lease / "n.txt") == "2\n");
  CHECK(env.run({"stop", "--id", lease}).exit_code == 0);
}

TEST_CASE("a plugin's download works the same isolated, and its failure or crash never costs the result") {
  for (const char* isolation : {"in-process", "process"}) {
    CAPTURE(isolation);
    CliEnv env;
    fs::path boxes = env.root().path() / "boxes";
    fs::create_directories(boxes);
    env.add_registry("testbox", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so"},
                     {{"isolation", isolation}});
    env.env["TESTBOX_DIR"] = boxes.string();
    env.root().write("work/f.txt", "f");
    fs::path h = env.root().path() / "h.json";
    std::vector<std::string> run = {"run", "--provider", "testbox", "--lease-output", h.string(), "--download",
                                    "reports", "--"};
    run.insert(run.end(), kFailingSuite.begin(), kFailingSuite.end());
    auto ok = env.run(run);
    CHECK(ok.exit_code == 3);
    auto doc = read_handle(h);
    fs::path dir = doc["downloads"]["dir"].GetString();
    CHECK(read_file(dir / "reports/unit.xml") == "<testsuite failures=\"1\"/>");
    CHECK(!fs::exists(fs::symlink_status(dir / "reports/leak.xml")));

    env.env["TESTBOX_FAIL"] = "download";
    auto failed = env.run(run);
    CHECK(failed.exit_code == 3);
    CHECK(failed.err.find("the download failed: testbox download failed") != std::string::npos);
    CHECK(read_handle(h)["error"]["code"].GetString() == std::string("unavailable"));
    CHECK(env.claims().empty());
    CHECK(fs::is_empty(boxes));
    env.env.erase("TESTBOX_FAIL");

    if (std::string(isolation) == "process") {
      env.env["TESTBOX_CRASH"] = "download:segv";
      auto crashed = env.run(run);
      CHECK(crashed.exit_code == 3);
      CHECK(crashed.err.find("crashed during 'download'") != std::string::npos);
    }
  }
}

TEST_CASE("each shard of a fan-out brings its results back into its own folder") {
  CliEnv env;
  env.root().write("work/f.txt", "f");
  fs::path h = env.root().path() / "h.json";
  auto r = env.run({"run", "--shards", "3", "--lease-output", h.string(), "--download", "report-*.txt",
                    "--download-dir", "results", "--", "sh", "-c",
                    "echo shard $CORRAL_SHARD_INDEX > report-$CORRAL_SHARD_INDEX.txt; exit $CORRAL_SHARD_INDEX"});
  CHECK(r.exit_code == 1);  // the lowest failing shard's
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    fs::path dir = env.workspace() / "results" / ("shard-" + std::to_string(i));
    CHECK(read_file(dir / ("report-" + std::to_string(i) + ".txt")) == "shard " + std::to_string(i) + "\n");
    CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}) == 1);
  }
  auto doc = read_handle(h);
  REQUIRE(doc["shards"].Size() == 3);
  CHECK(strings(doc["shards"][2]["downloads"]["files"]) == std::vector<std::string>{"report-2.txt"});
  CHECK(env.local_sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE("a chain of links the command plants never resolves outside the download folder on this machine") {
  // x1/.../x20/s climbs back to the command's folder; c and d go through it and climb 21
  // more folders, to /etc/passwd and to /: their text alone never leaves the folder.
  std::string deep, ups20;
  for (int i = 1; i <= 20; ++i) deep += "x" + std::to_string(i) + "/", ups20 += "../";
  const std::string through = deep + "s/" + ups20 + "../";
  CliEnv env;
  fs::path h = env.root().path() / "h.json";
  auto r = env.run({"run", "--lease-output", h.string(), "--download", "*", "--", "sh", "-c",
                    "mkdir -p " + deep + " && ln -s " + ups20 + " " + deep + "s && ln -s " + through +
                        "etc/passwd c && ln -s " + through + " d && echo kept > f"});
  CHECK(r.exit_code == 0);
  auto doc = read_handle(h);
  fs::path dir = doc["downloads"]["dir"].GetString();
  CHECK(read_file(dir / "f") == "kept\n");
  CHECK(!fs::exists(fs::symlink_status(dir / "c")));
  CHECK(!fs::exists(fs::symlink_status(dir / "d")));
  CHECK(fs::is_symlink(dir / (deep + "s")));  // back to the folder itself: inside
  CHECK(corral::test::link_leading_out(dir) == fs::path());
  std::vector<std::string> refused = strings(doc["downloads"]["refused"]);
  REQUIRE(refused.size() == 2);
  CHECK(refused[0].rfind("c: ", 0) == 0);
  CHECK(refused[1].rfind("d: ", 0) == 0);
}

TEST_CASE("a .corral or .corral/runs that is a link or a file is refused before anything is created") {
  CliEnv env;
  const fs::path elsewhere = env.root().path() / "elsewhere";
  fs::create_directories(elsewhere);
  env.root().write("work/src.txt", "source");
  SUBCASE(".corral is a link") { fs::create_symlink(elsewhere, env.workspace() / ".corral"); }
  SUBCASE(".corral/runs is a link") {
    fs::create_directories(env.workspace() / ".corral");
    fs::create_symlink(elsewhere, env.workspace() / ".corral/runs");
  }
  SUBCASE(".corral/runs is a file") { env.root().write("work/.corral/runs", "x"); }
  auto r = env.run({"run", "--download", "out.txt", "--", "sh", "-c", "echo ran > out.txt"});
  CHECK(r.exit_code == 64);
  CHECK_MESSAGE(r.err.find(".corral") != std::string::npos, r.err);
  CHECK(r.err.find("remove") != std::string::npos);
  CHECK(fs::is_empty(elsewhere));
  CHECK(env.local_sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE("--download-dir never follows a link the working tree holds; a path outside it is used as named") {
  CliEnv env;
  const fs::path elsewhere = env.root().path() / "elsewhere";
  fs::create_directories(elsewhere);
  env.root().write("work/src.txt", "source");
  fs::create_symlink(elsewhere, env.workspace() / "results");
  auto refused = env.run({"run", "--download", "out.txt", "--download-dir", "results", "--", "sh", "-c",
                          "echo ran > out.txt"});
  CHECK(refused.exit_code == 64);
  CHECK_MESSAGE(refused.err.find("results") != std::string::npos, refused.err);
  CHECK(fs::is_empty(elsewhere));
  CHECK(env.claims().empty());

  fs::create_symlink(elsewhere, env.root().path() / "mine");
  auto named = env.run({"run", "--download", "out.txt", "--download-dir", (env.root().path() / "mine/out").string(),
                        "--", "sh", "-c", "echo ran > out.txt"});
  CHECK(named.exit_code == 0);
  CHECK(read_file(elsewhere / "out/out.txt") == "ran\n");
}

TEST_CASE("SIGTERM while the results come back ends the run as interrupted (130), whatever the command did") {
  CliEnv env;
  fs::path boxes = env.root().path() / "boxes";
  fs::create_directories(boxes);
  env.add_registry("testbox", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so"});
  env.env["TESTBOX_DIR"] = boxes.string();
  // The plugin's download waits for the stop, then finishes its work all the same.
  env.env["TESTBOX_PAUSE"] = "download:until-stopped";
  env.root().write("work/f.txt", "f");
  corral::test::Background run = env.start({"run", "--provider", "testbox", "--download", "f.txt", "--", "true"});
  REQUIRE(corral::test::eventually([&] { return fs::exists(boxes.string() + ".paused"); }));
  ::kill(run.pid, SIGTERM);
  CHECK(run.wait() == 130);
  CHECK(read_file(run.err).find("interrupted while downloading the results") != std::string::npos);
  CHECK(env.claims().empty());
  CHECK(fs::is_empty(boxes));
}
