// The files `corral docs` owns, written in place or checked against what would be
// generated.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "context.hpp"

namespace corral::cli {

// `--check` found a file that differs from what would be generated (like `diff`).
inline constexpr int kExitStale = 1;

// A file's text, or nullopt when it does not exist; unreadable files are an error.
std::optional<std::string> read_text(const std::filesystem::path& file);

// One file the generator owns (wholly or in part) and the command that regenerates it.
struct Output {
  std::filesystem::path file;
  std::string expected;
  std::string regenerate;
};

// Writes each output whose file differs; reports each on stderr.
int write_outputs(Context& ctx, const std::vector<Output>& outputs);
// Compares each output with its file; prints a diff for each stale one and fails (exit 1)
// if any is stale or `extra_problems` has any.
int check_outputs(Context& ctx, const std::vector<Output>& outputs, const std::vector<std::string>& extra_problems);

}  // namespace corral::cli
