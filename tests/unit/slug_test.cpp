#include <doctest/doctest.h>

#include <regex>
#include <set>

#include "lease/slug.hpp"

TEST_CASE("slugs are adjective-noun and avoid taken names") {
  std::set<std::string> taken;
  std::regex shape("[a-z]+-[a-z]+(-[0-9]+)?");
  for (int i = 0; i < 200; ++i) {
    std::string s = corral::make_slug([&](const std::string& c) { return taken.count(c) != 0; });
    CHECK(std::regex_match(s, shape));
    CHECK(taken.insert(s).second);
  }
}

TEST_CASE("when every pick collides a numeric suffix makes the slug unique") {
  unsigned calls = 0;
  auto always_zero = [&](unsigned) {
    ++calls;
    return 0u;
  };
  std::set<std::string> taken = {"amber-badger", "amber-badger-2"};
  std::string s = corral::make_slug([&](const std::string& c) { return taken.count(c) != 0; }, always_zero);
  CHECK(s == "amber-badger-3");
  CHECK(calls > 0);
}
