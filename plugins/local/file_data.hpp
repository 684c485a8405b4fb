// Copying one regular file's bytes into another, as cheaply as the file systems allow:
// what a fork's copy and a workspace's copy both do for every file.
#pragma once

#include <cstdint>
#include <functional>

namespace corral::local {

// Copies the bytes of the file open at `in`, from where it is read to at most `max_bytes`
// (a file that grows while it is copied is cut there), into `out`: when `same_file_system`,
// a reflink where the file system shares blocks, else copy_file_range (which may copy
// without reading); then sendfile, else read and write. Between pieces of
// kCopyPiece bytes it asks `stop` (when given), so a huge file does not hold up a Ctrl-C:
// ECANCELED once it says so. 0, or the errno of the step that failed.
int copy_file_data(int in, int out, bool same_file_system, std::uint64_t max_bytes = UINT64_MAX,
                   const std::function<bool()>& stop = {});

// How many bytes copy_file_data moves between two questions to `stop`.
inline constexpr std::uint64_t kCopyPiece = 8u << 20;

}  // namespace corral::local
