#include "workspace/glob.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <utility>

#include "corral/types.hpp"

namespace corral {
namespace {

Error malformed(std::string_view pattern, std::string_view why) {
  return Error(ErrorCode::invalid_argument, fmt::format("{} in pattern '{}'", why, pattern),
               "git would silently never match this pattern; escape special characters with '\\'");
}

// Adds the bytes of the POSIX class `name` ("alpha") to `chars`; false for an unknown name.
bool add_named_class(std::string_view name, std::bitset<256>& chars) {
  using Test = int (*)(int);
  static const std::array<std::pair<std::string_view, Test>, 12> kClasses = {{
      {"alnum", ::isalnum}, {"alpha", ::isalpha}, {"blank", ::isblank}, {"cntrl", ::iscntrl},
      {"digit", ::isdigit}, {"graph", ::isgraph}, {"lower", ::islower}, {"print", ::isprint},
      {"punct", ::ispunct}, {"space", ::isspace}, {"upper", ::isupper}, {"xdigit", ::isxdigit},
  }};
  for (const auto& [known, test] : kClasses) {
    if (known != name) continue;
    for (int c = 1; c < 128; ++c)  // git tests ASCII only, whatever the locale
      if (test(c)) chars.set(static_cast<std::size_t>(c));
    return true;
  }
  return false;
}

}  // namespace

// Follows git's wildmatch class loop exactly: the first byte after '[' or '[!' is a
// member even when it is ']', '-' between two members is a range, '\' escapes.
std::size_t Glob::parse_class(std::string_view p, std::size_t open, Token& token) {
  const std::size_t n = p.size();
  std::size_t k = open + 1;
  bool negated = false;
  if (k < n && (p[k] == '!' || p[k] == '^')) {
    negated = true;
    ++k;
  }
  unsigned prev = 0;  // the previous single member, 0 after a range or named class
  for (bool first = true;; first = false, ++k) {
    if (k >= n) throw malformed(p, "unterminated '[' class");
    unsigned char ch = static_cast<unsigned char>(p[k]);
    if (!first && ch == ']') break;
    unsigned current = ch;
    if (ch == '\\') {
      if (++k >= n) throw malformed(p, "unterminated '[' class");
      current = static_cast<unsigned char>(p[k]);
      token.chars.set(current);
    } else if (ch == '-' && prev != 0 && k + 1 < n && p[k + 1] != ']') {
      unsigned high = static_cast<unsigned char>(p[++k]);
      if (high == '\\') {
        if (++k >= n) throw malformed(p, "unterminated '[' class");
        high = static_cast<unsigned char>(p[k]);
      }
      for (unsigned c = prev; c <= high; ++c) token.chars.set(c);
      current = 0;
    } else if (ch == '[' && k + 1 < n && p[k + 1] == ':') {
      std::size_t start = k + 2, end = start;
      while (end < n && p[end] != ']') ++end;
      if (end >= n) throw malformed(p, "unterminated '[' class");
      if (end == start || p[end - 1] != ':') {
        token.chars.set('[');  // no ":]": a plain '[' member, as git reads it
        current = '[';
      } else {
        std::string_view name = p.substr(start, end - 1 - start);
        if (!add_named_class(name, token.chars))
          throw malformed(p, fmt::format("unknown character class '[:{}:]'", name));
        k = end;
        current = 0;
      }
    } else {
      token.chars.set(ch);
    }
    prev = current;
  }
  if (negated) token.chars.flip();
  token.chars.reset('/');  // with WM_PATHNAME no class matches a folder separator
  token.chars.reset(0);
  token.op = Op::char_class;
  return k;  // the closing ']'
}

Glob Glob::compile(std::string_view p) {
  Glob g;
  const std::size_t n = p.size();
  auto push = [&](Op op, char literal = 0) {
    Token t;
    t.op = op;
    t.literal = literal;
    g.tokens_.push_back(std::move(t));
  };
  for (std::size_t i = 0; i < n;) {
    const char ch = p[i];
    if (ch == '\\') {
      if (i + 1 >= n) throw malformed(p, "trailing '\\' escapes nothing");
      push(Op::literal, p[i + 1]);
      i += 2;
    } else if (ch == '?') {
      push(Op::any_char);
      ++i;
    } else if (ch == '[') {
      Token t;
      i = parse_class(p, i, t) + 1;
      g.tokens_.push_back(std::move(t));
    } else if (ch == '*') {
      std::size_t j = i;
      while (j < n && p[j] == '*') ++j;
      // Like git, two or more stars are special only as a whole path segment.
      const bool segment_start = i == 0 || p[i - 1] == '/';
      const bool at_end = j == n;
      const bool slash_next = j < n && (p[j] == '/' || (p[j] == '\\' && j + 1 < n && p[j + 1] == '/'));
      if (j - i >= 2 && segment_start && at_end) {
        push(Op::deep_star);
      } else if (j - i >= 2 && segment_start && slash_next) {
        // "**/": nothing at all, or anything followed by '/'.
        const std::size_t at = g.tokens_.size();
        push(Op::skip);
        push(Op::deep_star);
        push(Op::literal, '/');
        g.tokens_[at].jump = at + 3;
        j += p[j] == '/' ? 1 : 2;
      } else {
        push(Op::star);
      }
      i = j;
    } else {
      push(Op::literal, ch);
      ++i;
    }
  }
  // Most real patterns are "name" or "*.ext": match those without the automaton.
  bool all_literal = true;
  for (std::size_t t = 0; t < g.tokens_.size(); ++t) {
    if (g.tokens_[t].op == Op::literal) continue;
    if (t == 0 && g.tokens_[t].op == Op::star) continue;
    all_literal = false;
    break;
  }
  if (all_literal) {
    std::size_t from = !g.tokens_.empty() && g.tokens_[0].op == Op::star ? 1 : 0;
    for (std::size_t t = from; t < g.tokens_.size(); ++t) g.literal_ += g.tokens_[t].literal;
    g.shape_ = from == 1 ? Shape::star_suffix : Shape::literal;
  }
  return g;
}

void Glob::close(std::vector<char>& states) const {
  // Every epsilon move goes forward, so one ascending pass reaches the closure.
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    if (!states[i]) continue;
    const Token& t = tokens_[i];
    if (t.op == Op::star || t.op == Op::deep_star) {
      states[i + 1] = 1;
    } else if (t.op == Op::skip) {
      states[i + 1] = 1;
      states[t.jump] = 1;
    }
  }
}

