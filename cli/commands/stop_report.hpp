// How `stop` and `pool drain` report what they stopped.
#pragma once

#include <vector>

#include "context.hpp"
#include "lease/fleet.hpp"

namespace corral::cli {

// Reports stop outcomes, one line each; the exit status of the first failure, else 0.
int report_stops(Context& ctx, const std::vector<StopOutcome>& outcomes);

}  // namespace corral::cli
