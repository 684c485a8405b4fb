// Reading `sbx ls --json`. sbx documents no schema for it, so the parser is defensive:
// a top-level array or an object holding the array, and each field under any of the
// spellings a Go or JSON tool would plausibly use.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace corral::docker_sandbox {

// One sandbox as `sbx ls` reports it; fields sbx did not report are empty.
struct SbxEntry {
  std::string name;
  std::string status;     // lower-cased: running, stopped, ...
  std::string agent;
  std::string workspace;  // the first workspace path, without a ":ro"/":rw" suffix
};

// The sandboxes in `text`. Empty output or `null` is an empty list; entries without a
// name are skipped; text that is not JSON, or JSON with no list in it, throws
// unavailable (sbx changed its format) with a hint.
std::vector<SbxEntry> parse_ls_json(std::string_view text);

// The entry called `name`, or nullopt.
std::optional<SbxEntry> find_entry(const std::vector<SbxEntry>& entries, std::string_view name);

}  // namespace corral::docker_sandbox
