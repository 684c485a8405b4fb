// Copying one regular file's bytes into another, as cheaply as the file systems allow:
// what a fork's copy and a workspace's copy both do for every file.
#pragma once

#include <cstdint>

namespace corral::local {

// Copies the bytes of the file open at `in`, from where it is read to at most `max_bytes`
// (a file that grows while it is copied is cut there), into `out`: when `same_file_system`,
// a reflink where the file system shares blocks, else copy_file_range (which may copy
// without reading); then sendfile, else read and write. 0, or the errno of the step that
// failed.
int copy_file_data(int in, int out, bool same_file_system, std::uint64_t max_bytes = UINT64_MAX);

}  // namespace corral::local
