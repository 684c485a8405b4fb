// Generated docs live beside hand-written text: a generated block sits between two HTML
// comment markers in a file people also edit, and a stale file is reported as a diff.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace corral::docs {

// A pair of marker lines that delimit one block of a Markdown file.
struct Markers {
  std::string_view begin;
  std::string_view end;
};

// The matrix block inside docs/providers/README.md.
inline constexpr Markers kMatrixMarkers{"<!-- BEGIN GENERATED PROVIDER MATRIX -->",
                                        "<!-- END GENERATED PROVIDER MATRIX -->"};
// The prose block inside a generated provider page, kept across regenerations.
inline constexpr Markers kProseMarkers{"<!-- BEGIN HAND-WRITTEN -->", "<!-- END HAND-WRITTEN -->"};

// The exact text between the markers, or nullopt when `document` has neither marker.
// Throws invalid-argument naming `what` when only one is there, one is repeated or they
// are out of order: rewriting such a file could destroy text.
std::optional<std::string> extract_block(std::string_view document, const Markers& markers, std::string_view what);

// `document` with the text between the markers replaced by "\n" + `block` (which should
// end with a newline); everything outside the markers is kept byte for byte. Throws
// invalid-argument naming `what` when the markers are missing or malformed.
std::string replace_block(std::string_view document, const Markers& markers, std::string_view block,
                          std::string_view what);

// nullopt when `actual` equals `expected`; else a unified-diff-like listing of the
// changed lines ("-" in the file, "+" generated) with a little context, at most
// `max_lines` lines of it, headed by `label`.
std::optional<std::string> stale_diff(std::string_view label, std::string_view actual, std::string_view expected,
                                      std::size_t max_lines = 60);

}  // namespace corral::docs
