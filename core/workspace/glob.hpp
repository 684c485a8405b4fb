// One gitignore glob (git's wildmatch with WM_PATHNAME), compiled to a small automaton
// and matched by simulating every live state at once: time is bounded by pattern × path
// length, whatever the pattern (a backtracking matcher is exponential on "*****x").
#pragma once

#include <bitset>
#include <string>
#include <string_view>
#include <vector>

namespace corral {

class Glob {
 public:
  // Compiles `pattern`: '*' (not across '/'), '?', '[...]' with '!'/'^' negation, ranges
  // and [:alpha:]-style classes, '\' escapes, '**/' (zero or more folders), '/**' and a
  // whole-segment '**' (anything). Throws corral::Error(invalid-argument) for a pattern
  // git would silently never match: an unterminated '[', an unknown '[:name:]' or a
  // trailing '\'.
  static Glob compile(std::string_view pattern);
  // True when the whole of `text` ('/'-separated) matches.
  bool matches(std::string_view text) const;

 private:
  enum class Op : unsigned char { literal, any_char, char_class, star, deep_star, skip };
  struct Token {
    Op op = Op::literal;
    char literal = 0;
    std::size_t jump = 0;        // skip: the token after the optional "**/" group
    std::bitset<256> chars;      // char_class: the bytes it accepts ('/' never)
  };
  // Adds the epsilon moves (stars may match nothing, skip jumps) to `states`.
  void close(std::vector<char>& states) const;
  static std::size_t parse_class(std::string_view pattern, std::size_t open, Token& token);

  std::vector<Token> tokens_;
  // Fast paths for the common shapes: the whole pattern is `literal_`, or '*' + `literal_`.
  enum class Shape : unsigned char { general, literal, star_suffix } shape_ = Shape::general;
  std::string literal_;
};

}  // namespace corral
