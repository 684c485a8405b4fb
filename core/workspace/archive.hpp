// The workspace archive: the files a scan chose, as the gzip-compressed tar a provider
// unpacks in the sandbox.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>

#include "workspace/workspace.hpp"

namespace corral {

// Writes the workspace's files as a gzip-compressed tar to `archive` (gzip's fastest
// level; a workspace of a few MiB or more is compressed on several threads as a series of
// gzip members, which gzip -d, tar -xzf and libarchive read as one stream); returns its size.
// Throws cancelled once `cancelled` says so (polled every few hundred files or MiB),
// removing the partial archive. `on_read` hears the bytes of file content read so far.
std::uint64_t write_archive(const Workspace& workspace, const std::filesystem::path& archive,
                            const std::function<bool()>& cancelled = {},
                            const std::function<void(std::uint64_t)>& on_read = {});

}  // namespace corral
