// Names carry ownership: only names corral made parse, and label filters are decided
// from the name alone.
#include <doctest/doctest.h>

#include "sandbox_name.hpp"

using namespace corral::docker_sandbox;

TEST_CASE("sandbox names: corral-<slug>-<hex>") {
  std::string n = sandbox_name("My Repo_2", "calm-otter");
  CHECK(n.rfind("corral-my-repo-2-", 0) == 0);
  CHECK(n.size() == std::string("corral-my-repo-2-").size() + 8);
  CHECK(sandbox_name("x", "calm-otter") != sandbox_name("x", "brave-fox"));
  CHECK(sandbox_name("x", "calm-otter") == sandbox_name("x", "calm-otter"));
  CHECK(clean_slug("--") == "run");
  CHECK(clean_slug("é") == "run");
  CHECK(clean_slug(std::string(100, 'a')).size() == 40);
}

TEST_CASE("sandbox names: parse only corral-made names") {
  auto parts = parse_sandbox_name(sandbox_name("web-app", "lease-1"));
  REQUIRE(parts);
  CHECK(parts->slug == "web-app");
  CHECK(parts->tag == lease_tag("lease-1"));
  CHECK_FALSE(parse_sandbox_name("shell-myproject"));
  CHECK_FALSE(parse_sandbox_name("corral-"));
  CHECK_FALSE(parse_sandbox_name("corral-x-ZZZZZZZZ"));
  CHECK_FALSE(parse_sandbox_name("corral-x-1234567"));
  CHECK_FALSE(parse_sandbox_name("corral-Upper-12345678"));
  CHECK_FALSE(parse_sandbox_name("my-corral-x-12345678"));
}

TEST_CASE("sandbox names: label filters") {
  auto parts = *parse_sandbox_name(sandbox_name("web", "lease-1"));
  CHECK(name_matches(parts, {}));
  CHECK(name_matches(parts, {{"corral-owner", "corral"}}));
  CHECK(name_matches(parts, {{"corral-owner", "corral"}, {"corral-lease", "lease-1"}, {"corral-slug", "web"}}));
  CHECK_FALSE(name_matches(parts, {{"corral-owner", "someone"}}));
  CHECK_FALSE(name_matches(parts, {{"corral-lease", "lease-2"}}));
  CHECK_FALSE(name_matches(parts, {{"corral-slug", "api"}}));
  CHECK_FALSE(name_matches(parts, {{"team", "x"}}));  // a label the name cannot carry
  CHECK(labels_of(parts).at("corral-owner") == "corral");
  CHECK(labels_of(parts).at("corral-slug") == "web");
}

TEST_CASE("sandbox names: corral's own lease ids are carried whole and labelled") {
  const std::string lease = "0123456789ab";
  std::string n = sandbox_name("web", lease);
  CHECK(n == "corral-web-0123456789ab");
  auto parts = parse_sandbox_name(n);
  REQUIRE(parts);
  CHECK(parts->slug == "web");
  CHECK(labels_of(*parts).at("corral-lease") == lease);
  CHECK(name_matches(*parts, {{"corral-lease", lease}}));
  CHECK_FALSE(name_matches(*parts, {{"corral-lease", "0123456789ac"}}));
  // Names made before lease ids were carried whole still parse, without a lease label.
  auto old = parse_sandbox_name("corral-web-" + lease_tag("lease-1"));
  REQUIRE(old);
  CHECK(old->slug == "web");
  CHECK(labels_of(*old).count("corral-lease") == 0);
  CHECK(name_matches(*old, {{"corral-lease", "lease-1"}}));
}
