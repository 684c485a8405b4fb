// The CI check: the committed docs/providers/ is exactly what the built-in plugins'
// specs generate. Runs the built corral against the source tree as a hermetic user (no
// CORRAL_REGISTRY, empty /etc and config dirs), so private registries never count.
#include <doctest/doctest.h>

#include <filesystem>

#include "cli.hpp"

TEST_CASE("the committed docs/providers/ matches the built-in plugins' specs") {
  corral::test::CliEnv env;
  auto r = env.run({"docs", "all", "--dir", CORRAL_SOURCE_DOCS_DIR, "--check"});
  INFO("corral docs all --check said:\n", r.err,
       "\nRegenerate with scripts/docs.sh (after building) and commit docs/providers/.");
  CHECK(r.exit_code == 0);
  // Guard against a vacuous pass: every built-in provider has a page that was checked.
  auto providers = env.run({"providers"});
  REQUIRE(providers.exit_code == 0);
  int pages = 0;
  for (const auto& entry : std::filesystem::directory_iterator(CORRAL_SOURCE_DOCS_DIR)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".md" || name == "README.md") continue;
    ++pages;
    CHECK_MESSAGE(r.err.find(name + " is up to date") != std::string::npos, name, " was not checked");
    CHECK_MESSAGE(providers.out.find(entry.path().stem().string()) != std::string::npos, name, " has no provider");
  }
  CHECK(pages >= 2);
}
