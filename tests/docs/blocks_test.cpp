// Marker blocks and the staleness diff.
#include <doctest/doctest.h>

#include "corral/types.hpp"
#include "docs_blocks.hpp"

using namespace corral;
using docs::kMatrixMarkers;

namespace {
const std::string kBegin(kMatrixMarkers.begin), kEnd(kMatrixMarkers.end);
}

TEST_CASE("replace_block rewrites only the text between the markers") {
  const std::string doc = "# Title\n\nIntro | kept.\n\n" + kBegin + "\nold\n" + kEnd + "\n\nOutro.\n";
  const std::string out = docs::replace_block(doc, kMatrixMarkers, "new 1\nnew 2\n", "README.md");
  CHECK(out == "# Title\n\nIntro | kept.\n\n" + kBegin + "\nnew 1\nnew 2\n" + kEnd + "\n\nOutro.\n");
  CHECK(docs::extract_block(out, kMatrixMarkers, "README.md") == std::string("\nnew 1\nnew 2\n"));
  CHECK(docs::replace_block(out, kMatrixMarkers, "new 1\nnew 2\n", "README.md") == out);
}

TEST_CASE("malformed markers are refused rather than guessed") {
  CHECK(docs::extract_block("no markers here\n", kMatrixMarkers, "f") == std::nullopt);
  CHECK_THROWS_WITH_AS(docs::replace_block("no markers\n", kMatrixMarkers, "x\n", "f.md"),
                       doctest::Contains("f.md has no '<!-- BEGIN GENERATED PROVIDER MATRIX -->'"), Error);
  CHECK_THROWS_WITH_AS(docs::extract_block(kBegin + "\n", kMatrixMarkers, "f.md"),
                       doctest::Contains("'<!-- END GENERATED PROVIDER MATRIX -->' appears 0 times"), Error);
  CHECK_THROWS_WITH_AS(docs::extract_block(kBegin + kEnd + kBegin, kMatrixMarkers, "f.md"),
                       doctest::Contains("appears 2 times"), Error);
  CHECK_THROWS_WITH_AS(docs::extract_block(kEnd + "\n" + kBegin, kMatrixMarkers, "f.md"),
                       doctest::Contains("comes before"), Error);
}

TEST_CASE("stale_diff is silent for equal text and shows changed lines with context") {
  CHECK(docs::stale_diff("f", "a\nb\n", "a\nb\n") == std::nullopt);
  const std::string before = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n";
  const std::string after = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n11\n12\nthirteen\n";
  auto diff = docs::stale_diff("docs/x.md", before, after);
  REQUIRE(diff);
  CHECK(*diff ==
        "--- docs/x.md (on disk)\n+++ docs/x.md (generated)\n"
        "@@ -3,5 +3,5 @@\n 3\n 4\n-5\n+five\n 6\n 7\n"
        "@@ -11,2 +11,3 @@\n 11\n 12\n+thirteen\n");
}

TEST_CASE("stale_diff merges nearby changes, caps its length and notices a lost final newline") {
  auto merged = docs::stale_diff("f", "a\nb\nc\nd\ne\n", "A\nb\nc\nd\nE\n");
  REQUIRE(merged);
  CHECK(merged->find("@@ -1,5 +1,5 @@\n-a\n+A\n b\n c\n d\n-e\n+E\n") != std::string::npos);
  std::string many_a, many_b;
  for (int i = 0; i < 100; ++i) {
    many_a += "old " + std::to_string(i) + "\n";
    many_b += "new " + std::to_string(i) + "\n";
  }
  auto capped = docs::stale_diff("f", many_a, many_b, 10);
  REQUIRE(capped);
  CHECK(capped->find("... and 190 more changed lines") != std::string::npos);
  auto newline = docs::stale_diff("f", "a\n", "a");
  REQUIRE(newline);
  CHECK(newline->find("differ only in their final newline") != std::string::npos);
}
