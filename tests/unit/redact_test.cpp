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

TEST_CASE("a private key is masked whole and line by line, its BEGIN and END lines kept") {
  corral::sdk::Redactor r;
  const std::string pem =
      "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n"
      "-----END PRIVATE KEY-----\n";
  r.add_pem(pem);
  CHECK(r.apply("key: " + pem) == "key: ***");
  CHECK(r.apply("it said BKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj here") == "it said *** here");
  CHECK(r.apply("-----BEGIN PRIVATE KEY-----") == "-----BEGIN PRIVATE KEY-----");
}
