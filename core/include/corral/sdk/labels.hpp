// The labels of a sandbox kept in a folder, for providers whose sandboxes are folders or
// that keep a record per sandbox on disk: `get` receives only an id and `list` filters by
// labels, so what create was given must be stored with the sandbox. Stored as JSON, so
// any label corral can send survives (newlines, '=', NUL, quotes: labels cross the ABI as
// JSON text, hence as UTF-8), and written atomically, so a crash never leaves a half file.
#pragma once

#include <filesystem>

#include "corral/types.hpp"

namespace corral::sdk {

// The file write_labels writes in `folder`: labels.json.
std::filesystem::path labels_file(const std::filesystem::path& folder);

// Stores `labels` in `folder` (which must exist), replacing what was there. Throws
// corral::Error naming the file (quota for a full disk).
void write_labels(const std::filesystem::path& folder, const StringMap& labels);

// The labels stored in `folder`; empty when it holds none. Throws corral::Error
// (internal) naming the file when it cannot be read or is not what write_labels writes.
StringMap read_labels(const std::filesystem::path& folder);

}  // namespace corral::sdk
