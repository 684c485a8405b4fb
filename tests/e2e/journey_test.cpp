// A user's journey on the local default, on real bubblewrap, as a new user takes it from
// the README: a small C and Python project with a Makefile and a JUnit report, built and
// tested in a kept sandbox, fed on stdin, run on a terminal, interrupted by Ctrl-C whose
// trap writes the report that is then downloaded, with a home cache that survives, tracked
// files the command breaks restored by the next run, a run from the wrong folder refused,
// and the messages a typo gets.
#include <doctest/doctest.h>
#include <signal.h>

#include <filesystem>
#include <string>

#include "cli.hpp"
#include "corral/json.hpp"

using namespace corral::test;
namespace fs = std::filesystem;

namespace {

// The project: `make test` builds ./shout from shout.c and runs test_shout.py, which
// feeds it a line and writes report.xml (JUnit) with the outcome.
void write_project(const CliEnv& env) {
  env.root().write("work/Makefile",
                   "shout: shout.c\n\tcc -O0 -o shout shout.c\n"
                   "test: shout\n\tpython3 test_shout.py\n");
  env.root().write("work/shout.c",
                   "#include <ctype.h>\n#include <stdio.h>\n"
                   "int main(void) { int c; while ((c = getchar()) != EOF) putchar(toupper(c)); return 0; }\n");
  env.root().write("work/test_shout.py",
                   "import subprocess, sys\n"
                   "outcome = sys.argv[1] if len(sys.argv) > 1 else None\n"
                   "if outcome is None:\n"
                   "    got = subprocess.run(['./shout'], input=b'quiet', capture_output=True).stdout\n"
                   "    outcome = 'passed' if got == b'QUIET' else 'failed'\n"
                   "with open('report.xml', 'w') as f:\n"
                   "    f.write('<testsuite name=\"shout\" tests=\"1\"><testcase name=\"upper\" status=\"%s\"/>"
                   "</testsuite>\\n' % outcome)\n"
                   "print('shout: ' + outcome)\n"
                   "sys.exit(0 if outcome == 'passed' else 1)\n");
}

corral::json::Document handle(const fs::path& file) { return corral::json::parse(read_file(file), "handle"); }

}  // namespace

