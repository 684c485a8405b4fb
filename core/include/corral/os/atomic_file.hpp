// Writing a small file so that a reader sees the old text or the new one, never a part:
// claims, session handles, a folder-based provider's records of its sandboxes.
//
// Threads: write_file_atomically may run on several threads and processes at once; two
// writing one target leave one of their texts whole (the last rename wins).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace corral::os {

// Whether a write must survive a power loss (fsync) or only a crash of the process.
enum class Durability { power_loss, process_crash };

// Writes `text` to `target` atomically: a temp file in the same folder with `mode`, then
// rename; with power_loss durability the file and the folder are fsynced too. Throws
// corral::Error naming `what`, the file and the failed step (quota for a full disk).
void write_file_atomically(const std::filesystem::path& target, std::string_view text, int mode,
                           const std::string& what, Durability durability = Durability::power_loss);

}  // namespace corral::os
