// Every lease of this machine and every corral sandbox at a provider: what `list`,
// `stop --all` and `stop --orphans` show and do. The rules of ownership live here: a
// sandbox is this machine's when its host label says so, a lease is in use while a
// corral holds its lock, and a lease nobody holds that was never kept was abandoned by
// a corral that died or whose destroy failed.
//
// Threads: each function runs on its caller's thread and reports to `ctx.ui`; several may
// run at once (here or in other corral processes) on one claims folder: a lease is acted
// on only under its lock, and a lease being created holds its lock before its sandbox
// exists, so a listing never takes it for an orphan. Errors: the listing functions throw
// the provider's or the claims' error; the stop functions report each lease's outcome.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lease/lease.hpp"

namespace corral {

enum class LeaseState {
  in_use,     // a corral process holds it right now
  kept,       // kept by the user, idle
  paused,     // kept and paused (`corral pause`): costing little until resumed
  pooled,     // waiting in a warm pool (`corral pool fill`) until its pool time is over
  abandoned,  // never kept and nobody holds it: its corral died, or could not stop it;
              // or pooled past its pool time
  corrupt,    // the claim file cannot be read
};
std::string_view to_string(LeaseState state);

struct LeaseRow {
  ClaimFile file;
  LeaseState state = LeaseState::kept;
};

// Every claim file of this machine with its state, oldest first (corrupt ones last).
std::vector<LeaseRow> list_leases(const ClaimStore& claims);

enum class RemoteOwner {
  claimed,       // a lease on this machine records it
  in_use,        // its lease is being created or used by a corral here right now
  orphan,        // made from this machine, and no lease here records it
  other_host,    // made by another machine's corral
  unknown_host,  // carries no host label (made by an older corral)
};
std::string_view to_string(RemoteOwner owner);
// True for a sandbox another machine's corral made, or one that does not say which made it:
// only `--all-hosts` shows or stops those.
bool is_foreign(RemoteOwner owner);

// True when every sandbox `spec`'s provider lists is this machine's, labelled or not, so
// one without a host label (sbx names carry none) is this host's orphan rather than an
// unknown host's. A provider reaches another machine only at a destination its options
// name, typed url or host (the types core holds trusted, so no checkout can redirect
// them); a provider with no such option works here alone: its processes, its folders,
// its local daemon.
bool lists_only_this_host(const ProviderSpec& spec);

struct RemoteRow {
  Sandbox sandbox;
  RemoteOwner owner = RemoteOwner::orphan;
};

// The corral sandboxes at provider `session` (cleanup), each with who owns it.
std::vector<RemoteRow> list_remote(LeaseContext& ctx, ProviderSession& session);

struct StopOutcome {
  std::string what;  // "calm-otter (e2b)", "orphan sandbox sb-12"
  std::optional<Error> error;
};

// Stops every lease of this machine, corrupt ones included (their sandbox is destroyed
// when its id can be read); one outcome per lease.
std::vector<StopOutcome> stop_all(LeaseContext& ctx);
// Stops lease `id` (lease id or slug); a corrupt claim is removed, destroying its
// sandbox when its id can be read. Returns what was stopped; throws why it could not.
StopOutcome stop_lease(LeaseContext& ctx, const std::string& id, const ProviderChoice& choice);

struct OrphanScope {
  bool all_hosts = false;  // also other machines' and unlabelled sandboxes
  bool all_providers_abandoned = true;  // abandoned leases of every provider, not just `provider`
};
// Removes abandoned leases, then the provider's orphan sandboxes (when it has cleanup).
std::vector<StopOutcome> stop_orphans(LeaseContext& ctx, const ProviderChoice& choice, const OrphanScope& scope);

}  // namespace corral
