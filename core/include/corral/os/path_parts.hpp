// Splitting relative '/'-separated paths, as archive entries and link targets hold them.
//
// Threads: pure; safe from any thread.
#pragma once

#include <string_view>
#include <vector>

namespace corral::os {

// The '/'-separated parts of `path`, without empty and "." parts ("./a//b/" gives a, b);
// ".." parts are kept. The views point into `path`.
std::vector<std::string_view> path_parts(std::string_view path);

}  // namespace corral::os
