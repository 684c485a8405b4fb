// The stand-in is only as good as its fidelity: it accepts the documented flags of
// specs/docker-sbx/*.yaml and rejects anything else, like the real tool.
#include <doctest/doctest.h>

#include <signal.h>

#include <filesystem>

#include "standin_fixture.hpp"

using sbx_test::StandIn;

TEST_CASE("stand-in: every documented flag is accepted") {
  StandIn sbx;
  corral::test::TempDir ws, docs;
  auto r = sbx.run({"-D", "create", "--clone", "--cpus", "2", "--kit", "k1", "--kit", "k2", "--mcp", "all", "-m",
                    "1g", "--name", "box.1+a", "-q", "-t", "img:1", "shell", ws.str(), docs.str() + ":ro", "--debug"});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(sbx.sandboxes() == std::vector<std::string>{"box.1+a"});
  CHECK(sbx.run({"create", "--memory", "512m", "--template", "x", "--quiet", "shell", ws.str(), "--name", "b2"})
            .exit_code == 0);
  CHECK(sbx.run({"ls", "--json", "-q", "-D"}).exit_code == 0);
  CHECK(sbx.run({"ls", "--quiet"}).out == "b2\nbox.1+a\n");
  CHECK(sbx.run({"exec", "-d", "-e", "A=1", "--env", "B=2", "-i", "--privileged", "-u", "root", "--user", "0",
                 "--detach-keys", "ctrl-x", "-w", "/", "--workdir", "/", "-D", "box.1+a", "true"})
            .exit_code == 0);
  CHECK(sbx.run({"cp", "-L", ws.str(), "box.1+a:" + docs.str()}).exit_code == 0);
  CHECK(sbx.run({"stop", "box.1+a", "b2", "--debug"}).exit_code == 0);
  CHECK(sbx.run({"rm", "--force", "box.1+a"}).exit_code == 0);
  CHECK(sbx.run({"rm", "--all", "-f"}).exit_code == 0);
  CHECK(sbx.sandboxes().empty());
  CHECK(sbx.run({"version"}).exit_code == 0);
  CHECK(sbx.run({"diagnose"}).exit_code == 0);
  CHECK(sbx.run({"ls", "-h"}).exit_code == 0);
}

TEST_CASE("stand-in: undocumented flags and malformed calls are rejected") {
  StandIn sbx;
  corral::test::TempDir ws;
  for (std::vector<std::string> args : {
           std::vector<std::string>{"create", "--bogus", "shell", ws.str()},
           {"create", "shell", ws.str(), "--label", "a=b"},
           {"create", "--name", "x", "shell"},                 // PATH is required
           {"create", "--name", "x", ws.str()},                // agent missing
           {"create", "--name", "bad name", "shell", ws.str()},
           {"create", "--name", "x", "shell", "/definitely/not/here"},
           {"create", "--cpus", "many", "shell", ws.str()},
           {"ls", "--all"},
           {"ls", "--format", "json"},
           {"stop"},
           {"stop", "-f", "x"},
           {"rm", "--json", "x"},
           {"rm", "x"},  // needs --force without a terminal
           {"exec", "--bogus", "x", "true"},
           {"exec", "x"},
           {"ports", "x"},
           {"version", "--short"},
           {}}) {
    CAPTURE(args);
    auto r = sbx.run(args);
    CHECK(r.exit_code != 0);
    CHECK(!r.err.empty());
  }
  CHECK(sbx.sandboxes().empty());
}

