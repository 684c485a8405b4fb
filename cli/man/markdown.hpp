// The Markdown the project's docs are written in, as man(7) roff: headings, paragraphs,
// fenced and indented code, "- " lists, pipe tables (a tagged paragraph per row),
// `code`, **bold** and [links](target) (their text). Nothing else is needed, so nothing
// else is understood: other syntax comes out as the literal text it is.
#pragma once

#include <string>
#include <string_view>

namespace corral::cli::man {

// The body of a page from `markdown`: "#" titles are dropped (the page has its own),
// "##" become sections and "###" subsections.
std::string markdown_to_roff(std::string_view markdown);

// The part of `markdown` from the line "## `heading`" to the end; empty when there is
// no such heading.
std::string_view from_heading(std::string_view markdown, std::string_view heading);

}  // namespace corral::cli::man
