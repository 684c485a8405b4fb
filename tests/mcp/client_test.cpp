// `corral mcp` driven from node with packages from npm (tests/mcp/client/: package.json
// and package-lock.json pin them). Built once per script: mcp_client runs client.mjs
// (@modelcontextprotocol/sdk 1.x, the 2025-11-25 lifecycle), mcp_client_modern runs
// client_modern.mjs (@modelcontextprotocol/client 2.x, the 2026-07-28 era), mcp_schema runs
// schema_check.mjs (every message against the specification's schema.json of both eras,
// given by CORRAL_MCP_SPEC_DIR). The packages are put in place by the mcp_client_setup
// fixture (client/setup.sh, `npm ci`). Skipped, and says so, when node is not installed or
// older than the script needs, or the specification is not there.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "cli.hpp"
#include "corral/os/process.hpp"

namespace fs = std::filesystem;
using corral::test::CliEnv;

namespace {

// node's major version, or 0 when it cannot say.
int node_major(const std::string& node) {
  corral::os::ProcessSpec spec;
  spec.argv = {node, "-p", "process.versions.node"};
  const corral::os::CapturedProcess p = corral::os::capture_process(spec, 30);
  return p.exit_code == 0 ? std::atoi(p.out.c_str()) : 0;
}

}  // namespace

TEST_CASE("an official MCP client lists the tools, validates their results and calls them") {
  const std::string node = corral::os::find_program("node");
  if (node.empty()) {
    MESSAGE("node is not installed (scripts/deps.sh installs it): skipped");
    return;
  }
  if (const int major = node_major(node); major < CORRAL_MCP_CLIENT_MIN_NODE) {
    MESSAGE("node is not installed in version " << CORRAL_MCP_CLIENT_MIN_NODE << " or newer (this is " << major
                                                << "), which " CORRAL_MCP_CLIENT_SCRIPT " needs: skipped");
    return;
  }
  const std::string spec_dir = CORRAL_MCP_SPEC_DIR;
  if (std::string(CORRAL_MCP_CLIENT_SCRIPT) == "schema_check.mjs" &&
      !fs::exists(fs::path(spec_dir) / "2026-07-28" / "schema.json")) {
    MESSAGE("the MCP specification is not installed (configure with -DCORRAL_MCP_SPEC_DIR=DIR holding "
            "2025-11-25/schema.json and 2026-07-28/schema.json): skipped");
    return;
  }
  const fs::path dir = CORRAL_MCP_CLIENT_DIR;
  REQUIRE_MESSAGE(fs::exists(dir / "node_modules" / "@modelcontextprotocol"),
                  "the MCP clients are not installed in " << dir.string() << ": the mcp_client_setup test installs them");
  CliEnv env;
  env.root().write("work/hello.txt", "hello from the served folder\n");
  corral::os::ProcessSpec spec;
  spec.argv = {node, (dir / CORRAL_MCP_CLIENT_SCRIPT).string(), corral::test::corral_binary(), env.workspace().string(),
               spec_dir};
  spec.env = env.environment();
  spec.cwd = dir.string();
  const corral::os::CapturedProcess p = corral::os::capture_process(spec, 120);
  INFO("stdout: " << p.out);
  INFO("stderr: " << p.err);
  CHECK(p.exit_code == 0);
  CHECK(p.out.find("ok") != std::string::npos);
  // Closing the client ended the server, which stopped the sandboxes it had started.
  CHECK(corral::test::eventually([&] { return env.local_sandboxes().empty(); }));
  CHECK(env.claims().empty());
}
