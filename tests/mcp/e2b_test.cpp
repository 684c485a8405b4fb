// `corral mcp` on the E2B stand-in (tests/e2b/standin): the tools on a remote provider,
// where commands, files, fork and pause go over E2B's control plane and envd. Nothing is
// left on the stand-in when the client goes away, and no secret reaches what the server
// printed.
#include <doctest/doctest.h>

#include <string>

#include "e2b_cli.hpp"
#include "mcp_session.hpp"
#include "node_client.hpp"

using namespace corral::test::mcp;

TEST_CASE("the tools on the E2B stand-in: run, start, exec, files, fork, pause, resume, stop") {
  corral::test::E2bCli t;
  McpServer server(t.cli, {"--provider", "e2b", "--max-sandboxes", "3"});
  server.initialize();

  json::Document run = server.call(1, "run", R"({"command":["sh","-c","cat hello.txt; echo e >&2; exit 5"]})");
  CHECK(json::get_int(structured(run), "exitCode") == 5);
  CHECK(json::get_string(structured(run), "stdout") == "hello from the workspace\n");
  CHECK(json::get_string(structured(run), "stderr") == "e\n");
  CHECK(json::get_string(structured(run)["handle"], "provider") == "e2b");
  CHECK(t.alive().empty());

  const std::string lease = lease_of(server.call(2, "sandbox_start"));
  CHECK(t.alive().size() == 1);
  json::Document exec = server.call(3, "sandbox_exec", R"({"lease":")" + lease + R"(","command":["cat","src/main.c"]})");
  CHECK(json::get_string(structured(exec), "stdout") == "int main(void) { return 0; }\n");
  json::Document piped = server.call(4, "sandbox_exec", R"({"lease":")" + lease + R"(","command":["cat"],"stdin":"fed"})");
  CHECK(json::get_string(structured(piped), "stdout") == "fed");

  server.call(5, "sandbox_write_file", R"({"lease":")" + lease + R"(","path":"out/r.txt","content":"remote\n"})");
  json::Document read = server.call(6, "sandbox_read_file", R"({"lease":")" + lease + R"(","path":"out/r.txt"})");
  CHECK(json::get_string(structured(read), "content") == "remote\n");
  json::Document listed = server.call(7, "sandbox_list_files", R"({"lease":")" + lease + R"(","path":"out"})");
  REQUIRE(structured(listed)["entries"].Size() == 1);
  CHECK(json::get_string(structured(listed)["entries"][0], "name") == "r.txt");
  CHECK(json::get_int(structured(listed)["entries"][0], "size") == 7);

  json::Document forked = server.call(8, "sandbox_fork", R"({"lease":")" + lease + R"("})");
  const std::vector<std::string> forks = json::get_strings(structured(forked), "leases");
  REQUIRE(forks.size() == 1);
  CHECK(t.alive().size() == 2);
  json::Document copy = server.call(9, "sandbox_read_file", R"({"lease":")" + forks[0] + R"(","path":"out/r.txt"})");
  CHECK(json::get_string(structured(copy), "content") == "remote\n");

  CHECK(json::get_string(structured(server.call(10, "sandbox_pause", R"({"lease":")" + lease + R"("})")), "state") ==
        "paused");
  json::Document resumed = server.call(11, "sandbox_exec", R"({"lease":")" + lease + R"(","command":["echo","back"]})");
  CHECK(json::get_string(structured(resumed), "stdout") == "back\n");

  server.call(12, "sandbox_stop", R"({"lease":")" + lease + R"("})");
  CHECK(t.alive().size() == 1);
  server.close_stdin();  // the fork is stopped by the server as it ends
  CHECK(server.wait() == 0);
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
  t.seen.push_back(server.stderr_text());
}

TEST_CASE("the official clients of both eras on the E2B stand-in") {
  for (const ClientEra& client : kClientEras) {
    CAPTURE(client.era);
    corral::test::E2bCli t;
    std::string err;
    if (!drive_provider(client, "e2b", t.cli.workspace().string(), t.cli.environment(), &err)) continue;
    // The client went away in the middle of a call: nothing is left on the stand-in.
    CHECK(corral::test::eventually([&] { return t.alive().empty(); }));
    CHECK(t.cli.claims().empty());
    t.seen.push_back(err);
  }
}
