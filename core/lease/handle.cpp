#include "lease/handle.hpp"

#include <fmt/format.h>

#include "lease/claims.hpp"
#include "lease/cleanup_command.hpp"
#include "corral/json.hpp"

namespace corral {

SessionHandle handle_for(const Claim& claim) {
  SessionHandle h;
  h.provider = claim.provider;
  h.lease_id = claim.lease_id;
  h.slug = claim.slug;
  h.sandbox_id = claim.sandbox_id;
  h.cleanup_command = cleanup_command(claim.provider, claim.lease_id);
  h.network = claim.network;
  h.kept = claim.kept;  // a kept fork or warmup says so; a run sets its own at its end
  return h;
}

namespace {

void write_error(json::Writer& w, const char* key, const Error& e) {
  w.Key(key);
  w.StartObject();
  json::write_string(w, "code", to_string(e.code()));
  json::write_string(w, "message", e.what());
  if (!e.hint().empty()) json::write_string(w, "hint", e.hint());
  w.EndObject();
}

void write_downloads(json::Writer& w, const DownloadSummary& d) {
  w.Key("downloads");
  w.StartObject();
  json::write_string(w, "dir", d.dir);
  json::write_strings(w, "files", d.files);
  w.Key("bytes");
  w.Uint64(d.bytes);
  if (!d.missing.empty()) json::write_strings(w, "missing", d.missing);
  if (!d.refused.empty()) json::write_strings(w, "refused", d.refused);
  if (d.error) write_error(w, "error", *d.error);
  w.EndObject();
}

}  // namespace

std::string handle_to_json(const SessionHandle& h) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  json::write_string(w, "provider", h.provider);
  json::write_string(w, "leaseId", h.lease_id);
  json::write_string(w, "slug", h.slug);
  json::write_string(w, "sandboxId", h.sandbox_id);
  w.Key("reused");
  w.Bool(h.reused);
  if (h.pooled) {
    w.Key("pooled");
    w.Bool(true);
  }
  w.Key("kept");
  w.Bool(h.kept);
  json::write_string(w, "cleanupCommand", h.cleanup_command);
  if (h.network.mode != NetworkPolicy::Mode::open) json::write_string(w, "network", to_string(h.network));
  if (h.exit_code) {
    w.Key("exitCode");
    w.Int(*h.exit_code);
  }
  if (h.error) write_error(w, "error", *h.error);
  if (h.downloads) write_downloads(w, *h.downloads);
  w.Key("timingsMs");
  w.StartObject();
  for (const PhaseTiming& t : h.timings) {
    w.Key(t.phase.c_str());
    w.Int64(t.ms);
  }
  w.EndObject();
  w.EndObject();
  return std::string(buffer.GetString()) + "\n";
}

namespace {
// {"KEY":[handle or null,...]}
std::string handles_to_json(const char* key, const std::vector<std::optional<SessionHandle>>& handles) {
  std::string text = fmt::format("{{\"{}\":[", key);
  for (size_t i = 0; i < handles.size(); ++i) {
    if (i > 0) text += ",";
    if (!handles[i]) {
      text += "null";
      continue;
    }
    std::string one = handle_to_json(*handles[i]);
    one.pop_back();  // its newline
    text += one;
  }
  return text + "]}\n";
}
}  // namespace

std::string shard_handles_to_json(const std::vector<std::optional<SessionHandle>>& handles) {
  return handles_to_json("shards", handles);
}

std::string fork_handles_to_json(const std::vector<SessionHandle>& handles) {
  return handles_to_json("forks", {handles.begin(), handles.end()});
}

}  // namespace corral
