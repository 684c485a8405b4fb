// Files corral writes for the user (the session handle of --lease-output). A path that
// names a device, a FIFO or a terminal (/dev/null, /dev/stdout) is written through,
// never replaced; a regular file is replaced atomically, so a reader never sees half.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace corral {

// Writes `text` to `path` as above; throws internal naming `what` and the path.
void write_output_file(const std::filesystem::path& path, std::string_view text, const std::string& what);

}  // namespace corral
