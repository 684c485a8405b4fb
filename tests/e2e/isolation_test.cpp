// Crash isolation (a registry entry's `isolation: process`): the testbox provider crashes,
// throws past every catch, exits or hangs on demand (TESTBOX_CRASH), in-process and in
// its helper process; corral names the plugin and what it was doing, keeps the lease's
// claim, and `corral stop --id` cleans up once the crash is gone.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "cli.hpp"

namespace fs = std::filesystem;
using corral::test::CliEnv;
using corral::test::gone_within;
using corral::test::read_file;
using Clock = std::chrono::steady_clock;

namespace {

struct Box : CliEnv {
  fs::path boxes = root().path() / "boxes";
  // testbox registered to run `mode` ("in-process" or "process"), with extra entry keys.
  explicit Box(const std::string& mode, std::map<std::string, std::string> keys = {}) {
    fs::create_directories(boxes);
    keys["isolation"] = mode;
    add_registry("testbox", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so"}, keys);
    env["TESTBOX_DIR"] = boxes.string();
    root().write("work/file.txt", "synced");
  }
  size_t live() const {
    size_t n = 0;
    for (auto& e : fs::directory_iterator(boxes)) n += e.is_directory() ? 1 : 0;
    return n;
  }
  corral::test::CliResult run_tb(std::vector<std::string> args) const {
    args.insert(args.begin(), {"run", "--provider", "testbox"});
    return run(args);
  }
  std::string only_lease() const {
    auto c = claims();
    REQUIRE(c.size() == 1);
    return c[0].stem().string();
  }
};

// The pids whose parent is `parent`.
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator("/proc", ec)) {
    std::string stat = read_file(e.path() / "stat");
    size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) out.push_back(static_cast<pid_t>(std::stoi(e.path().filename().string())));
  }
  return out;
}

