// Commands on leases: list, status, stop, url, extend.
#include <fmt/format.h>

#include <set>

#include "commands.hpp"
#include "corral/json.hpp"
#include "handle.hpp"
#include "table.hpp"

namespace corral::cli {
namespace {

void write_claim(json::Writer& w, const Claim& c) {
  w.StartObject();
  write_claim_fields(w, c);
  json::write_string(w, "cleanupCommand", cleanup_command(c.provider, c.lease_id));
  w.EndObject();
}

// The sandbox ids that leases on this machine claim.
std::set<std::string> claimed_sandboxes(Context& ctx) {
  std::set<std::string> claimed;
  for (const Claim& c : ctx.claims.all()) claimed.insert(c.sandbox_id);
  return claimed;
}

}  // namespace

int list_command(Context& ctx, bool as_json, bool remote, const ProviderChoice& choice) {
  if (remote) {
    std::string name = ctx.engine.resolve_provider(choice);
    auto session = ctx.engine.open(name, choice);
    Engine::require(session->spec(), Feature::cleanup, "listing a provider's sandboxes (--remote)");
    std::vector<Sandbox> sandboxes = session->list({{"corral-owner", "corral"}});
    std::set<std::string> claimed = claimed_sandboxes(ctx);
    if (as_json) {
      rapidjson::StringBuffer buffer;
      json::Writer w(buffer);
      w.StartArray();
      for (const Sandbox& s : sandboxes) {
        w.StartObject();
        json::write_string(w, "sandboxId", s.id);
        json::write_string(w, "state", s.state);
        json::write_map(w, "labels", s.labels);
        w.Key("claimed");
        w.Bool(claimed.count(s.id) != 0);
        w.EndObject();
      }
      w.EndArray();
      ctx.ui.out(std::string(buffer.GetString()) + "\n");
      return 0;
    }
    Table t({"SANDBOX", "STATE", "SLUG", "CLAIMED HERE"});
    for (const Sandbox& s : sandboxes) {
      auto slug = s.labels.count("corral-slug") ? s.labels.at("corral-slug") : "";
      t.add({s.id, s.state, slug, claimed.count(s.id) ? "yes" : "no (orphan)"});
    }
    ctx.ui.out(t.empty() ? fmt::format("no corral sandboxes at {}\n", session->spec().name) : t.str());
    return 0;
  }
  std::vector<Claim> claims = ctx.claims.all();
  if (as_json) {
    rapidjson::StringBuffer buffer;
    json::Writer w(buffer);
    w.StartArray();
    for (const Claim& c : claims) write_claim(w, c);
    w.EndArray();
    ctx.ui.out(std::string(buffer.GetString()) + "\n");
    return 0;
  }
  if (claims.empty()) {
    ctx.ui.note("no leases; `corral run --keep -- CMD` keeps a sandbox for reuse");
    return 0;
  }
  Table t({"SLUG", "LEASE", "PROVIDER", "SANDBOX", "CREATED", "WORKSPACE"});
  for (const Claim& c : claims) t.add({c.slug, c.lease_id, c.provider, c.sandbox_id, c.created_at, c.workspace});
  ctx.ui.out(t.str());
  return 0;
}

int status_command(Context& ctx, const std::string& id, bool as_json, const ProviderChoice& choice) {
  auto [claim, session] = ctx.engine.open_lease(id, choice);
  Sandbox sandbox = session->get(claim.sandbox_id);
  if (as_json) {
    rapidjson::StringBuffer buffer;
    json::Writer w(buffer);
    w.StartObject();
    w.Key("lease");
    write_claim(w, claim);
    w.Key("sandbox");
    json::write_sandbox(w, sandbox, /*include_secrets=*/false);
    w.EndObject();
    ctx.ui.out(std::string(buffer.GetString()) + "\n");
    return 0;
  }
  Table t({"FIELD", "VALUE"});
  t.add({"slug", claim.slug});
  t.add({"lease", claim.lease_id});
  t.add({"provider", claim.provider});
  t.add({"sandbox", sandbox.id});
  t.add({"state", sandbox.state});
  t.add({"created", claim.created_at});
  t.add({"workspace", claim.workspace});
  for (const auto& [k, v] : sandbox.details) t.add({k, v});
  t.add({"stop with", cleanup_command(claim.provider, claim.lease_id)});
  ctx.ui.out(t.str());
  return 0;
}

int stop_command(Context& ctx, const std::string& id, bool all, bool orphans, const ProviderChoice& choice) {
  if (orphans) {
    std::string name = ctx.engine.resolve_provider(choice);
    auto session = ctx.engine.open(name, choice);
    Engine::require(session->spec(), Feature::cleanup, "stop --orphans");
    // Listed before the claims are read, and skipped while their lease is locked, so a
    // run that is creating its sandbox right now is never mistaken for an orphan.
    std::vector<Sandbox> sandboxes = session->list({{"corral-owner", "corral"}});
    std::set<std::string> claimed = claimed_sandboxes(ctx);
    int stopped = 0;
    for (const Sandbox& s : sandboxes) {
      if (claimed.count(s.id)) continue;
      auto lease = s.labels.find("corral-lease");
      bool in_use = false;
      try {
        in_use = lease != s.labels.end() && !ctx.claims.try_lock(lease->second);
      } catch (const Error&) {
        // Not a lease id corral makes, so no run here can hold it.
      }
      if (in_use) continue;
      session->destroy(s);
      ctx.ui.note(fmt::format("stopped orphan sandbox {}", s.id));
      ++stopped;
    }
    ctx.ui.note(fmt::format("{} orphan sandbox{} stopped at {}", stopped, stopped == 1 ? "" : "es", session->spec().name));
    return 0;
  }
  if (all) {
    int failures = 0;
    for (const Claim& c : ctx.claims.all()) {
      try {
        ctx.engine.stop(c.lease_id, {});
        ctx.ui.note(fmt::format("stopped {} ({})", c.slug, c.provider));
      } catch (const Error& e) {
        ctx.ui.error(fmt::format("{}: {}", c.slug, e.what()), e.hint());
        ++failures;
      }
    }
    return failures ? 69 : 0;
  }
  if (id.empty())
    throw Error(ErrorCode::invalid_argument, "stop needs --id LEASE, --all, or --orphans",
                "`corral list` shows your leases");
  Claim claim = ctx.claims.resolve(id);
  ctx.engine.stop(id, choice);
  ctx.ui.note(fmt::format("stopped {} ({})", claim.slug, claim.provider));
  return 0;
}

int url_command(Context& ctx, const std::string& id, int port, const ProviderChoice& choice) {
  if (port < 1 || port > 65535)
    throw Error(ErrorCode::invalid_argument, fmt::format("--port {} is not a TCP port", port), "use 1-65535");
  auto [claim, session] = ctx.engine.open_lease(id, choice);
  Engine::require(session->spec(), Feature::url_bridge, "corral url");
  Sandbox sandbox = session->get(claim.sandbox_id);
  ctx.ui.out(session->url(sandbox, port) + "\n");
  return 0;
}

int extend_command(Context& ctx, const std::string& id, const std::string& by, const ProviderChoice& choice) {
  std::int64_t seconds = parse_duration(by);
  if (seconds <= 0) throw Error(ErrorCode::invalid_argument, "--by must be a positive duration", "e.g. --by 30m");
  auto [claim, session] = ctx.engine.open_lease(id, choice);
  Engine::require(session->spec(), Feature::keep_alive, "corral extend");
  Sandbox sandbox = session->get(claim.sandbox_id);
  Sandbox updated = session->extend(sandbox, seconds);
  std::string until = updated.details.count("endAt") ? " (until " + updated.details.at("endAt") + ")" : "";
  ctx.ui.note(fmt::format("extended {} by {}{}", claim.slug, format_duration(seconds), until));
  return 0;
}

}  // namespace corral::cli
