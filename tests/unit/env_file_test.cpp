#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "base/env_file.hpp"
#include "corral/errors.hpp"

using corral::parse_env_file;
using Assignments = std::vector<std::pair<std::string, std::string>>;

namespace {

// The message parse_env_file throws for `text`, or "" when it reads it.
std::string refusal(const std::string& text) {
  try {
    parse_env_file(text, "f.env");
  } catch (const corral::Error& e) {
    CHECK(e.code() == corral::ErrorCode::invalid_argument);
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("an environment file's assignments are read in order, quotes and comments as dotenv files write them") {
  CHECK(parse_env_file("", "f.env").empty());
  CHECK(parse_env_file("# only a comment\n\n   \n", "f.env").empty());
  CHECK(parse_env_file("A=1\nexport B = two words \r\nC=\nD=x # note\nE=a#b\n", "f.env") ==
        Assignments{{"A", "1"}, {"B", "two words"}, {"C", ""}, {"D", "x"}, {"E", "a#b"}});
  // Single quotes keep everything; double quotes read \n, \t, \" and \\; nothing expands.
  CHECK(parse_env_file("S='$HOME \\n #x'\nQ=\"a\\nb\\t\\\"c\\\\\" # done\n", "f.env") ==
        Assignments{{"S", "$HOME \\n #x"}, {"Q", "a\nb\t\"c\\"}});
  // The last line needs no newline; a later assignment of a name comes after the first.
  CHECK(parse_env_file("A=1\nA=2", "f.env") == Assignments{{"A", "1"}, {"A", "2"}});
}

TEST_CASE("an environment file line of another shape is refused, naming the file and line") {
  CHECK(refusal("A=1\nplain words\n") == "f.env:2: 'plain words' is not NAME=VALUE");
  CHECK(refusal("1A=x") == "f.env:1: '1A=x' is not NAME=VALUE");
  CHECK(refusal("A-B=x") == "f.env:1: 'A-B=x' is not NAME=VALUE");
  CHECK(refusal("=x") == "f.env:1: '=x' is not NAME=VALUE");
  CHECK(refusal("A=\"open") == "f.env:1: the value's double quote is never closed");
  CHECK(refusal("A='x' y") == "f.env:1: text after the quoted value");
  CHECK(refusal(std::string("A=1\nB=x\0y\n", 10)) == "f.env:2: the line holds a NUL byte");
  // A control character in the line is shown escaped, never raw.
  CHECK(refusal("bad\x1b[2Jline") == "f.env:1: 'bad\\x1b[2Jline' is not NAME=VALUE");
}

TEST_CASE("a variable name is letters, digits and _, not first a digit") {
  CHECK(corral::is_env_name("PATH"));
  CHECK(corral::is_env_name("_x9"));
  CHECK_FALSE(corral::is_env_name(""));
  CHECK_FALSE(corral::is_env_name("9x"));
  CHECK_FALSE(corral::is_env_name("A=B"));
  CHECK_FALSE(corral::is_env_name("A B"));
}
