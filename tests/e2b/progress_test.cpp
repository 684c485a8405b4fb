// --progress json against the E2B stand-in over real HTTP: the upload's bytes come from
// the plugin (the SDK's HTTP client reports them through the ABI's transfer callback), in
// the plugin's process and across the isolation helper's channel alike.
#include <doctest/doctest.h>

#include "cli.hpp"
#include "progress_events.hpp"
#include "server.hpp"

using namespace corral::test;

TEST_CASE("--progress json with E2B: pack and upload count their bytes to the total, the upload from the plugin") {
  corral::e2b::standin::StandIn server;
  CliEnv cli;
  cli.env["E2B_API_KEY"] = server.api_key();
  cli.env["E2B_API_URL"] = server.api_url();
  cli.env["E2B_SANDBOX_URL"] = server.sandbox_url();
  cli.root().write("work/data.bin", random_bytes(4 << 20));
  cli.root().write("work/small.txt", "small\n");
  SUBCASE("in-process") { cli.add_registry("e2b", {CORRAL_E2B_PLUGIN}, {{"isolation", "in-process"}}); }
  SUBCASE("isolation: process") { cli.add_registry("e2b", {CORRAL_E2B_PLUGIN}, {{"isolation", "process"}}); }
  CliResult r = cli.run({"run", "--provider", "e2b", "--progress", "json", "--", "sh", "-c", "echo hi >&2"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  progress::Run run = progress::parse(r.err);
  CHECK(run.other == std::vector<std::string>{"hi"});
  progress::check_upload_run(run);
  // corral itself only says where an upload starts and that it ended: a count on the way
  // came from the plugin's HTTP client.
  CHECK_MESSAGE(run.steps("upload") >= 1, r.err);
  CHECK(server.sandbox_ids().empty());
}
