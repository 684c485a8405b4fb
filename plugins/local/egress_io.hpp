// Socket waits, reads and writes for the egress proxy's threads: every one of them ends
// when the proxy's stop event fires or its deadline passes, so no thread of the proxy
// blocks past its stop. Sockets are non-blocking.
//
// Thread rules: functions of their arguments; any thread.
#pragma once

#include <poll.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace corral::local {

using EgressClock = std::chrono::steady_clock;

// Waits until `fd` is ready for `events`, `stop` (an eventfd) fires, or `deadline` passes
// (none: no deadline). True when `fd` is ready.
bool wait_for(int stop, int fd, short events, std::optional<EgressClock::time_point> deadline);
// Writes all of `data`; false when the peer is gone, the proxy stops or the deadline passes.
bool send_all(int stop, int fd, std::string_view data, std::optional<EgressClock::time_point> deadline);
// Reads at least one byte (at most `max`) into `buffer` (appended); false at the end, on
// an error, a stop or the deadline.
bool receive_some(int stop, int fd, std::string& buffer, EgressClock::time_point deadline, size_t max = 16384);
// Exactly `n` bytes at the front of `buffer`, reading as needed.
bool receive_exactly(int stop, int fd, std::string& buffer, size_t n, EgressClock::time_point deadline);

// A short plain-text answer of the proxy's own, closing the connection.
std::string http_reply(int status, const char* phrase, const std::string& body);

}  // namespace corral::local
