// Test support for `corral mcp` driven by the official TypeScript clients: node found and
// checked, and a client script of tests/mcp/client/ run from the folder where the
// mcp_client_setup fixture installed the pinned packages (CORRAL_MCP_CLIENT_DIR).
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "corral/os/process.hpp"

namespace corral::test::mcp {

// Why a client script needing node `min_major` cannot run here (node missing or older),
// worded for a skipped test's message; nullopt when it can.
inline std::optional<std::string> node_missing(int min_major) {
  const std::string node = corral::os::find_program("node");
  if (node.empty()) return "node is not installed (scripts/deps.sh installs it)";
  corral::os::ProcessSpec spec;
  spec.argv = {node, "-p", "process.versions.node"};
  const corral::os::CapturedProcess p = corral::os::capture_process(spec, 30);
  const int major = p.exit_code == 0 ? std::atoi(p.out.c_str()) : 0;
  if (major < min_major)
    return "node is not installed in version " + std::to_string(min_major) + " or newer (this is " +
           std::to_string(major) + "), which the client needs";
  return std::nullopt;
}

// Runs `node SCRIPT ARGS...` from the installed clients' folder with environment `env`,
// for at most `timeout_seconds`. Fails the test when the packages are not installed.
inline corral::os::CapturedProcess run_node_client(const std::string& script, const std::vector<std::string>& args,
                                                   const std::vector<std::string>& env, int timeout_seconds = 120) {
  const std::filesystem::path dir = CORRAL_MCP_CLIENT_DIR;
  REQUIRE_MESSAGE(std::filesystem::exists(dir / "node_modules" / "@modelcontextprotocol"),
                  "the MCP clients are not installed in " << dir.string()
                                                          << ": the mcp_client_setup test installs them");
  corral::os::ProcessSpec spec;
  spec.argv = {corral::os::find_program("node"), (dir / script).string()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = env;
  spec.cwd = dir.string();
  return corral::os::capture_process(spec, timeout_seconds);
}

// An official client of one protocol era, and the node version it needs.
struct ClientEra {
  const char* era;  // the revision client/provider.mjs is told to speak
  int min_node;
};
inline constexpr ClientEra kClientEras[] = {{"2025-11-25", 18}, {"2026-07-28", 20}};

// Runs client/provider.mjs of `client`'s era against `corral mcp --provider provider` in
// `workspace` with environment `env`, and checks it got through ("ok", exit 0). False,
// having said why, when this machine's node cannot run that client.
inline bool drive_provider(const ClientEra& client, const std::string& provider, const std::string& workspace,
                           const std::vector<std::string>& env, std::string* err = nullptr) {
  if (const auto missing = node_missing(client.min_node)) {
    MESSAGE(*missing << ": skipped");
    return false;
  }
  const corral::os::CapturedProcess p =
      run_node_client("provider.mjs", {client.era, corral::test::corral_binary(), workspace, provider}, env);
  INFO("stdout: " << p.out);
  INFO("stderr: " << p.err);
  CHECK(p.exit_code == 0);
  CHECK(p.out.find("ok") != std::string::npos);
  if (err) *err = p.err;
  return true;
}

}  // namespace corral::test::mcp
