#include "lease/handle.hpp"

#include <fmt/format.h>

#include "lease/claims.hpp"
#include "lease/cleanup_command.hpp"
#include "corral/json.hpp"
#include "corral/model_shapes.hpp"

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

}  // namespace corral

namespace corral::shape {

template <>
struct Shape<DownloadSummary> {
  static constexpr auto fields =
      std::tuple{field("dir", &DownloadSummary::dir), field("files", &DownloadSummary::files),
                 field("bytes", &DownloadSummary::bytes), field("missing", &DownloadSummary::missing, omitted),
                 field("refused", &DownloadSummary::refused, omitted), field("error", &DownloadSummary::error, omitted)};
};

// {"phase": milliseconds, ...} in the order the phases ran.
struct Timings {
  static bool empty(const std::vector<PhaseTiming>& v) { return v.empty(); }
  static void write(json::Writer& w, const std::vector<PhaseTiming>& timings) {
    w.StartObject();
    for (const PhaseTiming& t : timings) {
      json::write_key(w, t.phase);
      w.Int64(t.ms);
    }
    w.EndObject();
  }
};

template <>
struct Shape<SessionHandle> {
  static constexpr auto fields = std::tuple{
      field("provider", &SessionHandle::provider),
      field("leaseId", &SessionHandle::lease_id),
      field("slug", &SessionHandle::slug),
      field("sandboxId", &SessionHandle::sandbox_id),
      field("reused", &SessionHandle::reused),
      field("pooled", &SessionHandle::pooled, omitted),
      field("kept", &SessionHandle::kept),
      field("cleanupCommand", &SessionHandle::cleanup_command),
      field("network", &SessionHandle::network, omitted),
      field("exitCode", &SessionHandle::exit_code, omitted),
      field("error", &SessionHandle::error, omitted),
      field("downloads", &SessionHandle::downloads, omitted),
      field("egress", &SessionHandle::egress, omitted),
      field_as<Timings>("timingsMs", &SessionHandle::timings),
  };
};

}  // namespace corral::shape

namespace corral {

std::string handle_to_json(const SessionHandle& h) { return shape::to_json(h) + "\n"; }

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
