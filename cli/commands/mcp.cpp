// `corral mcp`: every provider as tools for agents, an MCP server on stdio (mcp/server.hpp).
// The flags are the user's limits, which the agent's tool calls may narrow, never widen.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <memory>
#include <system_error>

#include "base/sizes.hpp"
#include "commands/commands.hpp"
#include "corral/errors.hpp"
#include "mcp/server.hpp"
#include "options.hpp"
#include "terminal.hpp"
#include "workspace/workspace.hpp"

#ifndef CORRAL_VERSION
#define CORRAL_VERSION "0.0.0"
#endif

namespace corral::cli {
namespace {

struct McpOptions {
  std::string provider;
  std::vector<std::string> allowed;
  std::string root;
  std::string network;
  std::vector<std::string> env;
  int max_sandboxes = 4;
  std::string max_output = "64K";
  std::string lifetime = "1h";
  bool allow_keep = false;
  std::vector<std::string> adopt;
};

Error usage(std::string message, std::string hint = {}) {
  return Error(ErrorCode::invalid_argument, std::move(message), std::move(hint));
}

// The served root: --root, else the current folder's working tree (its git checkout's top
// level, else the folder); canonical, and a folder.
std::filesystem::path served_root(const std::string& root) {
  std::error_code ec;
  const std::filesystem::path asked = root.empty() ? std::filesystem::current_path() : std::filesystem::path(root);
  std::filesystem::path canonical = std::filesystem::canonical(asked, ec);
  if (ec || !std::filesystem::is_directory(canonical, ec))
    throw usage(fmt::format("--root {}: not a folder", asked.string()), "give the folder the sandboxes are made of");
  // A client that starts servers in / (some desktop apps do) would have every sandbox
  // made of the whole machine: that takes an explicit --root /.
  if (root.empty() && canonical == canonical.root_path())
    throw usage("corral mcp was started in /, and without --root it would serve that",
                "give the project folder with --root DIR in the client's configuration");
  // A sandbox holds the whole working tree of its folder (a git checkout's top level), so a
  // root below a checkout's top would let the tools see what lies above it.
  const std::filesystem::path top = std::filesystem::weakly_canonical(find_workspace_root(canonical));
  if (root.empty()) return top;  // the current folder's working tree, as `corral run` would sync
  if (top != canonical)
    throw usage(fmt::format("--root {} is inside the git checkout {}, and a sandbox holds a checkout's whole tree",
                            canonical.string(), top.string()),
                fmt::format("serve the checkout with --root {} (tools may still choose a folder below it with cwd)",
                            top.string()));
  return canonical;
}

// Moves `fd` (stdin or stdout) to a private descriptor closed on exec and puts `replacement`
// where it was, so no command, helper or plugin corral starts can read the protocol's
// input or write into its output.
int take_descriptor(int fd, int replacement) {
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (moved < 0) throw std::system_error(errno, std::generic_category(), "fcntl");
  if (::dup2(replacement, fd) < 0) throw std::system_error(errno, std::generic_category(), "dup2");
  return moved;
}

mcp::Limits limits_of(Context& ctx, const McpOptions& o) {
  mcp::Limits limits;
  limits.provider = o.provider;
  limits.allowed = o.allowed;
  limits.root = served_root(o.root);
  if (!o.network.empty()) limits.network = parse_network_policy(o.network);
  for (const std::string& name : o.env)
    if (name.find('=') != std::string::npos)
      throw usage(fmt::format("--env {}: corral mcp takes variable names, whose values stay in this environment", name),
                  "export the variable, then give its name: --env NAME");
  limits.env = o.env;
  if (o.max_sandboxes < 1) throw usage("--max-sandboxes must be at least 1");
  limits.max_sandboxes = o.max_sandboxes;
  limits.max_output = parse_size(o.max_output);
  if (limits.max_output < 256) throw usage(fmt::format("--max-output {} is too small", o.max_output), "give at least 256 bytes, e.g. 64K");
  limits.lifetime_seconds = parse_duration(o.lifetime);
  if (limits.lifetime_seconds < 1) throw usage("--lifetime must be at least 1s");
  limits.allow_keep = o.allow_keep;
  limits.adopt = o.adopt;
  // The providers named: refused now, when the user is there to read why, not at the first call.
  (void)mcp::allowed_providers(limits, ctx.providers);
  // A provider's secret is never forwarded, and a variable must be set: refused before
  // anything starts rather than at every call.
  (void)ctx.providers.forwarded_env(limits.env);
  for (const std::string& lease : limits.adopt) (void)ctx.claims.resolve(lease);
  return limits;
}

int mcp_command(Context& ctx, const McpOptions& o) {
  mcp::ServerOptions options;
  options.limits = limits_of(ctx, o);
  options.provider_flags = ctx.provider_flags;
  options.version = CORRAL_VERSION;
  options.stop_requested = stop_requested;
  const int in = take_descriptor(0, ::open("/dev/null", O_RDONLY | O_CLOEXEC));
  const int out = take_descriptor(1, 2);
  ctx.ui.note(fmt::format("serving MCP on stdio: sandboxes of {}; end with EOF or SIGTERM", options.limits.root.string()));
  mcp::Server server(ctx.session, std::move(options), in, out, 2);
  return server.serve();
}

Runner define(CLI::App& app) {
  auto o = std::make_shared<McpOptions>();
  add_provider_option(app, o->provider)->description("The default provider of the tools (default: CORRAL_PROVIDER, corral.yaml, local)");
  app.add_option("--allow-provider", o->allowed,
                 "Let the tools also use this provider (repeatable, or comma-separated)")
      ->type_name(kProviderValue)
      ->delimiter(',')
      ->allow_extra_args(false);
  app.add_option("--root", o->root, "The folder sandboxes are made of; tools may name folders below it (default: the current folder's "
                 "git checkout, else the folder)")
      ->type_name("DIR");
  app.add_option("--network", o->network,
                 "The widest network a sandbox may get: open, none, or allow:HOST[,HOST...]; tools may ask for "
                 "narrower (default: the configured one)")
      ->type_name(kNetworkValue);
  app.add_option("--env", o->env, "Let the tools forward this environment variable by name (repeatable; secrets never)")
      ->type_name("NAME")
      ->allow_extra_args(false);
  app.add_option("--max-sandboxes", o->max_sandboxes,
                 "Live sandboxes this server may have at once: runs, started ones and forks")
      ->capture_default_str();
  app.add_option("--max-output", o->max_output, "Bytes of each output stream a tool result carries (the rest is cut with a marker)")
      ->type_name("SIZE")
      ->capture_default_str();
  app.add_option("--lifetime", o->lifetime, "Stop a sandbox this server made after DURATION; also the longest timeout")
      ->type_name("DURATION")
      ->capture_default_str();
  app.add_flag("--allow-keep", o->allow_keep, "Let sandbox_start keep a sandbox past the server's end (keep: true)");
  names_lease(app.add_option("--adopt", o->adopt, "Let the tools act on this kept lease too (repeatable; never stopped by the server)"))
      ->allow_extra_args(false);
  return [o](Context& ctx) { return mcp_command(ctx, *o); };
}

}  // namespace

const Command kMcp = {
    .name = "mcp",
    .summary = "Serve the providers as tools to an agent over the Model Context Protocol (stdio)",
    .details = "Reads JSON-RPC messages from stdin, one per line, and answers on stdout; logs go to stderr.\n"
               "Speaks both the 2025-11-25 lifecycle (initialize) and the stateless 2026-07-28 revision. When\n"
               "stdin closes or a stop signal arrives, it stops every sandbox it made that was not kept.\n"
               "Client configuration and the tools: docs/mcp.md.",
    .provider_options = true,
    .define = define,
};

}  // namespace corral::cli
