// A warm pool's refill in the background: a corral process of its own, started detached
// by the run that took a pooled sandbox, which fills the pool back to its size and
// outlives the run. The refill is the service's own entry point, not a command line a
// user would type: `corral __refill -- JSON`, the JSON being what to fill.
//
// Threads: pure functions but start_refill, which may run on several threads at once
// (each refill is a process of its own; their fills count under the pool's lock).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "lease/pool.hpp"
#include "lease/pool_fill.hpp"

namespace corral::service {

// The hidden command a refill is started as; the command table defines it with this name.
inline constexpr const char* kRefillCommand = "__refill";

// What `refill` asks, as the refill process reads it back: the pool's provider, its
// option flags (no secret: those come from the environment or the config), size, TTL,
// network policy, workspace and the scan's bound.
std::string refill_to_json(const PoolRefill& refill);
// The fill a refill's JSON asks for; throws invalid-argument for JSON that is not one.
FillRequest fill_request_from_json(std::string_view json);

// Starts `self` as `self __refill -- JSON` in the pool's workspace, detached and at a
// lower priority, its output appended to the pools' log (`log`, bounded at 1 MiB), and
// tells `ui` so. Throws Error when it cannot (the log is not a file, no process).
void start_refill(const std::filesystem::path& self, const std::filesystem::path& log, const PoolRefill& refill,
                  Ui& ui);

}  // namespace corral::service
