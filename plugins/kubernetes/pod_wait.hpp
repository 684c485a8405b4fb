// Waiting for a new Pod to become Ready with a watch (not polling), bounded by the start
// timeout: an image that cannot be pulled or a Pod that ended fails at once, naming why; a
// Pod still Pending at the deadline says why from its conditions (Unschedulable: which
// resource) and its latest warning event. A watch that ends early or is too old (410) is
// resumed from a fresh read of the Pod.
#pragma once

#include <cstdint>
#include <string>

#include "api.hpp"
#include "corral/json.hpp"

namespace corral::kubernetes {

// What a Pod's status says about its start.
struct PodProgress {
  enum class Kind { starting, ready, failed } kind = Kind::starting;
  std::string why;  // for starting: what it waits for; for failed: what went wrong
  ErrorCode code = ErrorCode::unavailable;
};

// The progress `pod` (a Pod object) shows; `image` names the image in a pull failure.
PodProgress progress_of(const json::Value& pod, const std::string& image);

// Returns once Pod `name` in `ns` is Ready; throws Error saying why it is not (failed at
// once, or unavailable after `timeout_seconds`, `timeout_setting` named in the hint),
// cancelled on Ctrl-C, not_found when the Pod was deleted meanwhile.
void wait_until_ready(Api& api, const std::string& ns, const std::string& name, const std::string& image,
                      std::int64_t timeout_seconds, const std::string& timeout_setting, const sdk::Host& host);

}  // namespace corral::kubernetes