void wait_for_text(const fs::path& file, const std::string& text) {
  for (int i = 0; i < 200 && read_file(file).find(text) == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

}  // namespace

TEST_CASE("an isolated plugin runs exactly like an in-process one") {
  for (const char* mode : {"in-process", "process"}) {
    CAPTURE(mode);
    Box tb(mode);
    auto r = tb.run_tb({"--", "sh", "-c", "cat file.txt; printf err >&2; exit 7"});
    CHECK(r.exit_code == 7);
    CHECK(r.out == "synced");
    CHECK(r.err == "err");
    auto big = tb.run_tb({"--", "head", "-c", "3000000", "/dev/zero"});
    CHECK(big.exit_code == 0);
    CHECK(big.out == std::string(3000000, '\0'));

    REQUIRE(tb.run_tb({"--keep", "--", "sh", "-c", "echo made > made.txt"}).exit_code == 0);
    const std::string lease = tb.only_lease();
    auto again = tb.run({"run", "--id", lease, "--", "cat", "made.txt"});
    CHECK_MESSAGE(again.exit_code == 0, again.err);
    CHECK(again.out == "made\n");
    CHECK(tb.run({"stop", "--id", lease}).exit_code == 0);
    CHECK(tb.live() == 0);
    CHECK(tb.claims().empty());

    // A plugin's error keeps its code, and corral redacts its secrets, in the helper too.
    tb.env["TESTBOX_TOKEN"] = "tb-secret-value-135790";
    tb.env["TESTBOX_FAIL"] = "exec";
    auto failed = tb.run_tb({"--", "true"});
    CHECK(failed.exit_code == 69);
    CHECK(failed.err.find("testbox exec failed as asked") != std::string::npos);
    CHECK(failed.err.find("tb-secret-value-135790") == std::string::npos);
    CHECK(tb.live() == 0);
  }
}

TEST_CASE("a crashing plugin is named with what it was doing; the claim survives for corral stop --id") {
  struct Case {
    const char* mode;
    const char* how;
    int exit_code;
    const char* cause;
  };
  const Case cases[] = {
      {"process", "segv", 70, "(SIGSEGV)"},
      {"process", "abort", 70, "(SIGABRT)"},
      {"process", "throw", 70, "(SIGABRT)"},
      {"process", "exit", 70, "(it ended its helper process with status 3)"},
      {"process", "orphan-segv", 70, "(SIGSEGV)"},  // noticed though a child holds the socket
      {"in-process", "segv", 128 + SIGSEGV, "(SIGSEGV)"},
      {"in-process", "abort", 128 + SIGABRT, "(SIGABRT)"},
      {"in-process", "throw", 128 + SIGABRT, "(an exception escaped it)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.mode);
    CAPTURE(c.how);
    Box tb(c.mode);
    tb.env["TESTBOX_CRASH"] = std::string("exec:") + c.how;
    auto r = tb.run_tb({"--", "echo", "never"});
    CHECK(r.exit_code == c.exit_code);
    CHECK(r.out.empty());
    CHECK_MESSAGE(r.err.find(std::string("provider plugin 'testbox' crashed during 'exec' ") + c.cause) !=
                      std::string::npos,
                  r.err);
    const std::string lease = tb.only_lease();
    CHECK(r.err.find("`corral stop --id " + lease + "` cleans up once the plugin is fixed") != std::string::npos);
    CHECK(tb.run({"list", "--json"}).out.find(lease) != std::string::npos);
    CHECK(tb.live() == 1);

    tb.env.erase("TESTBOX_CRASH");  // the plugin is fixed
    auto stop = tb.run({"stop", "--id", lease});
    CHECK_MESSAGE(stop.exit_code == 0, stop.err);
    CHECK(tb.live() == 0);
    CHECK(tb.claims().empty());
  }
}

TEST_CASE("an isolated plugin that crashes while creating leaves no claim and says how to find an orphan") {
  Box tb("process");
  tb.env["TESTBOX_CRASH"] = "create:segv";
  auto r = tb.run_tb({"--", "true"});
  CHECK(r.exit_code == 70);
  CHECK_MESSAGE(r.err.find("provider plugin 'testbox' crashed during 'create' (SIGSEGV)") != std::string::npos, r.err);
  CHECK(r.err.find("corral stop --orphans") != std::string::npos);
  CHECK(tb.claims().empty());
}

TEST_CASE("a plugin crashing in create, upload, get, destroy or list is named, and the next corral cleans up") {
  struct Case {
    const char* mode;
    const char* primitive;
    int exit_code;
  };
  // An isolated destroy that crashes is a failed cleanup: the command's exit code stands.
  const Case cases[] = {
      {"in-process", "create", 128 + SIGSEGV}, {"in-process", "upload", 128 + SIGSEGV},
      {"in-process", "get", 128 + SIGSEGV},    {"in-process", "destroy", 128 + SIGSEGV},
      {"process", "upload", 70},               {"process", "get", 70},
      {"process", "destroy", 0},               {"process", "list", 70},
  };
  for (const Case& c : cases) {
    const std::string mode = c.mode, primitive = c.primitive;
    CAPTURE(mode);
    CAPTURE(primitive);
    Box tb(mode);
    const fs::path ran = tb.root().path() / "ran";
    const std::vector<std::string> command = {"--", "sh", "-c", "echo ran >> " + ran.string()};
    std::string kept;  // get is reached by reusing a kept lease
    if (primitive == "get") {
      REQUIRE(tb.run_tb({"--keep", "--", "true"}).exit_code == 0);
      kept = tb.only_lease();
    }
    tb.env["TESTBOX_CRASH"] = primitive + ":segv";
    corral::test::CliResult r;
    if (primitive == "list") {
      r = tb.run({"stop", "--orphans", "--provider", "testbox"});
    } else if (primitive == "get") {
      std::vector<std::string> args = {"run", "--id", kept};
      args.insert(args.end(), command.begin(), command.end());
      r = tb.run(args);
    } else {
      r = tb.run_tb(command);
    }
    CHECK(r.exit_code == c.exit_code);
    CHECK_MESSAGE(r.err.find("provider plugin 'testbox' crashed during '" + primitive + "' (SIGSEGV)") !=
                      std::string::npos,
                  r.err);
    // The command ran only when the crash came after it, and then once.
    CHECK(read_file(ran) == (primitive == "destroy" ? "ran\n" : ""));
    if (primitive == "create" || primitive == "list") {
      CHECK(tb.claims().empty());
      CHECK(tb.live() == 0);
      CHECK(r.err.find("corral stop --orphans") != std::string::npos);
    } else {
      // The lease outlives the crash, its claim names it, and the sandbox is still there.
      const std::string lease = tb.only_lease();
      if (c.exit_code == 0)
        CHECK(r.err.find("could not stop sandbox tb-" + lease) != std::string::npos);
      else
        CHECK(r.err.find("`corral stop --id " + lease + "` cleans up once the plugin is fixed") != std::string::npos);
      CHECK(tb.run({"list", "--json"}).out.find(lease) != std::string::npos);
      CHECK(tb.live() == 1);
    }

    tb.env.erase("TESTBOX_CRASH");  // the plugin is fixed
    if (!kept.empty()) CHECK(tb.run({"stop", "--id", kept}).exit_code == 0);
    auto sweep = tb.run({"stop", "--orphans", "--provider", "testbox"});
    CHECK_MESSAGE(sweep.exit_code == 0, sweep.err);
    CHECK(tb.live() == 0);
    CHECK(tb.claims().empty());
  }
}

TEST_CASE("an isolated plugin that hangs past its deadline is stopped with a clear error") {
  Box tb("process", {{"call-timeout", "2s"}, {"cancel-grace", "2s"}});
  SUBCASE("a primitive past call-timeout") {
    tb.env["TESTBOX_CRASH"] = "create:hang";
    auto started = Clock::now();
    auto r = tb.run_tb({"--", "true"});
    CHECK(Clock::now() - started < std::chrono::seconds(15));
    CHECK(r.exit_code == 70);
    CHECK_MESSAGE(r.err.find("provider plugin 'testbox' hung during 'create': no answer after 2 s (the registry "
                             "entry's call-timeout)") != std::string::npos,
                  r.err);
    CHECK(tb.claims().empty());
  }
  // The helper is killed, a fresh one cleans up: the keep rules hold as after any run.
  SUBCASE("exec past --timeout and the grace") {
    tb.env["TESTBOX_CRASH"] = "exec:hang";
    auto r = tb.run_tb({"--timeout", "1s", "--", "true"});
    CHECK(r.exit_code == 124);
    CHECK_MESSAGE(r.err.find("provider plugin 'testbox' ignored cancellation: 'exec' was still running 2 s after "
                             "the command's --timeout (1s), so corral stopped its helper process") != std::string::npos,
                  r.err);
    CHECK(tb.claims().empty());
    CHECK(tb.live() == 0);
  }
  SUBCASE("exec that ignores Ctrl-C past the grace") {
    tb.env["TESTBOX_CRASH"] = "exec:hang";
    auto bg = tb.start({"run", "--provider", "testbox", "--", "true"});
    for (int i = 0; i < 200 && tb.live() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    ::kill(bg.pid, SIGINT);
    CHECK(bg.wait() == 130);
    CHECK_MESSAGE(read_file(bg.err).find("provider plugin 'testbox' ignored cancellation: 'exec' was still running "
                                         "2 s after Ctrl-C, so corral stopped its helper process") != std::string::npos,
                  read_file(bg.err));
    CHECK(tb.claims().empty());
    CHECK(tb.live() == 0);
  }
  SUBCASE("the same with --keep-on-failure keeps the sandbox") {
    tb.env["TESTBOX_CRASH"] = "exec:hang";
    auto r = tb.run_tb({"--timeout", "1s", "--keep-on-failure", "--", "true"});
    CHECK(r.exit_code == 124);
    const std::string lease = tb.only_lease();
    CHECK(tb.live() == 1);
    tb.env.erase("TESTBOX_CRASH");
    CHECK(tb.run({"stop", "--id", lease}).exit_code == 0);
    CHECK(tb.live() == 0);
  }
}

// primitives.def says which primitives call-timeout binds: exec, upload and download last
// as long as the user's work, so the 4 s that make a slow create hung are theirs to take.
TEST_CASE("call-timeout binds every primitive but exec, upload and download") {
  Box tb("process", {{"call-timeout", "2s"}});
  SUBCASE("a slow create is hung") {
    tb.env["TESTBOX_PAUSE"] = "create:linger";
    auto r = tb.run_tb({"--", "true"});
    CHECK(r.exit_code == 70);
    CHECK_MESSAGE(r.err.find("hung during 'create': no answer after 2 s") != std::string::npos, r.err);
  }
  // The run, with `primitive` taking 4 s, makes and brings back its file.
  auto slow = [&tb](const std::string& primitive) {
    tb.env["TESTBOX_PAUSE"] = primitive + ":linger";
    auto r = tb.run_tb({"--download", "out.txt", "--download-dir", "results", "--", "sh", "-c", "echo made > out.txt"});
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    CHECK(read_file(tb.workspace() / "results/out.txt") == "made\n");
    CHECK(tb.claims().empty());
  };
  SUBCASE("a slow exec is not") { slow("exec"); }
  SUBCASE("a slow upload is not") { slow("upload"); }
  SUBCASE("a slow download is not") { slow("download"); }
}

TEST_CASE("an in-process plugin that ignores Ctrl-C or --timeout past the grace is named, and corral exits") {
  Box tb("in-process", {{"cancel-grace", "2s"}});
  tb.env["TESTBOX_CRASH"] = "exec:hang";
  SUBCASE("Ctrl-C") {
    auto bg = tb.start({"run", "--provider", "testbox", "--", "true"});
    for (int i = 0; i < 200 && tb.live() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    ::kill(bg.pid, SIGINT);
    CHECK(bg.wait() == 130);
    const std::string err = read_file(bg.err);
    CHECK_MESSAGE(err.find("provider plugin 'testbox' ignored cancellation: 'exec' was still running 2 s after "
                           "Ctrl-C; it runs inside corral's process (isolation: in-process), which cannot stop it, so "
                           "corral exits without cleaning up") != std::string::npos,
                  err);
    const std::string lease = tb.only_lease();
    CHECK(err.find("`corral stop --id " + lease + "` cleans up once the plugin is fixed") != std::string::npos);
    CHECK(err.find("`isolation: process`") != std::string::npos);
  }
  SUBCASE("--timeout") {
    auto r = tb.run_tb({"--timeout", "1s", "--", "true"});
    CHECK(r.exit_code == 124);
    CHECK_MESSAGE(r.err.find("provider plugin 'testbox' ignored cancellation: 'exec' was still running 2 s after the "
                             "command's --timeout (1s); it runs inside corral's process") != std::string::npos,
                  r.err);
  }
  // The claim is kept, listed, and the next corral cleans up once the plugin is fixed.
  const std::string lease = tb.only_lease();
  CHECK(tb.live() == 1);
  tb.env.erase("TESTBOX_CRASH");
  auto stop = tb.run({"stop", "--id", lease});
  CHECK_MESSAGE(stop.exit_code == 0, stop.err);
  CHECK(tb.live() == 0);
  CHECK(tb.claims().empty());
}

TEST_CASE("a plugin that runs the command to its end after Ctrl-C or --timeout still ends the run as stopped") {
  for (const char* mode : {"in-process", "process"}) {
    CAPTURE(mode);
    Box tb(mode);
    tb.env["TESTBOX_FLAW"] = "ignore-cancel";  // exec never asks whether to stop, nor keeps the timeout

    auto bg = tb.start({"run", "--provider", "testbox", "--", "sh", "-c", "echo started; sleep 2; echo finished"});
    wait_for_text(bg.out, "started");
    ::kill(bg.pid, SIGINT);
    CHECK(bg.wait() == 130);
    CHECK(read_file(bg.out) == "started\nfinished\n");  // it did run on: the plugin is what is at fault
    CHECK_MESSAGE(read_file(bg.err).find("the command was interrupted (Ctrl-C), but provider 'testbox' ignored "
                                         "cancellation: it ran the command to its end (exit code 0)") !=
                      std::string::npos,
                  read_file(bg.err));
    // The keep rules still apply: the sandbox is removed and the lease forgotten.
    CHECK(tb.live() == 0);
    CHECK(tb.claims().empty());

    auto r = tb.run_tb({"--timeout", "1s", "--", "sh", "-c", "sleep 3; echo finished"});
    CHECK(r.exit_code == 124);
    CHECK(r.out == "finished\n");
    CHECK_MESSAGE(r.err.find("the command ran past its --timeout (1s), but provider 'testbox' ignored "
                             "cancellation: it ran the command to its end (exit code 0)") != std::string::npos,
                  r.err);
    CHECK(tb.live() == 0);
    CHECK(tb.claims().empty());
  }
}

TEST_CASE("an exception a primitive lets escape into the SDK is reported as a crash naming plugin and primitive") {
  for (const char* mode : {"in-process", "process"}) {
    CAPTURE(mode);
    Box tb(mode);
    tb.env["TESTBOX_CRASH"] = "exec:runtime-error";
    auto r = tb.run_tb({"--", "echo", "never"});
    CHECK(r.exit_code == 70);
    CHECK(r.out.empty());
    CHECK_MESSAGE(r.err.find("provider plugin 'testbox' crashed during 'exec' (an uncaught std::runtime_error: "
                             "testbox: an uncaught runtime error)") != std::string::npos,
                  r.err);
    CHECK(r.err.find("a bug in the plugin: report it to its authors") != std::string::npos);
    // The plugin itself is still sound: cleanup ran as after any failure.
    CHECK(tb.live() == 0);
    CHECK(tb.claims().empty());

    tb.env["TESTBOX_CRASH"] = "open:runtime-error";
    auto o = tb.run_tb({"--", "true"});
    CHECK(o.exit_code == 70);
    CHECK_MESSAGE(o.err.find("provider plugin 'testbox' crashed during 'open' (an uncaught std::runtime_error: "
                             "testbox: an uncaught runtime error)") != std::string::npos,
                  o.err);
  }
}

TEST_CASE("Ctrl-C reaches an isolated plugin, which stops the command and cleans up") {
  Box tb("process");
  auto bg = tb.start({"run", "--provider", "testbox", "--", "sh", "-c", "echo started; sleep 60"});
  wait_for_text(bg.out, "started");
  auto sent = Clock::now();
  ::kill(bg.pid, SIGINT);
  CHECK(bg.wait() == 130);
  CHECK(Clock::now() - sent < std::chrono::seconds(5));
  CHECK(tb.live() == 0);
  CHECK(tb.claims().empty());
}

TEST_CASE("killing corral leaves no helper process behind") {
  Box tb("process");
  auto bg = tb.start({"run", "--provider", "testbox", "--", "sh", "-c", "echo started; exec sleep 60"});
  wait_for_text(bg.out, "started");
  std::vector<pid_t> helpers = children_of(bg.pid);
  REQUIRE(helpers.size() == 1);
  CHECK(read_file("/proc/" + std::to_string(helpers[0]) + "/cmdline").find("corral-plugin-host") != std::string::npos);
  std::vector<pid_t> commands = children_of(helpers[0]);
  REQUIRE(commands.size() == 1);
  ::kill(bg.pid, SIGKILL);
  bg.wait();
  CHECK(gone_within(helpers[0], std::chrono::seconds(5)));
  // testbox runs the command with os::run_process, whose children die with their parent.
  CHECK(gone_within(commands[0], std::chrono::seconds(5)));
  ::kill(-commands[0], SIGKILL);  // when it did not
}

TEST_CASE("a registry entry's isolation must be one corral knows") {
  Box tb("sandboxed");
  auto r = tb.run_tb({"--", "true"});
  CHECK(r.exit_code == 78);
  CHECK_MESSAGE(r.err.find("providers.d/testbox.yaml: the entry for") != std::string::npos, r.err);
  CHECK(r.err.find("isolation 'sandboxed' is not one of: in-process, process") != std::string::npos);
  Box slow("process", {{"call-timeout", "soon"}});
  auto s = slow.run_tb({"--", "true"});
  CHECK(s.exit_code == 78);
  CHECK_MESSAGE(s.err.find("call-timeout") != std::string::npos, s.err);
}
