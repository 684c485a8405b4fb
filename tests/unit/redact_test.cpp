#include <doctest/doctest.h>

#include "corral/sdk/redact.hpp"

TEST_CASE("registered secrets are masked wherever they appear") {
  corral::sdk::Redactor r;
  r.add("sk-live-123456");
  r.add("abc");  // too short to mask safely
  r.add("sk-live-123456-extended");
  CHECK(r.apply("key sk-live-123456 and sk-live-123456-extended!") == "key *** and ***!");
  CHECK(r.apply("abc stays") == "abc stays");
  CHECK(r.apply("nothing here") == "nothing here");
}