TEST_CASE("stand-in: flags after SANDBOX belong to the command, as with docker exec") {
  StandIn sbx;
  corral::test::TempDir ws;
  REQUIRE(sbx.run({"create", "--name", "b", "shell", ws.str()}).exit_code == 0);
  auto r = sbx.run({"exec", "b", "echo", "-w", "--bogus"});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "-w --bogus\n");
  auto env = sbx.run({"exec", "-e", "A=1", "-e", "B=2", "b", "sh", "-c", "echo $A$B"});
  CHECK(env.out == "12\n");
  auto missing = sbx.run({"exec", "b", "no-such-program-xyz"});
  CHECK(missing.exit_code == 127);
  CHECK(sbx.run({"exec", "-w", "/no/such/dir", "b", "true"}).exit_code == 126);
  CHECK(sbx.run({"exec", "nobox", "true"}).exit_code != 0);
}

TEST_CASE("stand-in: stop keeps a sandbox stopped with its files, ends its commands; exec starts it first") {
  StandIn sbx;
  corral::test::TempDir ws;
  REQUIRE(sbx.run({"create", "--name", "b", "shell", ws.str()}).exit_code == 0);
  REQUIRE(sbx.run({"exec", "b", "sh", "-c", "echo kept > " + ws.str() + "/kept.txt"}).exit_code == 0);
  REQUIRE(sbx.run({"exec", "-d", "b", "sleep", "60"}).exit_code == 0);
  std::vector<int> running = sbx.exec_pids("b");
  REQUIRE(running.size() == 1);

  auto stop = sbx.run({"stop", "b"});
  CHECK_MESSAGE(stop.exit_code == 0, stop.err);
  CHECK(sbx.status("b") == "stopped");  // "Stopped sandboxes retain their state"
  CHECK(sbx.sandboxes() == std::vector<std::string>{"b"});
  CHECK(sbx_test::process_ends(running[0]));
  CHECK(sbx.run({"stop", "b"}).exit_code == 0);  // stopping a stopped sandbox is no error
  CHECK(sbx.run({"ls", "--json"}).out.find("\"stopped\"") != std::string::npos);

  auto again = sbx.run({"exec", "b", "cat", "kept.txt"});  // "If the sandbox is stopped, it is started first"
  CHECK(again.out == "kept\n");
  CHECK(sbx.status("b") == "running");

  auto missing = sbx.run({"stop", "b", "nobox"});
  CHECK(missing.exit_code != 0);
  CHECK(missing.err.find("nobox") != std::string::npos);
  CHECK(sbx.status("b") == "stopped");  // the names that exist are still stopped
}

TEST_CASE("stand-in: exec -i passes the client's stdin on to its end; without -i the command's is empty; -t needs a terminal") {
  StandIn sbx;
  corral::test::TempDir ws;
  REQUIRE(sbx.run({"create", "--name", "b", "shell", ws.str()}).exit_code == 0);
  const std::string input = ws.write("input.txt", "a\nb\n").string();
  auto piped = sbx.run_reading({"exec", "-i", "b", "cat"}, input);
  CHECK_MESSAGE(piped.exit_code == 0, piped.err);
  CHECK(piped.out == "a\nb\n");
  auto closed = sbx.run_reading({"exec", "b", "wc", "-c"}, input);
  CHECK(closed.out == "0\n");
  auto no_terminal = sbx.run_reading({"exec", "-it", "b", "true"}, input);
  CHECK(no_terminal.exit_code != 0);
  CHECK(no_terminal.err.find("the input device is not a TTY") != std::string::npos);
}

TEST_CASE("stand-in: a command starts with every signal at its default action, whatever the client's") {
  StandIn sbx;
  corral::test::TempDir ws;
  REQUIRE(sbx.run({"create", "--name", "b", "shell", ws.str()}).exit_code == 0);
  // A client started with SIGHUP ignored (nohup) hands that on to what it starts, not to the command.
  struct sigaction ignore {}, before {};
  ignore.sa_handler = SIG_IGN;
  REQUIRE(::sigaction(SIGHUP, &ignore, &before) == 0);
  auto r = sbx.run({"exec", "b", "sh", "-c", "grep SigIgn /proc/$$/status"});
  ::sigaction(SIGHUP, &before, nullptr);
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out == "SigIgn:\t0000000000000000\n");
}
