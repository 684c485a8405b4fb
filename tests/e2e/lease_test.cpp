// The lease lifecycle and the trust boundary around it, end to end through the CLI on the
// local provider: exact sync on reuse, abandoned and corrupt leases, per-host orphans,
// output files that must not be replaced, hostile provider data, one exit code per cause.
#include <doctest/doctest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <set>
#include <thread>

#include "cli.hpp"
#include "corral/json.hpp"
#include "corral/os/process.hpp"

namespace fs = std::filesystem;
using corral::test::CliEnv;
using corral::test::eventually;
using corral::test::read_file;

namespace {

corral::json::Document parse(const std::string& text) { return corral::json::parse(text, "corral output"); }

fs::path local_dir(const CliEnv& env) { return env.state_dir() / "corral" / "local"; }

size_t count_sandboxes(const fs::path& dir) {
  size_t n = 0;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dir, ec)) n += e.is_directory() ? 1 : 0;
  return n;
}

// The state string `list --json` gives lease `id`.
std::string state_of(const CliEnv& env, const std::string& id) {
  auto r = env.run({"list", "--json"});
  REQUIRE(r.exit_code == 0);
  auto doc = parse(r.out);
  for (const auto& l : doc.GetArray())
    if (corral::json::get_string(l, "leaseId") == id) return corral::json::get_string(l, "state");
  return "";
}

// Words that, in an option's name, say it names an endpoint, a host, a file or a program.
const std::set<std::string> kDestinationWords = {"url",  "domain", "host", "endpoint", "dir", "path",
                                                 "file", "cli",    "bwrap", "bin",     "socket", "server"};

// The '-'-separated words of an option name.
std::vector<std::string> words_of(const std::string& name) {
  std::vector<std::string> words;
  size_t start = 0;
  for (size_t dash; (dash = name.find('-', start)) != std::string::npos; start = dash + 1)
    words.push_back(name.substr(start, dash - start));
  words.push_back(name.substr(start));
  return words;
}

}  // namespace

