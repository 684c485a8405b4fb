#include <doctest/doctest.h>

#include "ignore.hpp"

using corral::IgnoreRules;

TEST_CASE(".corralignore follows gitignore semantics") {
  IgnoreRules r = IgnoreRules::parse(
      "# comment\n"
      "*.log\n"
      "build/\n"
      "/top.txt\n"
      "docs/**/*.pdf\n"
      "!keep.log\n"
      "data/\n"
      "!data/keep.csv\n");
  CHECK(r.ignored("a.log"));
  CHECK(r.ignored("deep/in/b.log"));
  CHECK_FALSE(r.ignored("keep.log"));
  CHECK(r.ignored("build/out.o"));
  CHECK(r.ignored("sub/build/out.o"));
  CHECK_FALSE(r.ignored("build"));  // a file called build is not the folder
  CHECK(r.ignored("top.txt"));
  CHECK_FALSE(r.ignored("sub/top.txt"));
  CHECK(r.ignored("docs/a/b/c.pdf"));
  CHECK(r.ignored("docs/c.pdf"));
  CHECK_FALSE(r.ignored("docs/c.md"));
  // Like git: a file inside an excluded folder cannot be re-included.
  CHECK(r.ignored("data/keep.csv"));
  CHECK_FALSE(r.ignored("src/main.cpp"));
}

TEST_CASE("character classes and escapes") {
  IgnoreRules r = IgnoreRules::parse("file[0-9].txt\n\\#hash\nsp?ce\n");
  CHECK(r.ignored("file7.txt"));
  CHECK_FALSE(r.ignored("fileA.txt"));
  CHECK(r.ignored("#hash"));
  CHECK(r.ignored("space"));
  CHECK_FALSE(r.ignored("sp/ce"));
}
