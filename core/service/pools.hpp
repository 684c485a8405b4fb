// Warm pools as a front end asks for them (lease/pool.hpp, lease/pool_fill.hpp): fill one
// from what the user typed, say how the pools stand, drain them, and the background
// refill's own fill; with the JSON forms of their results.
//
// Threads: as lease/pool_fill.hpp; several fills may run at once (they count under the
// pool's lock).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lease/fleet.hpp"
#include "lease/pool.hpp"
#include "lease/pool_fill.hpp"
#include "service/session.hpp"

namespace corral::service {

// What `corral pool fill` is asked.
struct FillSpec {
  ProviderChoice provider;
  int size = 1;
  std::string ttl = "1h";              // how long a pooled sandbox waits (a duration)
  std::optional<std::string> network;  // a policy; nullopt = the configured default
  std::string max_workspace = "512M";
  std::filesystem::path cwd;           // the working tree; "" = the current folder
  bool no_refill = false;              // runs that take from the pool do not refill it
};

// Fills `spec`'s pool to its size (FillRequest checks the size and TTL).
FillResult fill(Session& session, Ui& ui, const FillSpec& spec);
// The fill a background refill was started with (`json`, service/refill.hpp).
FillResult refill(Session& session, Ui& ui, std::string_view json);
// {"pool","provider","readyBefore","made"}.
std::string fill_result_to_json(const FillResult& result);

// The pools of this machine.
std::vector<PoolStatus> pools(Session& session, Ui& ui);
// [{"pool","provider","workspace","network","size","ready","busy","expired","oldestSeconds",
//   "sandboxMinutes","runningMinutes","canPause","refills","note"?}...].
std::string pools_to_json(const std::vector<PoolStatus>& pools);
// What a pool of a provider that cannot pause says, in `pool fill` and `pool status`.
inline constexpr const char* kCannotPause = "cannot pause: pooled sandboxes run while they wait";
// Below this a sandbox is ready so soon (create and sync) that a pool saves a run little,
// which `pool fill` says rather than let the user think it helps.
inline constexpr std::int64_t kWorthPoolingMs = 250;

// What `pool drain` stops: the pools of `provider` (its name or alias; "" = every
// provider's) made for the working tree holding `cwd` ("" = the current folder), or for
// every working tree with `all`.
struct DrainSpec {
  std::string provider;
  std::filesystem::path cwd;
  bool all = false;
};
DrainResult drain(Session& session, Ui& ui, const DrainSpec& spec);

}  // namespace corral::service
