// `corral mcp` driven by the official MCP TypeScript SDK from npm (tests/mcp/client/:
// package.json and package-lock.json pin it; client.mjs is the client). The SDK is put
// in place by the mcp_client_setup fixture (client/setup.sh, `npm ci`). Skipped, and says
// so, when node is not installed.
#include <doctest/doctest.h>

#include <filesystem>

#include "cli.hpp"
#include "corral/os/process.hpp"

namespace fs = std::filesystem;
using corral::test::CliEnv;

TEST_CASE("the MCP TypeScript SDK's client lists the tools, validates their results and calls them") {
  const std::string node = corral::os::find_program("node");
  if (node.empty()) {
    MESSAGE("node is not installed (scripts/deps.sh installs it): skipped");
    return;
  }
  const fs::path dir = CORRAL_MCP_CLIENT_DIR;
  REQUIRE_MESSAGE(fs::exists(dir / "node_modules" / "@modelcontextprotocol" / "sdk"),
                  "the SDK is not installed in " << dir.string() << ": the mcp_client_setup test installs it");
  CliEnv env;
  env.root().write("work/hello.txt", "hello from the served folder\n");
  corral::os::ProcessSpec spec;
  spec.argv = {node, (dir / "client.mjs").string(), corral::test::corral_binary(), env.workspace().string()};
  spec.env = env.environment();
  spec.cwd = dir.string();
  const corral::os::CapturedProcess p = corral::os::capture_process(spec, 120);
  INFO("stdout: " << p.out);
  INFO("stderr: " << p.err);
  CHECK(p.exit_code == 0);
  CHECK(p.out.find("ok") != std::string::npos);
  // Closing the client ended the server, which stopped the sandbox it had started.
  CHECK(corral::test::eventually([&] { return env.local_sandboxes().empty(); }));
  CHECK(env.claims().empty());
}
