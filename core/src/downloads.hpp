// Results back (--download): the checks on what the user asks for, and the unpacking of
// the archive a provider's download primitive brought back. The archive comes from the
// sandbox, so every entry is untrusted: nothing may land outside the download folder,
// and the folder may not grow past the size bound however the archive is built.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace corral {

// Where downloads land by default, below the workspace root, one folder per lease; the
// workspace scan never syncs it back.
inline constexpr std::string_view kDownloadsFolder = ".corral/runs";

// Throws invalid-argument for a --download pattern that is empty, absolute, has a ".."
// part or a control character, has a part whose glob can match ".." in a POSIX shell
// (".*", ".[.]", ".?", "[.][.]"), or for more than 64 patterns.
void check_download_patterns(const std::vector<std::string>& patterns);

struct UnpackedDownload {
  std::vector<std::string> files;    // regular files and links written, relative to the folder
  std::vector<std::string> refused;  // "name: why" for entries not written
  std::uint64_t bytes = 0;           // bytes of file content written
};

// Unpacks the .tar.gz at `archive` into `dir` (created when missing). Entries that are
// absolute, climb out with "..", are links pointing out of `dir`, would be written
// through a link, or are devices or fifos are refused and listed, not written. Throws
// invalid-argument once the content passes `max_bytes` or 100000 entries, cancelled when
// `cancelled` says so, and internal for an unreadable archive; what was written stays.
UnpackedDownload unpack_download(const std::filesystem::path& archive, const std::filesystem::path& dir,
                                 std::uint64_t max_bytes, const std::function<bool()>& cancelled);

}  // namespace corral
