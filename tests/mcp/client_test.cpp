// `corral mcp` driven from node with packages from npm (tests/mcp/client/: package.json
// and package-lock.json pin them). Built once per script: mcp_client runs client.mjs
// (@modelcontextprotocol/sdk 1.x, the 2025-11-25 lifecycle), mcp_client_modern runs
// client_modern.mjs (@modelcontextprotocol/client 2.x, the 2026-07-28 era), mcp_schema runs
// schema_check.mjs (every message against the specification's schema.json of both eras,
// given by CORRAL_MCP_SPEC_DIR). The packages are put in place by the mcp_client_setup
// fixture (client/setup.sh, `npm ci`). Skipped, and says so, when node is not installed or
// older than the script needs, or the specification is not there.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "cli.hpp"
#include "node_client.hpp"

namespace fs = std::filesystem;
using corral::test::CliEnv;

TEST_CASE("an official MCP client lists the tools, validates their results and calls them") {
  if (const auto missing = corral::test::mcp::node_missing(CORRAL_MCP_CLIENT_MIN_NODE)) {
    MESSAGE(*missing << " (" CORRAL_MCP_CLIENT_SCRIPT "): skipped");
    return;
  }
  const std::string spec_dir = CORRAL_MCP_SPEC_DIR;
  if (std::string(CORRAL_MCP_CLIENT_SCRIPT) == "schema_check.mjs" &&
      !fs::exists(fs::path(spec_dir) / "2026-07-28" / "schema.json")) {
    MESSAGE("the MCP specification is not installed (configure with -DCORRAL_MCP_SPEC_DIR=DIR holding "
            "2025-11-25/schema.json and 2026-07-28/schema.json): skipped");
    return;
  }
  CliEnv env;
  env.root().write("work/hello.txt", "hello from the served folder\n");
  const corral::os::CapturedProcess p = corral::test::mcp::run_node_client(
      CORRAL_MCP_CLIENT_SCRIPT, {corral::test::corral_binary(), env.workspace().string(), spec_dir}, env.environment());
  INFO("stdout: " << p.out);
  INFO("stderr: " << p.err);
  CHECK(p.exit_code == 0);
  CHECK(p.out.find("ok") != std::string::npos);
  // Closing the client ended the server, which stopped the sandboxes it had started.
  CHECK(corral::test::eventually([&] { return env.local_sandboxes().empty(); }));
  CHECK(env.claims().empty());
}
