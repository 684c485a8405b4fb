// Where the symbolic links below a folder really lead, followed as the kernel follows
// them: for tests (and fuzzing) that must prove no link leaves a download folder.
#pragma once

#include <filesystem>

namespace corral::test {

// The absolute `path` with every link on its way and at its end followed (at most 40),
// as far as the path exists; past that the rest is taken as written, ".." included (the
// place it would reach once the missing folders were made). Empty for a loop.
std::filesystem::path resolve_like_kernel(const std::filesystem::path& path);

// The first symbolic link below `dir` (none followed on the walk) that leads outside
// `dir`, or an empty path when none does. A loop leads nowhere.
std::filesystem::path link_leading_out(const std::filesystem::path& dir);

}  // namespace corral::test
