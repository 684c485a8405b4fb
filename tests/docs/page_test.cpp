// Provider pages: settings table, features, metadata, and prose that survives.
#include <doctest/doctest.h>

#include "docs_blocks.hpp"
#include "docs_page.hpp"
#include "registry_fixture.hpp"

using namespace corral;
using corral::test::TempDir;

namespace {

ProviderSpec spec_of(const std::string& variant) {
  TempDir dir;
  Registry registry = test::load_registry(dir, {variant});
  REQUIRE(registry.entries().size() == 1);
  REQUIRE(registry.entries()[0].ok());
  return *registry.entries()[0].spec;
}

}  // namespace

TEST_CASE("a page has the settings table with flag, env, default, secret and meaning") {
  const std::string page = docs::provider_page(spec_of("cloudbox"), "\nprose\n");
  CHECK(page.rfind(std::string(docs::kPageMark) + " cloudbox`", 0) == 0);
  CHECK(page.find("| Option | Flag | Environment | Default | Type | Secret | Meaning |") != std::string::npos);
  CHECK(page.find("| `api-key` | env or config only | `CLOUDBOX_API_KEY`, `CB_KEY` | none | string | yes | the "
                  "API key |\n") != std::string::npos);
  CHECK(page.find("| `region` | `--cloudbox-region` | `CLOUDBOX_REGION` | `eu` | string | no | where sandboxes run "
                  "(one of: eu, us) |\n") != std::string::npos);
  CHECK(page.find("| `lifetime` | `--cloudbox-lifetime` | `CLOUDBOX_LIFETIME` | `1h` | duration | no | how long a "
                  "sandbox lives \\| then it is deleted |\n") != std::string::npos);
  CHECK(page.find("| `endpoint` | `--cloudbox-endpoint` | `CLOUDBOX_URL` | `https://api.cloudbox.invalid` | string | "
                  "no | the API endpoint (user-only: not from a repository's corral.yaml) |\n") != std::string::npos);
  CHECK(page.find("| `session-token` | env or config only | none | none | string | yes |") != std::string::npos);
  CHECK(page.find("`cloudbox.<option>`") != std::string::npos);
}

TEST_CASE("a page lists every feature as supported or not, and the docs metadata") {
  const std::string page = docs::provider_page(spec_of("mountbox"), "\n");
  CHECK(page.find("| `workspace-mount` | yes |") != std::string::npos);
  CHECK(page.find("| `cleanup` | yes |") != std::string::npos);
  CHECK(page.find("| `run-session` | no |") != std::string::npos);
  CHECK(page.find("| `archive-sync` | no |") != std::string::npos);
  CHECK(page.find("| Runs | self-hosted |") != std::string::npos);
  CHECK(page.find("| Kind | `ssh-lease`: ") != std::string::npos);
  CHECK(page.find("| Authentication | none |") != std::string::npos);
  CHECK(page.find("| Main caveat | commands change local files |") != std::string::npos);
  CHECK(page.find("This provider takes no settings.") != std::string::npos);
  CHECK(page.find("[All providers](README.md)") != std::string::npos);
}

TEST_CASE("regenerating keeps the hand-written prose byte for byte") {
  const ProviderSpec spec = spec_of("hybridbox");
  const std::string fresh = docs::regenerate_page(spec, std::nullopt, "hybridbox.md");
  CHECK(fresh.find("No hand-written notes yet") != std::string::npos);
  CHECK(docs::extract_block(fresh, docs::kProseMarkers, "page") == docs::default_prose(spec));

  const std::string prose = "\n## Setup\n\nAsk ops for a `HYBRIDBOX_TOKEN`.  Trailing spaces stay.  \n\n";
  std::string edited = docs::replace_block(fresh, docs::kProseMarkers, prose.substr(1), "page");
  // Someone also edits a generated line by hand: regeneration puts it back.
  const std::string generated_line = "| Best fit | mixed workloads |";
  edited.replace(edited.find(generated_line), generated_line.size(), "| Best fit | everything |");
  const std::string again = docs::regenerate_page(spec, edited, "hybridbox.md");
  CHECK(docs::extract_block(again, docs::kProseMarkers, "page") == prose);
  CHECK(again.find(generated_line) != std::string::npos);
  CHECK(again.find("everything") == std::string::npos);
  CHECK(docs::regenerate_page(spec, again, "hybridbox.md") == again);
}

TEST_CASE("a page with text but no prose markers is refused, an empty one starts fresh") {
  const ProviderSpec spec = spec_of("barebox");
  CHECK_THROWS_WITH_AS(docs::regenerate_page(spec, std::string("# My notes\n"), "barebox.md"),
                       doctest::Contains("barebox.md has text but no '<!-- BEGIN HAND-WRITTEN -->'"), Error);
  CHECK(docs::regenerate_page(spec, std::string("\n  \n"), "barebox.md") ==
        docs::provider_page(spec, docs::default_prose(spec)));
}
