#include "docs_blocks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "corral/types.hpp"

namespace corral::docs {
namespace {

struct Span {
  std::size_t begin;  // offset of the begin marker
  std::size_t inner;  // first byte after the begin marker
  std::size_t end;    // offset of the end marker
};

// Counts the occurrences of `needle` in `haystack`.
std::size_t count(std::string_view haystack, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t at = haystack.find(needle); at != std::string_view::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

// Where the markers are; nullopt when neither is present; throws when malformed.
std::optional<Span> locate(std::string_view document, const Markers& m, std::string_view what) {
  const std::size_t begins = count(document, m.begin), ends = count(document, m.end);
  if (begins == 0 && ends == 0) return std::nullopt;
  auto broken = [&](std::string problem) {
    return Error(ErrorCode::invalid_argument, fmt::format("{}: {}", what, problem),
                 fmt::format("keep exactly one '{}' line followed by one '{}' line", m.begin, m.end));
  };
  if (begins != 1) throw broken(fmt::format("'{}' appears {} times", m.begin, begins));
  if (ends != 1) throw broken(fmt::format("'{}' appears {} times", m.end, ends));
  Span s{document.find(m.begin), 0, document.find(m.end)};
  s.inner = s.begin + m.begin.size();
  if (s.end < s.inner) throw broken(fmt::format("'{}' comes before '{}'", m.end, m.begin));
  return s;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  return lines;
}

// One line of an edit script: kept (' '), only in the file ('-') or only generated ('+').
struct Edit {
  char op;
  std::size_t a;  // 0-based line in `actual` (for ' ' and '-')
  std::size_t b;  // 0-based line in `expected` (for ' ' and '+')
};

// The shortest edit script from `a` to `b` by longest common subsequence. Only the part
// between the common prefix and suffix is compared; when that part is too large for the
// quadratic table it is reported as replaced wholesale (docs files are small).
std::vector<Edit> edit_script(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
  std::size_t pre = 0;
  while (pre < a.size() && pre < b.size() && a[pre] == b[pre]) ++pre;
  std::size_t suf = 0;
  while (suf < a.size() - pre && suf < b.size() - pre && a[a.size() - 1 - suf] == b[b.size() - 1 - suf]) ++suf;
  const std::size_t n = a.size() - pre - suf, m = b.size() - pre - suf;

  std::vector<Edit> out;
  for (std::size_t i = 0; i < pre; ++i) out.push_back({' ', i, i});
  constexpr std::size_t kMaxCells = 4'000'000;
  if (n * m <= kMaxCells) {
    // lcs[i][j]: common subsequence length of a[pre+i..] and b[pre+j..] (middle only).
    std::vector<std::uint32_t> lcs((n + 1) * (m + 1), 0);
    auto at = [&](std::size_t i, std::size_t j) -> std::uint32_t& { return lcs[i * (m + 1) + j]; };
    for (std::size_t i = n; i-- > 0;)
      for (std::size_t j = m; j-- > 0;)
        at(i, j) = a[pre + i] == b[pre + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    std::size_t i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[pre + i] == b[pre + j]) {
        out.push_back({' ', pre + i++, pre + j++});
      } else if (i < n && (j == m || at(i + 1, j) >= at(i, j + 1))) {
        out.push_back({'-', pre + i++, pre + j});  // removals first, as diff -u prints them
      } else {
        out.push_back({'+', pre + i, pre + j++});
      }
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) out.push_back({'-', pre + i, pre});
    for (std::size_t j = 0; j < m; ++j) out.push_back({'+', pre + n, pre + j});
  }
  for (std::size_t k = 0; k < suf; ++k) out.push_back({' ', pre + n + k, pre + m + k});
  return out;
}

}  // namespace

std::optional<std::string> extract_block(std::string_view document, const Markers& markers, std::string_view what) {
  auto span = locate(document, markers, what);
  if (!span) return std::nullopt;
  return std::string(document.substr(span->inner, span->end - span->inner));
}

std::string replace_block(std::string_view document, const Markers& markers, std::string_view block,
                          std::string_view what) {
  auto span = locate(document, markers, what);
  if (!span)
    throw Error(ErrorCode::invalid_argument, fmt::format("{} has no '{}' ... '{}' block", what, markers.begin, markers.end),
                fmt::format("add the two marker lines where the generated text belongs, or write to a new file"));
  std::string out(document.substr(0, span->inner));
  out += "\n";
  out += block;
  out += document.substr(span->end);
  return out;
}

std::optional<std::string> stale_diff(std::string_view label, std::string_view actual, std::string_view expected,
                                      std::size_t max_lines) {
  if (actual == expected) return std::nullopt;
  const auto a = split_lines(actual), b = split_lines(expected);
  const std::vector<Edit> edits = edit_script(a, b);
  constexpr std::size_t kContext = 2;

  std::string out = fmt::format("--- {} (on disk)\n+++ {} (generated)\n", label, label);
  std::size_t printed = 0, hidden = 0;
  std::size_t k = 0;
  while (k < edits.size()) {
    if (edits[k].op == ' ') {
      ++k;
      continue;
    }
    // A hunk: changes no more than 2*kContext unchanged lines apart, plus context.
    const std::size_t start = k >= kContext ? k - kContext : 0;
    std::size_t last = k;
    for (std::size_t t = k + 1; t < edits.size() && t <= last + 2 * kContext; ++t)
      if (edits[t].op != ' ') last = t;
    const std::size_t end = std::min(edits.size(), last + 1 + kContext);
    std::string lines;
    std::size_t a_count = 0, b_count = 0;
    for (std::size_t t = start; t < end; ++t) {
      const Edit& e = edits[t];
      if (e.op != '+') ++a_count;
      if (e.op != '-') ++b_count;
      if (printed >= max_lines) {
        if (e.op != ' ') ++hidden;
        continue;
      }
      std::string_view text = e.op == '+' ? b[e.b] : a[e.a];
      lines += fmt::format("{}{}\n", e.op, text);
      ++printed;
    }
    if (!lines.empty())
      out += fmt::format("@@ -{},{} +{},{} @@\n{}", edits[start].a + 1, a_count, edits[start].b + 1, b_count, lines);
    k = end;
  }
  if (hidden == 0 && printed == 0) out += "(the files differ only in their final newline)\n";
  if (hidden > 0) out += fmt::format("... and {} more changed lines\n", hidden);
  return out;
}

}  // namespace corral::docs
