#include "service/refill.hpp"

#include <fmt/format.h>

#include "corral/json.hpp"
#include "corral/os/process.hpp"
#include "lease/network_policy.hpp"

namespace fs = std::filesystem;

namespace corral::service {
namespace {

constexpr long kMaxRefillLogBytes = 1 << 20;

// The flags of `provider` in `flags` ("<provider>.<option>" keys): the only ones its
// refill needs. Secrets are never flags, so none is among them.
StringMap flags_of(const std::string& provider, const StringMap& flags) {
  StringMap out;
  for (const auto& [key, value] : flags)
    if (key.rfind(provider + ".", 0) == 0) out.emplace(key, value);
  return out;
}

}  // namespace

std::string refill_to_json(const PoolRefill& r) {
  return json::text_of([&](json::Writer& w) {
    w.StartObject();
    json::write_string(w, "provider", r.pool.provider);
    json::write_map(w, "flags", flags_of(r.pool.provider, r.pool.choice.option_flags));
    w.Key("size");
    w.Int(r.size);
    w.Key("ttlSeconds");
    w.Int64(r.ttl_seconds);
    json::write_string(w, "network", to_string(r.pool.network));
    json::write_string(w, "workspace", r.pool.root.string());
    w.Key("maxWorkspace");
    w.Uint64(r.max_workspace);
    w.EndObject();
  });
}

FillRequest fill_request_from_json(std::string_view text) {
  const json::Document doc = json::parse(text, "the refill's request");
  if (!doc.IsObject()) throw Error(ErrorCode::invalid_argument, "the refill's request is not a JSON object");
  FillRequest f;
  f.choice.provider = json::get_string(doc, "provider");
  f.choice.option_flags = json::get_map(doc, "flags");
  f.size = static_cast<int>(json::get_int(doc, "size", 1));
  f.ttl_seconds = json::get_int(doc, "ttlSeconds", kDefaultPoolTtlSeconds);
  f.network = parse_network_policy(json::get_string(doc, "network", "open"));
  f.cwd = json::get_string(doc, "workspace");
  f.max_workspace = static_cast<std::uint64_t>(json::get_int(doc, "maxWorkspace"));
  if (f.choice.provider.empty() || f.cwd.empty())
    throw Error(ErrorCode::invalid_argument, "the refill's request names no provider or workspace");
  return f;
}

void start_refill(const fs::path& self, const fs::path& log, const PoolRefill& refill, Ui& ui) {
  os::spawn_detached({self.string(), kRefillCommand, "--", refill_to_json(refill)}, refill.pool.root.string(),
                     log.string(), kMaxRefillLogBytes);
  ui.info(fmt::format("refilling the pool in the background (log: {})", log.string()));
}

}  // namespace corral::service
