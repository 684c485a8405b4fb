// Helpers every tool file shares (declared in tools.hpp).
#include <fmt/format.h>

#include "corral/errors.hpp"
#include "tools.hpp"

namespace corral::mcp {

std::string owned_lease(ToolContext& ctx, const std::string& name) {
  Claim claim;
  try {
    claim = ctx.session.claims().resolve(name);
  } catch (const Error& e) {
    // Not the store's message: it lists every lease of the user's, not only this server's.
    if (e.code() != ErrorCode::not_found) throw;
    throw Error(ErrorCode::not_found, fmt::format("there is no lease '{}'", name),
                "sandbox_list shows the sandboxes this server may act on");
  }
  if (!ctx.book.owns(claim.lease_id))
    throw Error(ErrorCode::invalid_argument,
                fmt::format("lease '{}' was not made by this server, which acts only on its own sandboxes", name),
                fmt::format("start one with sandbox_start; the user can let this server act on it with "
                            "`corral mcp --adopt {}`",
                            claim.slug));
  return claim.lease_id;
}

ProviderChoice choice_of(const ToolContext& ctx, const std::string& provider) { return {provider, ctx.provider_flags}; }

std::string bounded_timeout(const ToolContext& ctx, const std::optional<std::string>& asked) {
  if (!asked || asked->empty()) return fmt::format("{}s", ctx.limits.lifetime_seconds);
  const std::int64_t seconds = parse_duration(*asked);
  if (seconds > ctx.limits.lifetime_seconds)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("timeout '{}' is longer than this server's sandbox lifetime ({}s)", *asked,
                            ctx.limits.lifetime_seconds),
                "ask for less; the user sets the lifetime with `corral mcp --lifetime DURATION`");
  return *asked;
}

}  // namespace corral::mcp
