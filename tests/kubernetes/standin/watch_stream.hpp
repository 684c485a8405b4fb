// A watch as the API server streams it: WatchEvent lines ({"type":"ADDED","object":{...}})
// of the objects matching the watch, the current ones first when no resourceVersion was
// given, then every change after it; an ERROR event with a 410 Expired Status for a
// resourceVersion older than the history kept; BOOKMARKs when asked for; the end of the
// stream at timeoutSeconds or when a fault says so.
#pragma once

#include <functional>
#include <string_view>

#include "http_types.hpp"
#include "state.hpp"

namespace corral::kubernetes::standin {

// Streams `plan` through `write` (one call per event line; false: the client is gone)
// until the watch ends. Takes the state's mutex itself.
void stream_watch(State& state, const WatchPlan& plan, const std::function<bool(std::string_view)>& write);

}  // namespace corral::kubernetes::standin