TEST_CASE("a reused sandbox loses the files deleted locally and keeps what it made itself") {
  CliEnv env;
  env.root().write("work/keep.txt", "k");
  env.root().write("work/gone.txt", "g");
  env.root().write("work/old/deep/file.txt", "d");
  REQUIRE(env.run({"run", "--keep", "--", "sh", "-c", "echo made > made-here.txt"}).exit_code == 0);
  const std::string lease = env.only_lease();

  fs::remove(env.workspace() / "gone.txt");
  fs::remove_all(env.workspace() / "old");
  auto r = env.run({"run", "--id", lease, "--", "sh", "-c", "find . -type f -o -type d | sort"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("./keep.txt") != std::string::npos);
  CHECK(r.out.find("./made-here.txt") != std::string::npos);  // the sandbox's own file survives
  CHECK(r.out.find("gone.txt") == std::string::npos);
  CHECK(r.out.find("old") == std::string::npos);  // its emptied folders too

  // A file brought back locally comes back in the sandbox.
  env.root().write("work/gone.txt", "again");
  r = env.run({"run", "--id", lease, "--", "cat", "gone.txt"});
  CHECK(r.out == "again");
  CHECK(env.run({"stop", "--id", lease}).exit_code == 0);
}

TEST_CASE("run --id from another working tree is refused naming both; --switch-tree syncs that tree into it") {
  CliEnv env;
  env.root().write("work/mine.txt", "first project");
  env.root().write("other/theirs.txt", "second project");
  const std::string other = (env.root().path() / "other").string();
  REQUIRE(env.run({"run", "--keep", "--", "sh", "-c", "echo built > build.out"}).exit_code == 0);
  const std::string lease = env.only_lease();

  auto refused = env.run({"run", "--id", lease, "--", "sh", "-c", "echo ran; ls"}, other);
  CHECK(refused.exit_code == 64);
  CHECK(refused.out.empty());
  CHECK(refused.err.find("holds the working tree " + env.workspace().string() + ", not this one (" + other +
                         "): a run here would replace its files with this tree's") != std::string::npos);
  CHECK(refused.err.find("pass --switch-tree") != std::string::npos);
  // Nothing changed in it: the first tree and what its command made are still there.
  auto same = env.run({"run", "--id", lease, "--", "sh", "-c", "cat mine.txt build.out"});
  CHECK(same.out == "first projectbuilt\n");

  auto switched = env.run({"run", "--id", lease, "--switch-tree", "--", "sh", "-c", "ls; cat build.out"}, other);
  CHECK_MESSAGE(switched.exit_code == 0, switched.err);
  CHECK(switched.out == "build.out\ntheirs.txt\nbuilt\n");  // the tree swapped; the sandbox's own file stays
  auto leases = corral::json::parse(env.run({"list", "--json"}).out, "list");
  CHECK(std::string(leases[0]["workspace"].GetString()) == other);
  // Now it is the first tree that is refused.
  CHECK(env.run({"run", "--id", lease, "--", "true"}).exit_code == 64);

  auto alone = env.run({"run", "--switch-tree", "--", "true"});
  CHECK(alone.exit_code == 64);
  CHECK(alone.err.find("--switch-tree only applies with --id") != std::string::npos);
  CHECK(env.run({"stop", "--id", lease}).exit_code == 0);
}

TEST_CASE("a lease whose corral was killed is shown as abandoned and removed by stop --orphans") {
  CliEnv env;
  env.root().write("work/f.txt", "x");
  auto bg = env.start({"run", "--", "sleep", "30"});
  REQUIRE(eventually([&] { return env.claims().size() == 1 && count_sandboxes(local_dir(env)) == 1; }));
  const std::string lease = env.only_lease();
  CHECK(eventually([&] { return state_of(env, lease) == "in use"; }));
  ::kill(bg.pid, SIGKILL);
  bg.wait();

  CHECK(state_of(env, lease) == "abandoned");
  auto human = env.run({"list"});
  CHECK(human.out.find("abandoned") != std::string::npos);
  CHECK(human.err.find("stop --orphans") != std::string::npos);

  auto r = env.run({"stop", "--orphans"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("abandoned lease") != std::string::npos);
  CHECK(env.claims().empty());
  CHECK(count_sandboxes(local_dir(env)) == 0);
}

TEST_CASE("a kept lease is never taken for abandoned") {
  CliEnv env;
  REQUIRE(env.run({"run", "--keep", "--", "true"}).exit_code == 0);
  const std::string lease = env.only_lease();
  CHECK(state_of(env, lease) == "kept");
  CHECK(env.run({"stop", "--orphans"}).exit_code == 0);
  CHECK(env.claims().size() == 1);
  CHECK(count_sandboxes(local_dir(env)) == 1);
  CHECK(env.run({"stop", "--id", lease}).exit_code == 0);
}

TEST_CASE("a corrupt claim is visible, blocks nothing else, and stop removes it with its sandbox") {
  for (const bool stop_all : {false, true}) {
    CAPTURE(stop_all);
    CliEnv env;
    REQUIRE(env.run({"run", "--keep", "--", "true"}).exit_code == 0);
    const std::string lease = env.only_lease();
    fs::path claim = env.claims().front();
    std::string text = read_file(claim);
    // Truncated mid-write (the atomic writer never does this, a full disk or an editor may).
    std::ofstream(claim, std::ios::trunc) << text.substr(0, text.find("\"details\""));

    auto listed = env.run({"list", "--json"});
    REQUIRE(listed.exit_code == 0);
    auto doc = parse(listed.out);
    REQUIRE(doc.GetArray().Size() == 1);
    CHECK(corral::json::get_string(doc[0], "state") == std::string("corrupt"));
    CHECK(!corral::json::get_string(doc[0], "sandboxId").empty());
    CHECK(env.run({"list"}).out.find("corrupt") != std::string::npos);
    auto doctor = env.run({"doctor"});
    CHECK(doctor.out.find("corrupt claim") != std::string::npos);
    CHECK(doctor.exit_code != 0);

    auto reuse = env.run({"run", "--id", lease, "--", "true"});
    CHECK(reuse.exit_code == 78);
    CHECK(reuse.err.find("corrupt") != std::string::npos);
    CHECK(reuse.err.find("corral stop --id " + lease) != std::string::npos);

    // Orphan cleanup must not take the sandbox a corrupt claim still names.
    CHECK(env.run({"stop", "--orphans"}).exit_code == 0);
    CHECK(count_sandboxes(local_dir(env)) == 1);

    auto r = stop_all ? env.run({"stop", "--all"}) : env.run({"stop", "--id", lease});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(env.claims().empty());
    CHECK(count_sandboxes(local_dir(env)) == 0);
  }
}

TEST_CASE("every place that prints a lease's stop command prints the same one, and it stops the lease") {
  CliEnv env;
  const fs::path handle = env.root().path() / "handle.json";
  REQUIRE(env.run({"run", "--keep", "--lease-output", handle.string(), "--", "true"}).exit_code == 0);
  const std::string lease = env.only_lease();
  const std::string expected = "corral stop --provider local --id " + lease;
  CHECK(corral::json::get_string(parse(read_file(handle)), "cleanupCommand") == expected);
  auto listed = parse(env.run({"list", "--json"}).out);
  CHECK(corral::json::get_string(listed[0], "cleanupCommand") == expected);
  auto status = parse(env.run({"status", "--id", lease, "--json"}).out);
  CHECK(corral::json::get_string(status["lease"], "cleanupCommand") == expected);
  CHECK(env.run({"status", "--id", lease}).out.find(expected) != std::string::npos);

  // A corrupt claim's provider is not to be trusted: its command names none, everywhere.
  fs::path claim = env.claims().front();
  std::string text = read_file(claim);
  std::ofstream(claim, std::ios::trunc) << text.substr(0, text.find("\"details\""));  // the sandbox id survives
  const std::string corrupt = "corral stop --id " + lease;
  CHECK(corral::json::get_string(parse(env.run({"list", "--json"}).out)[0], "cleanupCommand") == corrupt);
  CHECK(env.run({"doctor"}).out.find("`" + corrupt + "` removes it") != std::string::npos);
  CHECK(env.run({"run", "--id", lease, "--", "true"}).err.find("`" + corrupt + "` removes it") != std::string::npos);
  CHECK(env.run({"stop", "--id", lease}).exit_code == 0);  // the words of `corrupt`
  CHECK(env.claims().empty());
  CHECK(count_sandboxes(local_dir(env)) == 0);
}

TEST_CASE("orphans are per host: one machine never stops another's sandboxes on a shared account") {
  CliEnv a, b;
  const fs::path shared = a.root().path() / "shared-local";
  fs::create_directories(shared);
  a.env["CORRAL_LOCAL_DIR"] = b.env["CORRAL_LOCAL_DIR"] = shared.string();
  REQUIRE(b.run({"run", "--keep", "--", "true"}).exit_code == 0);  // b's live, kept sandbox
  REQUIRE(a.run({"run", "--keep", "--", "true"}).exit_code == 0);
  // a forgets its lease without stopping it: now an orphan of host a.
  for (const fs::path& c : a.claims()) fs::remove(c);
  REQUIRE(count_sandboxes(shared) == 2);

  auto listed = a.run({"list", "--remote", "--json"});
  REQUIRE(listed.exit_code == 0);
  auto doc = parse(listed.out);
  REQUIRE(doc.GetArray().Size() == 1);  // b's is not a's business
  CHECK(corral::json::get_string(doc[0], "owner") == "orphan");
  auto everyone = parse(a.run({"list", "--remote", "--json", "--all-hosts"}).out);
  CHECK(everyone.GetArray().Size() == 2);

  auto r = a.run({"stop", "--orphans"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(count_sandboxes(shared) == 1);  // only a's orphan went
  CHECK(b.run({"run", "--id", b.only_lease(), "--", "true"}).exit_code == 0);

  CHECK(a.run({"stop", "--orphans", "--all-hosts"}).exit_code == 0);
  CHECK(count_sandboxes(shared) == 0);
}

TEST_CASE("partial workspace archives of a killed run are swept, live ones are not") {
  CliEnv env;
  // The next archive staged sweeps them: a run on a provider that takes an archive.
  env.add_registry("testbox", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so"});
  fs::create_directories(env.root().path() / "boxes");
  env.env["TESTBOX_DIR"] = (env.root().path() / "boxes").string();
  env.root().write("work/f.txt", "x");
  fs::path tmp = env.state_dir() / "corral" / "tmp";
  fs::create_directories(tmp);
  fs::path stale = tmp / "workspace-999999-deadbeef.tar.gz";
  fs::path live = tmp / "workspace-999998-cafebabe.tar.gz";
  std::ofstream(stale) << "partial";
  std::ofstream(live) << "in progress";
  int live_fd = ::open(live.c_str(), O_RDONLY);
  REQUIRE(live_fd >= 0);
  REQUIRE(::flock(live_fd, LOCK_EX) == 0);  // as its builder holds it
  auto old = fs::file_time_type::clock::now() - std::chrono::hours(2);
  fs::last_write_time(stale, old);
  fs::last_write_time(live, old);

  REQUIRE(env.run({"run", "--provider", "testbox", "--", "true"}).exit_code == 0);
  CHECK_FALSE(fs::exists(stale));
  CHECK(fs::exists(live));
  ::close(live_fd);
  size_t left = 0;
  for (auto& e : fs::directory_iterator(tmp)) left += e.path() != live ? 1 : 0;
  CHECK(left == 0);  // the run's own archive is gone too
}

TEST_CASE("--lease-output writes through devices, FIFOs and /dev/stdout instead of replacing them") {
  CliEnv env;
  SUBCASE("/dev/stdout") {
    auto r = env.run({"run", "--lease-output", "/dev/stdout", "--", "true"});
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("\"leaseId\"") != std::string::npos);
    struct stat st {};
    REQUIRE(::lstat("/dev/stdout", &st) == 0);
    CHECK(S_ISLNK(st.st_mode));  // not replaced by a regular file (as root, a rename could)
  }
  SUBCASE("a FIFO") {
    fs::path fifo = env.root().path() / "handle.fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    std::string got;
    std::thread reader([&] { got = read_file(fifo); });
    auto r = env.run({"run", "--lease-output", fifo.string(), "--", "true"});
    reader.join();
    CHECK(r.exit_code == 0);
    CHECK(got.find("\"exitCode\":0") != std::string::npos);
    struct stat st {};
    REQUIRE(::lstat(fifo.c_str(), &st) == 0);
    CHECK(S_ISFIFO(st.st_mode));
  }
  SUBCASE("a character device, as root") {
    if (::geteuid() != 0) return;  // mknod needs root; CI runs as root
    fs::path dev = env.root().path() / "null";
    REQUIRE(::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
    auto r = env.run({"run", "--lease-output", dev.string(), "--", "true"});
    CHECK(r.exit_code == 0);
    struct stat st {};
    REQUIRE(::lstat(dev.c_str(), &st) == 0);
    CHECK(S_ISCHR(st.st_mode));
  }
  SUBCASE("a regular file is replaced atomically and a symlink to one stays a symlink") {
    fs::path target = env.root().path() / "handle.json";
    fs::path link = env.root().path() / "link.json";
    std::ofstream(target) << "old";
    fs::create_symlink(target, link);
    REQUIRE(env.run({"run", "--lease-output", link.string(), "--", "true"}).exit_code == 0);
    CHECK(fs::is_symlink(link));
    CHECK(read_file(target).find("\"leaseId\"") != std::string::npos);
  }
}

TEST_CASE("--lease-output to a descriptor writes after the command's output, never over it or in place of it") {
  CliEnv env;
  SUBCASE("/dev/stdout is a file opened with >: the command's output stays, the handle follows it") {
    // Background's stdout is a regular file opened without O_APPEND, as `> out.txt` opens it.
    corral::test::Background b = env.start({"run", "--lease-output", "/dev/stdout", "--", "echo", "X"});
    REQUIRE(b.wait() == 0);
    std::string out = read_file(b.out);
    REQUIRE_MESSAGE(out.rfind("X\n{", 0) == 0, out);
    CHECK(parse(out.substr(2))["exitCode"].GetInt() == 0);
  }
  SUBCASE("/dev/fd/N and /proc/self/fd/N are the caller's descriptor N, appended to") {
    fs::path file = env.root().path() / "fd9.txt";
    std::ofstream(file) << "before\n";
    for (const std::string& name : {std::string("/dev/fd/9"), std::string("/proc/self/fd/9")}) {
      CAPTURE(name);
      int fd = ::open(file.c_str(), O_WRONLY | O_APPEND);
      REQUIRE(fd >= 0);
      corral::os::ProcessSpec spec;
      spec.argv = {corral::test::corral_binary(), "run", "--lease-output", name, "--", "true"};
      spec.env = env.environment();
      spec.cwd = env.workspace().string();
      spec.pass_fds = {{fd, 9}};
      auto r = corral::os::capture_process(spec, 120);
      ::close(fd);
      CHECK_MESSAGE(r.exit_code == 0, r.err);
    }
    std::string text = read_file(file);
    CHECK(text.rfind("before\n{", 0) == 0);
    CHECK(std::count(text.begin(), text.end(), '\n') == 3);  // "before", then two handles, each a line
    CHECK(fs::is_regular_file(file));
  }
  SUBCASE("stdout a deleted file: nothing is made in /dev and /dev/stdout stays a link") {
    fs::path file = env.root().path() / "deleted.txt";
    int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(::unlink(file.c_str()) == 0);
    std::set<std::string> dev_before;
    for (auto& e : fs::directory_iterator("/dev")) dev_before.insert(e.path().filename().string());
    corral::os::ProcessSpec spec;
    spec.argv = {"sh", "-c", "exec \"$0\" run --lease-output /dev/stdout -- true >&9", corral::test::corral_binary()};
    spec.env = env.environment();
    spec.cwd = env.workspace().string();
    spec.pass_fds = {{fd, 9}};
    auto r = corral::os::capture_process(spec, 120);
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    struct stat st {};
    REQUIRE(::lstat("/dev/stdout", &st) == 0);
    CHECK(S_ISLNK(st.st_mode));
    for (auto& e : fs::directory_iterator("/dev"))
      CHECK_MESSAGE(dev_before.count(e.path().filename().string()) == 1, "made in /dev: ", e.path());
    // The handle went to the deleted file, through the descriptor.
    CHECK(::lseek(fd, 0, SEEK_CUR) > 0);
    ::close(fd);
  }
}

TEST_CASE("--lease-output: a file that cannot be written is refused before a sandbox is made") {
  CliEnv env;
  for (const std::string& bad : {(env.root().path() / "no-such-folder" / "h.json").string(),
                                 env.root().path().string(), std::string("/dev/fd/57")}) {
    CAPTURE(bad);
    auto r = env.run({"run", "--lease-output", bad, "--", "touch", "/tmp/ran"});
    CHECK(r.exit_code == 64);
    CHECK_MESSAGE(r.err.find("cannot write the session handle to " + bad) != std::string::npos, r.err);
    CHECK(count_sandboxes(local_dir(env)) == 0);
    CHECK(env.claims().empty());
  }
  auto warm = env.run({"warmup", "--lease-output", (env.root().path() / "none" / "h.json").string()});
  CHECK(warm.exit_code == 64);
  CHECK(env.claims().empty());
  auto shards = env.run({"run", "--shards", "2", "--lease-output", (env.root().path() / "none" / "h.json").string(),
                         "--", "true"});
  CHECK(shards.exit_code == 64);
  CHECK(env.claims().empty());
}

TEST_CASE("--lease-output to a FIFO nobody reads gives way to SIGTERM") {
  CliEnv env;
  fs::path fifo = env.root().path() / "handle.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  corral::test::Background b = env.start({"run", "--lease-output", fifo.string(), "--", "true"});
  // The run is over (its sandbox made, then gone) and corral waits for a reader. Before
  // the local provider's folder exists nothing was created yet: a slow start is no end.
  REQUIRE(eventually([&] { return fs::exists(local_dir(env)) && count_sandboxes(local_dir(env)) == 0 &&
                                  env.claims().empty() && read_file(b.err).empty() && ::kill(b.pid, 0) == 0; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(b.pid, SIGTERM);
  CHECK(b.wait(std::chrono::seconds(10)) == 130);
  CHECK(read_file(b.err).find("nothing was reading the FIFO") != std::string::npos);

  // Stopped during the command: the handle is offered once, and nothing waits for a reader.
  corral::test::Background stopped =
      env.start({"run", "--lease-output", fifo.string(), "--", "sh", "-c", "echo started; sleep 60"});
  REQUIRE(eventually([&] { return read_file(stopped.out) == "started\n"; }));
  ::kill(stopped.pid, SIGTERM);
  CHECK(stopped.wait(std::chrono::seconds(20)) == 130);
  CHECK(read_file(stopped.err).find("nothing was reading the FIFO") != std::string::npos);
  CHECK(env.claims().empty());
}

TEST_CASE("--lease-output /dev/tty without a terminal, or a socket, is refused at once, before anything is made") {
  CliEnv env;
  if (corral::os::find_program("setsid").empty()) return;
  // setsid: a session of its own, hence no controlling terminal, as in CI, cron or a service.
  corral::os::ProcessSpec spec;
  spec.argv = {"setsid", "--wait", corral::test::corral_binary(), "run", "--lease-output", "/dev/tty", "--", "true"};
  spec.env = env.environment();
  spec.cwd = env.workspace().string();
  const corral::os::CapturedProcess r = corral::os::capture_process(spec, 60);
  CHECK(r.exit_code == 64);
  CHECK_MESSAGE(r.err.find("cannot write the session handle to /dev/tty: no such device or address") !=
                    std::string::npos, r.err);
  CHECK_MESSAGE(r.err.find("no controlling terminal") != std::string::npos, r.err);
  CHECK(env.claims().empty());
  CHECK(env.local_sandboxes().empty());

  const fs::path socket_path = env.root().path() / "handle.sock";
  const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(sock >= 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path.c_str());
  REQUIRE(::bind(sock, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  auto to_socket = env.run({"run", "--lease-output", socket_path.string(), "--", "true"});
  ::close(sock);
  CHECK(to_socket.exit_code == 64);
  CHECK_MESSAGE(to_socket.err.find("it is a socket") != std::string::npos, to_socket.err);
  CHECK(env.claims().empty());
}

TEST_CASE("the handle is written as soon as the sandbox exists, and rewritten at the end") {
  CliEnv env;
  // A corral killed mid-command leaves the early handle, naming the sandbox to clean up.
  fs::path early = env.root().path() / "early.json";
  corral::test::Background b =
      env.start({"run", "--lease-output", early.string(), "--", "sh", "-c", "echo started; sleep 60"});
  REQUIRE(eventually([&] { return read_file(b.out) == "started\n"; }));
  ::kill(b.pid, SIGKILL);
  b.wait();
  auto doc = parse(read_file(early));
  CHECK(doc["kept"].GetBool() == false);
  CHECK_FALSE(doc.HasMember("exitCode"));
  std::string lease = doc["leaseId"].GetString();
  CHECK(fs::exists(env.state_dir() / "corral" / "leases" / (lease + ".json")));
  CHECK(env.run({"stop", "--id", lease}).exit_code == 0);
  // A run that ends replaces the early handle with the final one.
  fs::path h = env.root().path() / "handle.json";
  REQUIRE(env.run({"run", "--keep", "--lease-output", h.string(), "--", "true"}).exit_code == 0);
  auto final_handle = parse(read_file(h));
  CHECK(final_handle["kept"].GetBool());
  CHECK(final_handle["exitCode"].GetInt() == 0);
  CHECK(env.run({"stop", "--all"}).exit_code == 0);
}

TEST_CASE("control characters from a provider never reach the terminal raw, and JSON stays valid") {
  CliEnv env;
  // A sandbox of the local provider with hostile labels, as a compromised store would hold.
  fs::path box = local_dir(env) / "local-hostile";
  fs::create_directories(box / "workspace");
  std::ofstream(box / "sandbox.json")
      << R"({"id":"local-hostile","slug":"x\u001b]0;pwned\u0007","createdAt":"now",)"
      << R"("labels":{"corral-owner":"corral","corral-slug":"evil\u001b[2J\u009b31m","corral-lease":"\u0000\n"}})";

  auto human = env.run({"list", "--remote"});
  INFO(human.err);
  REQUIRE(human.exit_code == 0);
  CHECK(human.out.find("local-hostile") != std::string::npos);
  CHECK(human.out.find('\x1b') == std::string::npos);
  CHECK(human.out.find("\xc2\x9b") == std::string::npos);
  CHECK(human.out.find("\\x1b[2J") != std::string::npos);

  auto js = env.run({"list", "--remote", "--json"});
  REQUIRE(js.exit_code == 0);
  auto doc = parse(js.out);  // throws on invalid JSON
  REQUIRE(doc.GetArray().Size() == 1);
  CHECK(corral::json::get_map(doc[0], "labels").at("corral-slug") == "evil\x1b[2J\xc2\x9b" "31m");

  CHECK(env.run({"stop", "--orphans"}).exit_code == 0);
  CHECK_FALSE(fs::exists(box));
}

TEST_CASE("a repository's corral.yaml cannot set where credentials go or what runs, for any built-in provider") {
  CliEnv env;
  auto listed = env.run({"providers", "--json"});
  REQUIRE(listed.exit_code == 0);
  auto providers = parse(listed.out);
  int checked = 0;
  for (const auto& p : providers.GetArray()) {
    std::string name = corral::json::get_string(p, "name");
    auto described = env.run({"providers", "describe", name, "--json"});
    REQUIRE(described.exit_code == 0);
    auto spec = parse(described.out);
    const auto& options = spec.HasMember("spec") ? spec["spec"]["options"] : spec["options"];
    for (const auto& o : options.GetArray()) {
      std::string option = corral::json::get_string(o, "name");
      std::string type = corral::json::get_string(o, "type");
      bool trusted = corral::json::get_bool(o, "trusted") || corral::json::get_bool(o, "secret");
      CAPTURE(name);
      CAPTURE(option);
      // Anything that names an endpoint, host, file or program must be typed as one, so
      // the loader can insist it is trusted.
      bool destination = corral::is_option_type(type) && corral::decides_destination(type);
      for (const std::string& word : words_of(option))
        if (kDestinationWords.count(word) && words_of(option).back() != "timeout")
          CHECK_MESSAGE(destination, "option looks like a destination but is typed '" << type << "'");
      if (!trusted) continue;
      env.root().write("work/corral.yaml", "provider: " + name + "\n" + name + ":\n  " + option + ": http://127.0.0.1:9/\n");
      auto r = env.run({"run", "--", "true"});
      CHECK(r.exit_code == 78);
      CHECK(r.err.find("may not be set by a repository's config") != std::string::npos);
      // A secret's hint never suggests the flag corral would refuse.
      if (corral::json::get_bool(o, "secret"))
        CHECK_MESSAGE(r.err.find("--" + name + "-" + option) == std::string::npos, r.err);
      CHECK(env.claims().empty());
      ++checked;
    }
  }
  fs::remove(env.workspace() / "corral.yaml");
  CHECK(checked >= 5);  // local bwrap+dir, e2b api-url+domain+sandbox-url, docker-sandbox cli, ...
}

TEST_CASE("the same failure has the same exit code on every command") {
  CliEnv env;
  CHECK(env.run({"run", "--provider", "nosuch", "--", "true"}).exit_code == 64);
  CHECK(env.run({"providers", "describe", "nosuch"}).exit_code == 64);
  CHECK(env.run({"doctor", "--provider", "nosuch"}).exit_code == 64);
  CHECK(env.run({"list", "--remote", "--provider", "nosuch"}).exit_code == 64);
  CHECK(env.run({"status", "--id", "nosuch"}).exit_code == 66);
  CHECK(env.run({"stop", "--id", "nosuch"}).exit_code == 66);
  CHECK(env.run({"url", "--id", "nosuch", "--port", "80"}).exit_code == 66);
}

TEST_CASE("--help and version work whatever state the user's config is in") {
  CliEnv env;
  env.root().write("config/corral/config.yaml", "env: [[a, b]]\nprovider: {x: 1}\n");
  CHECK(env.run({"version"}).exit_code == 0);
  CHECK(env.run({"--help"}).exit_code == 0);
  CHECK(env.run({"run", "--help"}).exit_code == 0);
  auto r = env.run({"run", "--", "true"});
  CHECK(r.exit_code == 78);
  CHECK(r.err.find("config.yaml") != std::string::npos);
}

TEST_CASE("a claim that is a FIFO or a link is listed as corrupt, never waited on or followed, and stop --id removes it") {
  CliEnv env;
  const fs::path leases = env.state_dir() / "corral" / "leases";
  fs::create_directories(leases);
  REQUIRE(::mkfifo((leases / "aaaaaaaaaaaa.json").c_str(), 0600) == 0);
  const fs::path target = env.root().write("elsewhere.json", "{}");
  fs::create_symlink(target, leases / "bbbbbbbbbbbb.json");
  corral::test::Background list = env.start({"list", "--json"});
  REQUIRE(list.wait(std::chrono::seconds(30)) == 0);
  auto rows = parse(read_file(list.out));
  REQUIRE(rows.IsArray());
  CHECK(rows.Size() == 2);
  for (const auto& row : rows.GetArray()) CHECK(std::string(row["state"].GetString()) == "corrupt");
  std::string text = read_file(list.out);
  CHECK(text.find("FIFO") != std::string::npos);
  CHECK(text.find("symbolic link") != std::string::npos);
  for (const char* id : {"aaaaaaaaaaaa", "bbbbbbbbbbbb"}) {
    CAPTURE(id);
    corral::test::Background stop = env.start({"stop", "--id", id});
    CHECK(stop.wait(std::chrono::seconds(30)) == 0);
  }
  CHECK(fs::is_empty(leases));
  CHECK(read_file(target) == "{}");  // the link went, not what it pointed at
}

TEST_CASE("a .corralignore that is a FIFO or a device is refused, naming it, before anything is created") {
  CliEnv env;
  const fs::path ignore = env.workspace() / ".corralignore";
  fs::create_directories(env.workspace());
  REQUIRE(::mkfifo(ignore.c_str(), 0600) == 0);
  corral::test::Background fifo = env.start({"run", "--", "true"});
  CHECK(fifo.wait(std::chrono::seconds(30)) == 64);
  CHECK(read_file(fifo.err).find(ignore.string() + " cannot be read: it is a FIFO") != std::string::npos);
  fs::remove(ignore);
  fs::create_symlink("/dev/zero", ignore);
  auto zero = env.run({"run", "--", "true"});
  CHECK(zero.exit_code == 64);
  CHECK(zero.err.find("it is a character device") != std::string::npos);
  CHECK(env.claims().empty());
  CHECK(count_sandboxes(local_dir(env)) == 0);
}

TEST_CASE("SIGTERM while a workspace with 100,000 ignore patterns is scanned is acted on at once") {
  CliEnv env;
  for (int i = 0; i < 2000; ++i) env.root().write("work/f" + std::to_string(i) + ".txt", "x");
  std::string patterns;
  for (int i = 0; i < 100'000; ++i) patterns += "pattern-" + std::to_string(i) + "-*.tmp\n";
  env.root().write("work/.corralignore", patterns);
  corral::test::Background run = env.start({"run", "--", "true"});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // reading the patterns, or scanning with them
  ::kill(run.pid, SIGTERM);
  // Matching every file against every pattern takes seconds here; the stop must not wait for it.
  CHECK(run.wait(std::chrono::seconds(10)) == 130);
  CHECK(read_file(run.err).find("interrupted") != std::string::npos);
  CHECK(env.claims().empty());
}

TEST_CASE("an --id too long for a file name is no such lease (66), for run and stop alike") {
  CliEnv env;
  const std::string id(300, 'a');
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", "--id", id, "--", "true"}, {"stop", "--id", id}, {"status", "--id", id}}) {
    auto r = env.run(args);
    INFO(args[0], ": ", r.err);
    CHECK(r.exit_code == 66);
    CHECK(r.err.find("no lease '" + std::string(64, 'a') + "...'") != std::string::npos);
    CHECK(r.err.find("corrupt") == std::string::npos);
  }
  CHECK(env.claims().empty());
}

TEST_CASE("a state folder corral cannot make names it and why (78); one planted as a link is refused, never followed") {
  CliEnv env;
  SUBCASE("a file where a folder must be") {
    env.root().write("not-a-folder", "x");
    env.env["XDG_STATE_HOME"] = (env.root().path() / "not-a-folder" / "state").string();
    auto r = env.run({"run", "--keep", "--", "true"});
    CHECK(r.exit_code == 78);
    CHECK_MESSAGE(r.err.find("not-a-folder/state/corral") != std::string::npos, r.err);
    CHECK_MESSAGE(r.err.find("Not a directory") != std::string::npos, r.err);
    CHECK(r.err.find("lock") == std::string::npos);
  }
  SUBCASE("leases/ a link to another folder") {
    const fs::path elsewhere = env.root().path() / "elsewhere";
    fs::create_directories(elsewhere);
    fs::permissions(elsewhere, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                   fs::perms::others_read | fs::perms::others_exec);
    fs::create_directories(env.state_dir() / "corral");
    fs::create_directory_symlink(elsewhere, env.state_dir() / "corral" / "leases");
    auto r = env.run({"run", "--keep", "--", "true"});
    CHECK(r.exit_code == 78);
    CHECK_MESSAGE(r.err.find("is a symbolic link") != std::string::npos, r.err);
    CHECK(fs::is_empty(elsewhere));
    CHECK((fs::status(elsewhere).permissions() & fs::perms::others_read) != fs::perms::none);  // never chmod-ed
    CHECK(env.local_sandboxes().empty());
  }
}
