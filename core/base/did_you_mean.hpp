// Suggestions for a mistyped word: a command, a flag, a settings key.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace corral {

// How many single-letter insertions, deletions and substitutions turn `a` into `b`.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word`, when it is at most `max_distance` edits away (the
// first of equally near ones); nullopt when none is that near.
std::optional<std::string> nearest(std::string_view word, const std::vector<std::string>& candidates,
                                   std::size_t max_distance = 2);

}  // namespace corral