TEST_CASE("a project's journey: built and tested in a kept sandbox, fed, interrupted, kept and synced exactly") {
  CliEnv env;
  write_project(env);
  const fs::path h = env.root().path() / "h.json";

  // Built and tested; its home cache and /tmp are written on the way.
  auto first = env.run({"run", "--keep", "--lease-output", h.string(), "--download", "report.xml", "--", "sh", "-c",
                        "make test && mkdir -p ~/.cache/shout && echo cached > ~/.cache/shout/token && "
                        "echo scratch > /tmp/scratch"});
  REQUIRE_MESSAGE(first.exit_code == 0, first.err);
  CHECK(first.out.find("shout: passed") != std::string::npos);
  const std::string lease = handle(h)["leaseId"].GetString();
  CHECK(read_file(env.workspace() / ".corral/runs" / lease / "report.xml").find("status=\"passed\"") !=
        std::string::npos);

  // Fed on stdin: the binary the first run built is still there, and reads the pipe to its end.
  auto fed = env.run_with_input({"run", "--id", lease, "--", "./shout"}, "hello\nworld\n");
  CHECK_MESSAGE(fed.exit_code == 0, fed.err);
  CHECK(fed.out == "HELLO\nWORLD\n");

  // The home cache and /tmp survive from one run to the next, as on a remote provider.
  auto kept = env.run({"run", "--id", lease, "--", "sh", "-c", "cat ~/.cache/shout/token /tmp/scratch"});
  CHECK_MESSAGE(kept.exit_code == 0, kept.err);
  CHECK(kept.out == "cached\nscratch\n");

  // A command that breaks tracked files there: the next run puts them back as they are
  // here, and keeps what the sandbox made.
  auto breaks = env.run({"run", "--id", lease, "--", "sh", "-c",
                         "echo broken > shout.c && rm Makefile && echo made > made.txt"});
  CHECK_MESSAGE(breaks.exit_code == 0, breaks.err);
  auto restored = env.run({"run", "--id", lease, "-v", "--", "sh", "-c",
                           "head -n 1 shout.c; test -f Makefile && echo has-makefile; cat made.txt"});
  CHECK_MESSAGE(restored.exit_code == 0, restored.err);
  CHECK(restored.out == "#include <ctype.h>\nhas-makefile\nmade\n");
  CHECK(restored.err.find("a command ran in the sandbox since the last sync") != std::string::npos);

  // On a terminal: the command sees one.
  auto tty = env.run_on_terminal({"run", "--id", lease, "-t", "--", "sh", "-c", "test -t 0 && echo on-a-tty"}, 80);
  CHECK_MESSAGE(tty.exit_code == 0, tty.out);
  CHECK(tty.out.find("on-a-tty") != std::string::npos);

  // Interrupted: the suite's trap writes its report, which is downloaded all the same.
  const fs::path h2 = env.root().path() / "h2.json";
  auto bg = env.start({"run", "--id", lease, "--lease-output", h2.string(), "--download", "report.xml", "--", "sh",
                       "-c",
                       "trap 'python3 test_shout.py interrupted; exit 3' INT; echo started; "
                       "while :; do sleep 0.1; done"});
  REQUIRE(eventually([&] { return read_file(bg.out).find("started") != std::string::npos; }));
  ::kill(bg.pid, SIGINT);
  CHECK(bg.wait() == 130);
  CHECK(read_file(bg.out).find("shout: interrupted") != std::string::npos);
  CHECK(handle(h2)["exitCode"].GetInt() == 3);
  CHECK(read_file(env.workspace() / ".corral/runs" / lease / "report.xml").find("status=\"interrupted\"") !=
        std::string::npos);

  // From another working tree: refused, naming both, and nothing of this tree is touched.
  env.root().write("other/Makefile", "all:\n\ttrue\n");
  auto elsewhere = env.run({"run", "--id", lease, "--", "true"}, (env.root().path() / "other").string());
  CHECK(elsewhere.exit_code == 64);
  CHECK(elsewhere.err.find(env.workspace().string()) != std::string::npos);
  CHECK(elsewhere.err.find((env.root().path() / "other").string()) != std::string::npos);
  CHECK(elsewhere.err.find("--switch-tree") != std::string::npos);

  // Typos get a way forward.
  auto verb = env.run({"rn", "--", "true"});
  CHECK(verb.exit_code == 64);
  CHECK(verb.err.find("did you mean 'run'?") != std::string::npos);
  auto flag = env.run({"run", "--kep", "--", "true"});
  CHECK(flag.exit_code == 64);
  CHECK(flag.err.find("did you mean --keep?") != std::string::npos);
  env.root().write("work/corral.yaml", "netwrk: none\n");
  auto config = env.run({"run", "--id", lease, "--", "true"});
  CHECK(config.exit_code == 78);
  CHECK(config.err.find("did you mean 'network'?") != std::string::npos);
  fs::remove(env.workspace() / "corral.yaml");

  CHECK(env.run({"stop", "--id", lease}).exit_code == 0);
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("a sub-second --timeout stops the command to the millisecond") {
  CliEnv env;
  // The plugin is given 2 s (whole seconds cross the ABI); corral stops it at 1.2 s, before
  // the command would print at 1.8 s.
  auto r = env.run({"run", "--timeout", "1200ms", "--", "sh", "-c", "sleep 1.8; echo late"});
  CHECK(r.exit_code == 124);
  CHECK(r.out.find("late") == std::string::npos);
  CHECK_MESSAGE(r.err.find("the command ran past its --timeout (1.2s)\n") != std::string::npos, r.err);
  CHECK(r.err.find("raise --timeout if it needs longer") != std::string::npos);
  CHECK(r.err.find("then failed") == std::string::npos);
  auto bad = env.run({"run", "--timeout", "1.5ms", "--", "true"});
  CHECK(bad.exit_code == 64);
  CHECK(bad.err.find("invalid duration") != std::string::npos);
  CHECK(env.local_sandboxes().empty());
}
