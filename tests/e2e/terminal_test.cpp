// `run -t` and `corral shell` on real bubblewrap, driven from a terminal as a user types:
// the command has a terminal of its own sized as the user's, every key reaches it (Ctrl-C
// as a key, not as corral's stop), a resize reaches it as SIGWINCH, and the user's
// terminal is as it was afterwards.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "cli.hpp"

using namespace corral::test;

TEST_CASE("run -t gives the command a terminal sized as the user's, and puts the user's back") {
  for (bool isolated : {false, true}) {
  CAPTURE(isolated);
  CliEnv env;
  if (isolated) {
    // local in its helper process: the size, keys and output cross the helper's channel.
    const auto library = std::filesystem::path(corral_binary()).parent_path().parent_path() /
                         "lib/corral/plugins/libcorral-local.so";
    env.add_registry("local-isolated", {library.string()}, {{"isolation", "process"}});
  }
  TerminalModes modes;
  // The user's terminal is 33 rows by 100 columns before corral starts: not a default.
  auto r = env.run_on_terminal(
      {"run", "-t", "--", "sh", "-c",
       "sleep 0.3; test -t 0 && test -t 1 && test -t 2 && echo on-a-terminal; stty size; echo \"TERM=$TERM\"; "
       "printf 'name? '; read name; echo \"hello-$name\"; exit 5"},
      100, {{"", "", 33, 100}, {"name? ", "corral\r"}}, &modes);
  CHECK_MESSAGE(r.exit_code == 5, r.out);
  CHECK(r.out.find("on-a-terminal") != std::string::npos);
  CHECK(r.out.find("33 100") != std::string::npos);
  CHECK(r.out.find("TERM=") != std::string::npos);
  CHECK(r.out.find("TERM=\r") == std::string::npos);  // the user's TERM, never empty
  CHECK(r.out.find("hello-corral") != std::string::npos);
  CHECK(modes.before_canonical);
  CHECK(modes.before_echo);
  CHECK(modes.after_canonical);  // raw only while the command ran
  CHECK(modes.after_echo);
  CHECK(env.local_sandboxes().empty());
  }
}

TEST_CASE("with -t, Ctrl-C is a key for the command and a resize reaches it") {
  CliEnv env;
  auto r = env.run_on_terminal(
      {"run", "-it", "--", "sh", "-c",
       "trap 'stty size; echo resized' WINCH; trap 'echo caught-int; exit 7' INT; echo ready; "
       "while :; do sleep 0.1; done"},
      80, {{"ready", "", 30, 120}, {"resized", "\x03"}});
  CHECK_MESSAGE(r.exit_code == 7, r.out);  // the command's own end, not corral's 130
  CHECK(r.out.find("30 120") != std::string::npos);
  CHECK(r.out.find("caught-int") != std::string::npos);
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("corral shell opens a login shell in a new sandbox, and in a kept one with --id") {
  CliEnv env;
  auto fresh = env.run_on_terminal({"shell"}, 80, {{"", "echo marker-$((6*7))\r"}, {"marker-42", "exit 3\r"}});
  CHECK_MESSAGE(fresh.exit_code == 3, fresh.out);
  CHECK(env.local_sandboxes().empty());
  REQUIRE(env.run({"run", "--keep", "--", "sh", "-c", "echo kept > note.txt"}).exit_code == 0);
  const std::string lease = env.only_lease();
  auto kept = env.run_on_terminal({"shell", "--id", lease}, 80,
                                  {{"", "cat note.txt; echo done-$((1+1))\r"}, {"done-2", "exit\r"}});
  CHECK_MESSAGE(kept.exit_code == 0, kept.out);
  CHECK(kept.out.find("kept\r\n") != std::string::npos);
  CHECK(env.local_sandboxes().size() == 1);  // a kept lease stays
  CHECK(env.run({"stop", "--id", lease}).exit_code == 0);
}

TEST_CASE("-t is refused without a terminal, with --no-stdin, with --shards and on a provider without exec-tty") {
  CliEnv env;
  auto piped = env.run({"run", "-t", "--", "true"});
  CHECK(piped.exit_code == 64);
  CHECK(piped.err.find("-t gives the command a terminal, but corral's stdin is not one") != std::string::npos);
  auto shell = env.run({"shell"});
  CHECK(shell.exit_code == 64);
  auto closed = env.run_on_terminal({"run", "-t", "--no-stdin", "--", "true"}, 80);
  CHECK(closed.exit_code == 64);
  CHECK(closed.out.find("-t and --no-stdin do not go together") != std::string::npos);
  auto shards = env.run_on_terminal({"run", "-t", "--shards", "2", "--", "true"}, 80);
  CHECK(shards.exit_code == 64);
  env.add_registry("testbox", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so"});
  env.env["TESTBOX_DIR"] = env.root().path().string();
  auto testbox = env.run_on_terminal({"run", "--provider", "testbox", "-t", "--", "true"}, 80);
  CHECK(testbox.exit_code == 64);
  CHECK(testbox.out.find("-t needs the 'exec-stdin' feature, which provider 'testbox' does not have") != std::string::npos);
  CHECK(env.local_sandboxes().empty());
}
