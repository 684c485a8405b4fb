// The Markdown the plugin guide is written in, as roff: what corral-plugin(7) is made of.
#include <doctest/doctest.h>

#include <string>

#include "markdown.hpp"
#include "roff.hpp"

using namespace corral::cli::man;

TEST_CASE("roff escapes: backslashes, dashes as \\-, UTF-8 as one glyph each, a leading dot or quote guarded") {
  CHECK(escape_chars("a\\b --id") == "a\\eb \\-\\-id");
  CHECK(escape_chars("x \xE2\x80\x94 y \xC3\xA9") == "x \\[u2014] y \\[u00E9]");
  CHECK(escape(".so /etc/passwd\n'x\nok") == "\\&.so /etc/passwd\n\\&'x\nok");
}

TEST_CASE("a paragraph is one line; inline code stays code across the Markdown's line break; links keep their text") {
  const std::string roff = markdown_to_roff("Use `remote::Identity{a,\nb}` and [the guide](docs/x.md) **now**.\n");
  CHECK(roff == ".PP\nUse \\fBremote::Identity{a, b}\\fR and the guide \\fBnow\\fR.\n");
  CHECK(markdown_to_roff(".hidden start\n") == ".PP\n\\&.hidden start\n");
  CHECK(markdown_to_roff("caf\xC3\xA9 \xE2\x80\xA6\n") == ".PP\ncaf\\[u00E9] \\[u2026]\n");
}

TEST_CASE("headings, code blocks, lists and tables") {
  const std::string md =
      "# Title\n\n## Errors\n\n### Detail\n\n```cpp\n.x = 1;\n```\n\n    indented\n\n"
      "- one\n  more\n- two\n\n| a | b |\n|---|---|\n| `x` | y \\| z |\n";
  CHECK(markdown_to_roff(md) ==
        ".SH \"Errors\"\n.SS \"Detail\"\n"
        ".PP\n.RS 4\n.nf\n\\&.x = 1;\n.fi\n.RE\n"
        ".PP\n.RS 4\n.nf\n\\&indented\n.fi\n.RE\n"
        ".IP \\(bu 2\none more\n.IP \\(bu 2\ntwo\n"
        ".TP\n\\fBx\\fR\nb: y | z\n");
  CHECK(from_heading("## A\nx\n## B\ny\n", "B") == "## B\ny\n");
  CHECK(from_heading("## A\n", "B").empty());
}
