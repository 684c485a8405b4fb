#include "service/pools.hpp"

#include "base/sizes.hpp"
#include "corral/json.hpp"
#include "service/refill.hpp"
#include "workspace/workspace.hpp"

namespace corral::service {

FillResult fill(Session& session, Ui& ui, const FillSpec& spec) {
  FillRequest request;
  request.choice = spec.provider;
  request.size = spec.size;
  request.ttl_seconds = parse_duration(spec.ttl);
  if (spec.network) request.network = parse_network_policy(*spec.network);
  request.cwd = spec.cwd.empty() ? std::filesystem::current_path() : spec.cwd;
  request.max_workspace = parse_size(spec.max_workspace);
  request.no_refill = spec.no_refill;
  LeaseContext ctx = session.context(ui);
  return fill_pool(ctx, request);
}

FillResult refill(Session& session, Ui& ui, std::string_view json) {
  LeaseContext ctx = session.context(ui);
  return fill_pool(ctx, fill_request_from_json(json));
}

std::string fill_result_to_json(const FillResult& r) {
  return json::text_of([&](json::Writer& w) {
    w.StartObject();
    json::write_string(w, "pool", r.key);
    json::write_string(w, "provider", r.provider);
    w.Key("readyBefore");
    w.Int(r.ready_before);
    w.Key("made");
    w.Int(r.made);
    if (r.made > 0) {
      w.Key("msPerSandbox");
      w.Int64(r.ms_per_sandbox);
    }
    w.EndObject();
  });
}

std::vector<PoolStatus> pools(Session& session, Ui& ui) {
  LeaseContext ctx = session.context(ui);
  return pool_status(ctx);
}

std::string pools_to_json(const std::vector<PoolStatus>& pools) {
  return json::text_of([&](json::Writer& w) {
    w.StartArray();
    for (const PoolStatus& p : pools) {
      w.StartObject();
      json::write_string(w, "pool", p.key);
      json::write_string(w, "provider", p.provider);
      json::write_string(w, "workspace", p.workspace);
      json::write_string(w, "network", to_string(p.network));
      w.Key("size");
      w.Int(p.size);
      w.Key("ready");
      w.Int(p.ready);
      w.Key("busy");
      w.Int(p.busy);
      w.Key("expired");
      w.Int(p.expired);
      w.Key("oldestSeconds");
      w.Int64(p.oldest_seconds);
      w.Key("sandboxMinutes");
      w.Double(p.sandbox_minutes);
      w.Key("runningMinutes");
      w.Double(p.running_minutes);
      w.Key("canPause");
      w.Bool(p.can_pause);
      w.Key("refills");
      w.Bool(p.refills);
      if (!p.can_pause) json::write_string(w, "note", kCannotPause);
      w.EndObject();
    }
    w.EndArray();
  });
}

DrainResult drain(Session& session, Ui& ui, const DrainSpec& spec) {
  DrainScope scope;
  if (!spec.provider.empty()) scope.provider = session.providers().spec(spec.provider).name;
  if (!spec.all) scope.workspace = find_workspace_root(spec.cwd.empty() ? std::filesystem::current_path() : spec.cwd);
  LeaseContext ctx = session.context(ui);
  return drain_pools(ctx, scope);
}

}  // namespace corral::service
