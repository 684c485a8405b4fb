// Locks held on files and folders that another process may remove: whoever removes one
// does so holding its lock, so a process that waited for the lock must check, once it
// has it, that the name still leads to what it locked; if not it holds nothing anyone
// else can see and must start again with a new one.
#pragma once

#include <filesystem>

namespace corral::sdk {

// True when `path` (not followed if it is a link) names the file open as `fd`.
bool still_named(int fd, const std::filesystem::path& path);

}  // namespace corral::sdk
