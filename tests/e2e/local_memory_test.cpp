// A local run that is not kept: its workspace is a tmpfs of its own, bounded by
// --max-workspace, gone with the run; a kept one stays on disk, held to the same bound.
#include <doctest/doctest.h>
#include <signal.h>

#include <sstream>

#include "cli.hpp"
#include "corral/json.hpp"
#include "corral/os/process.hpp"

namespace fs = std::filesystem;
using corral::test::CliEnv;
using corral::test::read_file;

namespace {

// The file system type `stat -f -c %T` names for `path` on this host.
std::string fs_type_of(const fs::path& path) {
  auto r = corral::os::capture_process({{"stat", "-f", "-c", "%T", path.string()}}, 10);
  REQUIRE(r.exit_code == 0);
  return r.out;
}

// Every file below the local provider's sandbox folders.
std::vector<std::string> files_below(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (!it->is_directory()) out.push_back(it->path().lexically_relative(dir).string());
  return out;
}

}  // namespace

TEST_CASE("a run that is not kept works in a tmpfs of its own; the user's files are unchanged and nothing stays") {
  CliEnv env;
  env.root().write("work/a.txt", "one");
  env.root().write("work/sub/b.txt", "two");
  // The jail's own view: the workspace's mount (field 5 of mountinfo) and its type.
  auto r = env.run({"run", "--", "sh", "-c",
                    "stat -f -c %T .; awk '$5 == \"/workspace\" {print $(NF-2)}' /proc/self/mountinfo; "
                    "cat a.txt sub/b.txt; echo; echo changed > a.txt; rm sub/b.txt; echo new > c.txt"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out == "tmpfs\ntmpfs\nonetwo\n");
  CHECK(read_file(env.workspace() / "a.txt") == "one");
  CHECK(read_file(env.workspace() / "sub/b.txt") == "two");
  CHECK_FALSE(fs::exists(env.workspace() / "c.txt"));
  CHECK(env.local_sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE("a command writing more than --max-workspace into a tmpfs workspace gets ENOSPC, not the host's disk") {
  CliEnv env;
  env.root().write("work/a.txt", "one");
  auto r = env.run({"run", "--max-workspace", "1M", "--", "sh", "-c",
                    "head -c 4000000 /dev/zero > big || echo refused; stat -c %s big"});
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("No space left on device") != std::string::npos);
  std::istringstream lines(r.out);
  std::string refused, size;
  std::getline(lines, refused);
  std::getline(lines, size);
  CHECK(refused == "refused");
  // The bound is --max-workspace plus a block per synced file: nowhere near 4 MB.
  CHECK(std::stoul(size) <= 1024u * 1024u + 4096u);
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("--keep keeps the sandbox on disk, reusable by --id, as before") {
  CliEnv env;
  env.root().write("work/a.txt", "one");
  fs::path h = env.root().path() / "handle.json";
  auto r = env.run({"run", "--keep", "--lease-output", h.string(), "--", "sh", "-c",
                    "stat -f -c %T .; echo made > made.txt"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  fs::path local = env.state_dir() / "corral" / "local";
  CHECK(r.out == fs_type_of(local));  // the state folder's own file system, tmpfs or not
  REQUIRE(env.local_sandboxes().size() == 1);
  CHECK(read_file(env.local_sandboxes()[0] / "workspace/made.txt") == "made\n");
  std::string slug = corral::json::parse(read_file(h), "handle")["slug"].GetString();
  auto again = env.run({"run", "--id", slug, "--", "cat", "made.txt"});
  CHECK_MESSAGE(again.exit_code == 0, again.err);
  CHECK(again.out == "made\n");
  CHECK(env.run({"stop", "--id", slug}).exit_code == 0);
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("a kept sandbox on disk is held to its size limit: a command growing it past the limit is stopped and one that does not runs") {
  CliEnv env;
  env.root().write("work/a.txt", "one");
  fs::path h = env.root().path() / "handle.json";
  REQUIRE(env.run({"run", "--keep", "--max-workspace", "1M", "--lease-output", h.string(), "--", "true"}).exit_code == 0);
  const std::string slug = corral::json::parse(read_file(h), "handle")["slug"].GetString();

  // Measured while it runs: the command is stopped long before its sleep ends.
  auto grown = env.run({"run", "--id", slug, "--", "sh", "-c",
                        "head -c 4000000 /dev/zero > big; echo wrote; sleep 120; echo late"});
  CHECK(grown.exit_code == 75);
  CHECK(grown.out == "wrote\n");
  CHECK_MESSAGE(grown.err.find("its workspace held 3.8 MiB, past its limit of 1.0 MiB; the command was stopped") !=
                    std::string::npos,
                grown.err);
  CHECK(grown.err.find("--max-workspace") != std::string::npos);

  // Over its limit, it still runs what does not grow it, and a clean-up.
  auto looked = env.run({"run", "--id", slug, "--", "sh", "-c", "stat -c %s big"});
  CHECK_MESSAGE(looked.exit_code == 0, looked.err);
  CHECK(looked.out == "4000000\n");

  // $HOME is bounded too; a command too quick to be seen growing it fails at its end.
  auto home = env.run({"run", "--id", slug, "--", "sh", "-c", "rm big; head -c 3000000 /dev/zero > ~/cache.bin; echo quick"});
  CHECK(home.exit_code == 75);
  CHECK(home.out == "quick\n");
  CHECK_MESSAGE(home.err.find("its /tmp (and $HOME) held 2.9 MiB, past its limit of 1.0 MiB; the command ended with "
                              "exit code 0") != std::string::npos,
                home.err);

  auto within = env.run({"run", "--id", slug, "--", "sh", "-c",
                         "rm ~/cache.bin; head -c 500000 /dev/zero > fits; head -c 500000 /dev/zero > ~/fits"});
  CHECK_MESSAGE(within.exit_code == 0, within.err);
  CHECK(env.run({"stop", "--id", slug}).exit_code == 0);

  // 0: no limit but the disk's, as for --max-workspace itself.
  auto unbounded = env.run({"run", "--keep", "--max-workspace", "0", "--lease-output", h.string(), "--", "sh", "-c",
                            "head -c 4000000 /dev/zero > big && stat -c %s big"});
  CHECK_MESSAGE(unbounded.exit_code == 0, unbounded.err);
  CHECK(unbounded.out == "4000000\n");
  CHECK(env.run({"stop", "--all"}).exit_code == 0);
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("--download brings files back from a tmpfs workspace") {
  CliEnv env;
  env.root().write("work/a.txt", "one");
  fs::path h = env.root().path() / "handle.json";
  auto r = env.run({"run", "--lease-output", h.string(), "--download", "out/*.txt", "--download-dir", "results", "--",
                    "sh", "-c", "stat -f -c %T .; mkdir out && echo report > out/r.txt"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out == "tmpfs\n");
  CHECK(read_file(env.workspace() / "results/out/r.txt") == "report\n");
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("SIGKILL during a run that is not kept: its workspace was never on disk and goes with corral") {
  CliEnv env;
  env.root().write("work/f.txt", "synced");
  auto bg = env.start({"run", "--", "sh", "-c", "head -c 1000000 /dev/zero > made.bin; echo started; exec sleep 3599.5"});
  REQUIRE(corral::test::eventually([&] { return read_file(bg.out) == "started\n"; }));
  const fs::path local = env.state_dir() / "corral" / "local";
  // While it runs, the sandbox folder holds only its metadata: neither the synced file
  // nor what the command made is on disk.
  CHECK(files_below(local).size() == 1);
  ::kill(bg.pid, SIGKILL);
  bg.wait();
  CHECK(corral::test::eventually([] { return corral::test::processes_running({"sleep", "3599.5"}).empty(); }));
  for (int pid : corral::test::processes_running({"sleep", "3599.5"})) ::kill(pid, SIGKILL);
  for (const std::string& f : files_below(local)) CHECK_MESSAGE(fs::path(f).filename() == "sandbox.json", f);
  // The lease left behind cannot be reused: its workspace went with the run.
  auto reuse = env.run({"run", "--id", env.only_lease(), "--", "true"});
  CHECK(reuse.exit_code == 69);
  CHECK_MESSAGE(reuse.err.find("memory only") != std::string::npos, reuse.err);
  CHECK(reuse.err.find("corral stop --id") != std::string::npos);
  auto stop = env.run({"stop", "--orphans"});
  INFO(stop.err);
  CHECK(stop.exit_code == 0);
  CHECK(env.claims().empty());
  CHECK(env.local_sandboxes().empty());
}
