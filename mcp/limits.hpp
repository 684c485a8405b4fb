// What the user who started `corral mcp` allows its agent, fixed for the server's life:
// tools may ask for less (another allowed provider, a narrower network, fewer variables,
// a folder below the root), never for more. Every check throws invalid-argument with a
// message meant for the agent: what it asked, what it may ask, and who can change that.
//
// Threads: a Limits is read-only once the server starts; its checks are safe from any thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "corral/types.hpp"
#include "plugin_host/providers.hpp"

namespace corral::mcp {

struct Limits {
  std::string provider;                  // --provider: the default ("" = the configured one)
  std::vector<std::string> allowed;      // --allow-provider: the others tools may name
  std::filesystem::path root;            // --root, canonical: sandboxes are made of what lies below
  std::optional<NetworkPolicy> network;  // --network: the widest policy; nullopt = the configured one
  std::vector<std::string> env;          // --env: the variables tools may forward, by name
  int max_sandboxes = 4;                 // live sandboxes this server made, runs included
  std::uint64_t max_output = 64 * 1024;  // bytes of each output stream a tool result carries
  std::int64_t lifetime_seconds = 3600;  // a sandbox this server made is stopped after this
  bool allow_keep = false;               // sandbox_start may keep a sandbox past the server's end
  std::vector<std::string> adopt;        // kept leases (id or slug) the tools may act on too
};

// The provider a tool asked for ("" = the default), by its name: refused unless it is the
// default or allowed. `providers` resolves aliases and the configured default.
std::string allowed_provider(const Limits& limits, Providers& providers, const std::string& asked);
// Every provider the tools may use, by name, the default first.
std::vector<std::string> allowed_providers(const Limits& limits, Providers& providers);
// The folder `cwd` names below the root ("" = the root), canonical; refused when it is
// absolute, missing, not a folder, or leads outside the root (through ".." or a link).
std::filesystem::path served_folder(const Limits& limits, const std::string& cwd);
// The policy a new sandbox of `spec` gets when a tool asked for `asked` (nullopt = no
// wish): the user's --network when given, else the configured one; a wish that is not
// within it is refused.
NetworkPolicy sandbox_network(const Limits& limits, const ProviderSpec& spec, const Config& config, Ui& ui,
                              const std::optional<std::string>& asked);
// Refuses any of `names` that the user did not list with --env.
void check_env(const Limits& limits, const std::vector<std::string>& names);

}  // namespace corral::mcp
