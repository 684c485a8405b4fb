// Reading a small file whose path corral was handed (a claim, a config, an ignore file, a
// registry), which may be anything a hostile checkout or a careless script can put there:
// a FIFO nobody writes, /dev/zero, a link to either, a file of gigabytes.
//
// Threads: safe from any thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace corral::os {

enum class Links { follow, refuse };

// The whole text of the regular file at `path`; nullopt when nothing is there. Opens
// without blocking (a FIFO is refused, not waited on) and, with Links::refuse, without
// following a link at the end of the path. Throws Error(invalid-argument) naming `what`
// and the path for anything but a regular file of at most `max_bytes` (and for a file
// that cannot be read, with the reason).
std::optional<std::string> read_regular_file(const std::filesystem::path& path, std::uint64_t max_bytes,
                                             const std::string& what, Links links = Links::follow);

}  // namespace corral::os
