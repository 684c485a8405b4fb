// The session handle: what a run hands back so the sandbox can be reused or cleaned up.
//
// Threads: plain values and pure functions; safe anywhere. Nothing here throws but
// std::bad_alloc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "corral/types.hpp"
#include "lease/cleanup_command.hpp"

namespace corral {

struct PhaseTiming {
  std::string phase;  // prepare | acquire | sync | exec | download | cleanup
  long long ms = 0;
};

// What --download brought back.
struct DownloadSummary {
  std::string dir;                   // where the files landed
  std::vector<std::string> files;    // relative to dir
  std::vector<std::string> missing;  // patterns that matched nothing
  std::vector<std::string> refused;  // "entry: why" for entries that were not written
  std::uint64_t bytes = 0;
  std::optional<Error> error;  // why the download failed; the command's exit code stands
};

struct SessionHandle {
  std::string provider;
  std::string lease_id;
  std::string slug;
  std::string sandbox_id;
  bool reused = false;
  bool pooled = false;  // taken ready from a warm pool (`corral pool fill`)
  bool kept = false;
  std::string cleanup_command;  // a shell command that stops the sandbox
  NetworkPolicy network;        // the sandbox's, fixed at creation
  std::optional<int> exit_code;  // the command's, when it ran to completion
  std::optional<Error> error;    // why the run failed, when it did
  std::vector<PhaseTiming> timings;
  std::optional<DownloadSummary> downloads;  // set when --download was given and the command ran
  std::optional<EgressReport> egress;  // what the command's connections asked for, where the provider reports it
};

struct Claim;
// The handle of the lease `claim` records (not yet reused or kept).
SessionHandle handle_for(const Claim& claim);
std::string handle_to_json(const SessionHandle& handle);
// A fan-out's handles, {"shards":[handle,...]} by shard index; null for a shard that never
// got a sandbox.
std::string shard_handles_to_json(const std::vector<std::optional<SessionHandle>>& handles);
// `corral fork`'s handles, {"forks":[handle,...]} in the order the forks were asked for.
std::string fork_handles_to_json(const std::vector<SessionHandle>& handles);

}  // namespace corral