bool Glob::matches(std::string_view text) const {
  if (shape_ == Shape::literal) return text == literal_;
  if (shape_ == Shape::star_suffix) {
    if (text.size() < literal_.size()) return false;
    const std::size_t head = text.size() - literal_.size();
    return text.substr(head) == literal_ && text.substr(0, head).find('/') == std::string_view::npos;
  }
  const std::size_t m = tokens_.size();
  std::vector<char> current(m + 1, 0), next(m + 1, 0);
  current[0] = 1;
  close(current);
  for (const char c : text) {
    std::fill(next.begin(), next.end(), 0);
    bool alive = false;
    for (std::size_t i = 0; i < m; ++i) {
      if (!current[i]) continue;
      const Token& t = tokens_[i];
      bool advance = false;
      switch (t.op) {
        case Op::literal: advance = c == t.literal; break;
        case Op::any_char: advance = c != '/'; break;
        case Op::char_class: advance = t.chars.test(static_cast<unsigned char>(c)); break;
        case Op::star:
          if (c != '/') next[i] = alive = true;
          break;
        case Op::deep_star: next[i] = alive = true; break;
        case Op::skip: break;
      }
      if (advance) next[i + 1] = alive = true;
    }
    if (!alive) return false;
    close(next);
    current.swap(next);
  }
  return current[m] != 0;
}

}  // namespace corral
