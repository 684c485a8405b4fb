// Kept leases as any front end acts on them: fork, pause, resume, extend, a port's URL,
// status, the listings and stop; with the JSON forms of their results. Each operation
// names its lease by id or slug, opens its provider with the options the front end was
// given, and reports to the Ui its caller gives.
//
// Threads: as lease/lease.hpp and lease/fleet.hpp: an operation belongs to its caller's
// thread; several may share a Session, each with its own Ui. One that needs a lease
// exclusively waits for another corral using it (saying so) and ends on Ui::cancelled().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lease/fleet.hpp"
#include "lease/handle.hpp"
#include "service/session.hpp"

namespace corral::service {

// A lease the user made, by its id or slug, and the provider options to open it with
// (its provider is the one its claim records; naming another is refused).
struct LeaseSpec {
  std::string lease;
  ProviderChoice provider;
};

struct ForkSpec {
  LeaseSpec source;
  int count = 1;              // 1..kMaxForks
  bool keep_partial = false;  // keep the forks made when others failed or corral was stopped
};

struct ForkOutcome {
  std::vector<SessionHandle> forks;  // kept leases, in the order asked
  std::vector<Error> failed;         // why the others were not made (only with keep_partial)
};

// Copies `spec.source`'s sandbox into `spec.count` kept leases by the provider's own fork.
// Throws as lease/fork.hpp's fork_lease does.
ForkOutcome fork(Session& session, Ui& ui, const ForkSpec& spec);

// A lease after pause() or resume(): its claim as it now stands, and whether anything
// changed (false: it was paused, or running, already).
struct StateChange {
  Claim claim;
  bool changed = true;
};
// Pauses a kept sandbox unless it is paused already. Throws unsupported without
// pause-resume, invalid-argument for a pooled lease.
StateChange pause(Session& session, Ui& ui, const LeaseSpec& spec);
// Resumes a paused sandbox; one running already is left as it is. Throws as pause().
StateChange resume(Session& session, Ui& ui, const LeaseSpec& spec);

struct Extended {
  Claim claim;
  std::int64_t seconds = 0;   // how much longer, from now
  std::optional<std::string> until;  // the provider's new end, when it says
};
// More lifetime for a kept sandbox: `by` a duration ("30m"). Throws invalid-argument for
// a duration that is not one, unsupported without keep-alive.
Extended extend(Session& session, Ui& ui, const LeaseSpec& spec, const std::string& by);

// The URL of `port` inside a kept sandbox, printable on one line. Throws invalid-argument
// for a port outside 1-65535, unsupported without url-bridge.
std::string url(Session& session, Ui& ui, const LeaseSpec& spec, int port);

// The slug of the one lease of this machine the user can act on (kept, paused or in use;
// not pooled), for a command given no --id. Throws not-found when there is none,
// invalid-argument naming them when there are several; `command` ("corral status") is
// for the messages.
std::string only_lease(Session& session, std::string_view command);

struct LeaseStatus {
  Claim claim;
  Sandbox sandbox;  // as the provider reports it now
};
// A lease (kept or pooled) and its sandbox's state now.
LeaseStatus status(Session& session, Ui& ui, const LeaseSpec& spec);
// {"lease":{claim fields...,"cleanupCommand"},"sandbox":{...}}, secrets left out.
std::string status_to_json(const LeaseStatus& status);

// Every lease of this machine with its state, oldest first (corrupt ones last).
std::vector<LeaseRow> leases(Session& session);
// [{claim fields...,"cleanupCommand","state"} or, for a corrupt claim, {"leaseId",
//   "provider","sandboxId","problem","cleanupCommand","state"}...].
std::string leases_to_json(const std::vector<LeaseRow>& rows);

struct RemoteListing {
  std::string provider;  // its canonical name
  std::vector<RemoteRow> rows;
};
// The corral sandboxes at `provider`, other machines' and unlabelled ones only with
// `all_hosts`. Throws unsupported without cleanup.
RemoteListing remote_sandboxes(Session& session, Ui& ui, const ProviderChoice& provider, bool all_hosts);
// [{"sandboxId","state","labels","owner","claimed"}...].
std::string remote_sandboxes_to_json(const std::vector<RemoteRow>& rows);

// What to stop: exactly one of a lease, every lease, or what dead corrals left.
struct StopSpec {
  std::string lease;  // "" with no other mode: the only lease there is (only_lease)
  bool all = false;
  bool orphans = false;
  bool all_hosts = false;   // with orphans: other machines' sandboxes too
  ProviderChoice provider;  // with orphans: only this provider's abandoned leases when named
};
// Stops what `spec` names; one outcome each (none when there was nothing). Throws
// invalid-argument for a spec that names none or several, or all_hosts without orphans;
// for a single lease, why it could not be stopped.
std::vector<StopOutcome> stop(Session& session, Ui& ui, const StopSpec& spec);

}  // namespace corral::service
