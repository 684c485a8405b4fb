// The matrix generator over a registry of test plugins: rows, legend, JSON, and the
// failures that name the plugin and the field.
#include <doctest/doctest.h>

#include <algorithm>

#include "corral/json.hpp"
#include "docs_matrix.hpp"
#include "corral/errors.hpp"
#include "registry_fixture.hpp"

using namespace corral;
using corral::test::TempDir;

namespace {

std::vector<ProviderSpec> good_specs(const TempDir& dir) {
  return docs::documented_specs(test::load_registry(dir, test::kGoodProviders).entries());
}

// The message of the ConfigError that documented_specs throws for `variants`.
std::string failure(const std::vector<std::string>& variants) {
  TempDir dir;
  Registry registry = test::load_registry(dir, variants);
  try {
    docs::documented_specs(registry.entries());
  } catch (const ConfigError& e) {
    return e.what();
  }
  FAIL("documented_specs accepted a registry with a broken provider");
  return {};
}

size_t occurrences(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("specs come back sorted by name whatever the registry order") {
  TempDir dir;
  std::vector<std::string> names;
  for (const ProviderSpec& s : good_specs(dir)) names.push_back(s.name);
  CHECK(names == std::vector<std::string>{"barebox", "cloudbox", "hybridbox", "mountbox"});
}

TEST_CASE("each feature combination becomes the row its spec implies") {
  TempDir dir;
  const std::string md = docs::matrix_markdown(good_specs(dir));
  CHECK(md.find("| [barebox](barebox.md) | service-control | none | no record: declared only | isolation: not stated | none | linux | local; GPU: no | one run per "
                "sandbox; cleanup: the service | none | smoke tests | no workspace |\n") != std::string::npos);
  CHECK(md.find("| [cloudbox](cloudbox.md) (aliases: cb, cloud-box) | delegated-run | run-session, url-bridge, "
                "archive-sync, keep-alive, cleanup, pause-resume | no record: declared only | isolation: microVM; pause: "
                "memory kept, for 7 days | archive | linux, linux-arm64 | cloud; GPU: yes "
                "(A100, H100) | kept and reused on request, extendable, pausable, leftovers found by `corral stop "
                "--orphans`; cleanup: corral; the provider deletes expired sandboxes | `CLOUDBOX_API_KEY` or "
                "`CB_KEY`, `cloudbox.session-token` | GPU jobs | billed per second |\n") != std::string::npos);
  CHECK(md.find("| [hybridbox](hybridbox.md) | delegated-run | run-session, archive-sync, workspace-mount | no record: "
                "declared only | isolation: not stated | archive, mount | linux | cloud; GPU: no | kept and reused on request; cleanup: provider TTL | "
                "`HYBRIDBOX_TOKEN` | mixed workloads | two sync paths |\n") != std::string::npos);
  CHECK(md.find("| [mountbox](mountbox.md) | ssh-lease | workspace-mount, cleanup | no record: declared only | isolation: not stated | mount | "
                "linux, macos | "
                "self-hosted; GPU: no | one run per sandbox, leftovers found by `corral stop --orphans`; cleanup: "
                "corral | none | big builds on your own hardware | commands change local files |\n") !=
        std::string::npos);
  // Rows in name order, after the header.
  CHECK(md.find("| Provider | Kind | Features | Verified | What they mean here | Workspace sync |") < md.find("[barebox]"));
  CHECK(md.find("[barebox]") < md.find("[cloudbox]"));
  CHECK(md.find("[hybridbox]") < md.find("[mountbox]"));
}

TEST_CASE("a record marks each feature verified or failed; the rest stay unmarked, and the row says by which kit") {
  TempDir dir;
  docs::Verifications verified;
  verified["cloudbox"] = {.kit = "1.2.3", .date = "2026-12-01", .contract = "verified",
                          .features = {{"run-session", "verified"}, {"keep-alive", "failed"},
                                       {"cleanup", "not-verified"}, {"pause-resume", "not-checkable"}}};
  const std::string md = docs::matrix_markdown(good_specs(dir), verified);
  CHECK_MESSAGE(md.find("| run-session ✓, url-bridge, archive-sync, keep-alive ✗, cleanup, pause-resume | kit of corral "
                        "1.2.3, 2026-12-01; run contract ✓ |") != std::string::npos,
                md);
  CHECK(md.find("| ssh-lease | workspace-mount, cleanup | no record: declared only |") != std::string::npos);
  json::Document doc = json::parse(docs::matrix_json(good_specs(dir), verified), "matrix");
  for (const auto& p : doc["providers"].GetArray()) {
    if (json::get_string(p, "name") != "cloudbox") {
      CHECK(p["verification"].IsNull());
      continue;
    }
    CHECK(json::get_string(p["verification"], "kit") == "1.2.3");
    CHECK(json::get_string(p["verification"]["features"], "keep-alive") == "failed");
  }
}

TEST_CASE("the legend explains every kind and feature exactly once") {
  TempDir dir;
  const std::string md = docs::matrix_markdown(good_specs(dir));
  for (Feature f : kAllFeatures)
    CHECK(occurrences(md, "- `" + std::string(to_string(f)) + "`: " + std::string(describe(f))) == 1);
  for (ProviderKind k : kAllKinds)
    CHECK(occurrences(md, "- `" + std::string(to_string(k)) + "`: " + std::string(describe(k))) == 1);
  for (const char* column : {"**Workspace sync**", "**Runs; GPU**", "**Lifecycle; cleanup**", "**Authentication**"})
    CHECK(occurrences(md, column) == 1);
}

TEST_CASE("the output is deterministic and names no local path") {
  TempDir a, b;
  auto first = good_specs(a), second = good_specs(b);
  CHECK(docs::matrix_markdown(first) == docs::matrix_markdown(second));
  CHECK(docs::matrix_json(first) == docs::matrix_json(second));
  for (const std::string& text : {docs::matrix_markdown(first), docs::matrix_json(first)}) {
    CHECK(text.find(CORRAL_DOCS_PLUGIN_DIR) == std::string::npos);
    CHECK(text.find(a.str()) == std::string::npos);
    CHECK(text.find("1.2.3") == std::string::npos);  // plugin versions would churn the docs
  }
}

TEST_CASE("the JSON matrix carries the same facts, with every option") {
  TempDir dir;
  json::Document doc = json::parse(docs::matrix_json(good_specs(dir)), "matrix");
  REQUIRE(doc["providers"].Size() == 4);
  CHECK(doc["features"].Size() == kAllFeatures.size());
  CHECK(doc["kinds"].Size() == kAllKinds.size());
  const json::Value& cloud = doc["providers"][1];
  CHECK(std::string(cloud["name"].GetString()) == "cloudbox");
  CHECK(std::string(cloud["page"].GetString()) == "cloudbox.md");
  CHECK(std::string(cloud["workspaceSync"].GetString()) == "archive");
  CHECK(std::string(cloud["gpu"].GetString()) == "yes (A100, H100)");
  CHECK(std::string(cloud["location"].GetString()) == "cloud");
  REQUIRE(cloud["authentication"].Size() == 2);
  CHECK(std::string(cloud["authentication"][0]["env"][1].GetString()) == "CB_KEY");
  CHECK(cloud["authentication"][1]["env"].Size() == 0);
  CHECK(std::string(cloud["authentication"][1]["configKey"].GetString()) == "cloudbox.session-token");
  REQUIRE(cloud["options"].Size() == 5);
  const json::Value& endpoint = cloud["options"][3];
  CHECK(std::string(endpoint["flag"].GetString()) == "--cloudbox-endpoint");
  CHECK(std::string(endpoint["default"].GetString()) == "https://api.cloudbox.invalid");
  CHECK_FALSE(endpoint["repositoryMaySet"].GetBool());   // trusted
  CHECK_FALSE(cloud["options"][0]["repositoryMaySet"].GetBool());  // secret
  CHECK(cloud["options"][0]["flag"].IsNull());  // never on the command line
  CHECK(cloud["options"][1]["repositoryMaySet"].GetBool());
  CHECK_FALSE(cloud["options"][4].HasMember("default"));
  CHECK(std::string(doc["providers"][0]["workspaceSync"].GetString()) == "none");
  CHECK(std::string(doc["providers"][2]["workspaceSync"].GetString()) == "archive, mount");
}

TEST_CASE("a plugin missing docs fields fails the generator, naming the plugin and each field") {
  const std::string message = failure({"cloudbox", "incomplete", "mountbox"});
  CHECK(message.find("registry entry 'libcorral-docs-incomplete.so' did not load") != std::string::npos);
  CHECK(message.find("provider 'incomplete' has an incomplete spec: docs.gpu is missing") != std::string::npos);
  CHECK(message.find("docs.caveat is missing") != std::string::npos);
  CHECK(message.find("options 'mystery': help is missing") != std::string::npos);
  CHECK(message.find("docs.category") == std::string::npos);  // present fields are not blamed
  CHECK(message.find("cloudbox") == std::string::npos);
  CHECK(message.find("mountbox") == std::string::npos);
}

TEST_CASE("a plugin advertising an unknown feature fails the generator with the loader's error") {
  const std::string message = failure({"cloudbox", "teleporter"});
  CHECK(message.find("registry entry 'libcorral-docs-teleporter.so' did not load") != std::string::npos);
  CHECK(message.find("field 'features': unknown feature 'teleport'") != std::string::npos);
}

TEST_CASE("spec problems: tree-sync without archive-sync, which says how that upload travels") {
  ProviderSpec spec;
  spec.name = "x";
  spec.docs = {"cat", "local", "no", "corral", "fit", "caveat"};
  spec.targets = {"linux"};
  spec.features = {corral::Feature::tree_sync};
  CHECK(corral::spec_problems(spec) == std::vector<std::string>{"features list tree-sync but not archive-sync"});
  spec.features.insert(corral::Feature::archive_sync);
  CHECK(corral::spec_problems(spec).empty());
}

TEST_CASE("spec problems: what pause, fork or network mean, given for a feature the provider lacks") {
  ProviderSpec spec;
  spec.name = "x";
  spec.docs = {"cat", "local", "no", "corral", "fit", "caveat"};
  spec.targets = {"linux"};
  spec.docs.isolation = "a jail";  // always welcome
  spec.docs.fork = "one at a time";
  spec.docs.network = "none";
  CHECK(corral::spec_problems(spec) == std::vector<std::string>{"docs.fork is given but features lack fork",
                                                                "docs.network is given but features lack network-policy"});
  spec.features = {corral::Feature::run_session, corral::Feature::fork, corral::Feature::network_policy};
  CHECK(corral::spec_problems(spec).empty());
  CHECK(docs::meanings(spec) == "isolation: a jail; fork: one at a time; network: none");
  spec.features.insert(corral::Feature::pause_resume);  // declared, its meaning not given
  CHECK(docs::meanings(spec) == "isolation: a jail; pause: not stated; fork: one at a time; network: none");
}

TEST_CASE("every broken provider is reported at once") {
  const std::string message = failure({"incomplete", "teleporter"});
  CHECK(message.find("teleport") != std::string::npos);
  CHECK(message.find("docs.gpu") != std::string::npos);
}

TEST_CASE("spec problems: blank fields, an unknown location, no targets") {
  ProviderSpec spec;
  spec.name = "x";
  spec.docs = {"cat", "mars", "no", "corral", "fit", "  "};
  spec.options.push_back({.name = "o", .help = ""});
  auto problems = corral::spec_problems(spec);
  CHECK(problems == std::vector<std::string>{"docs.caveat is missing",
                                             "docs.location is 'mars', not one of local, cloud, self-hosted",
                                             "targets is missing", "options 'o': help is missing"});
  spec.docs = {"cat", "self-hosted", "no", "corral", "fit", "caveat"};
  spec.targets = {"linux"};
  spec.options[0].help = "what o does";
  CHECK(corral::spec_problems(spec).empty());
  CHECK_NOTHROW(docs::require_documented(spec, "/x.so"));
  spec.docs.gpu = "";
  CHECK_THROWS_WITH_AS(docs::require_documented(spec, "/x.so"),
                       doctest::Contains("provider 'x' (plugin /x.so): docs.gpu is missing"), ConfigError);
}

TEST_CASE("credentials a provider holds outside corral show in the authentication column") {
  TempDir dir;
  std::vector<ProviderSpec> specs = good_specs(dir);
  const std::string before = docs::matrix_markdown(specs);
  specs[0].docs.authentication = "a sign-in held by its CLI";
  const std::string md = docs::matrix_markdown(specs);
  CHECK(before.find("a sign-in held by its CLI") == std::string::npos);
  CHECK(md.find("a sign-in held by its CLI") != std::string::npos);
  json::Document doc = json::parse(docs::matrix_json(specs), "matrix");
  CHECK(std::string(doc["providers"][0]["externalAuthentication"].GetString()) == "a sign-in held by its CLI");
}

TEST_CASE("cells keep a table intact") {
  CHECK(docs::cell("a | b\nc") == "a \\| b c");
  CHECK(docs::cell("at <port>-<id>, `<kept>` | x") == "at &lt;port>-&lt;id>, `<kept>` \\| x");
  CHECK(docs::workspace_sync({}) == "none");
  CHECK(docs::workspace_sync({Feature::workspace_mount}) == "mount");
}

TEST_CASE("an empty registry still yields a valid document") {
  const std::string md = docs::matrix_markdown({});
  CHECK(md.find("No provider is installed.") != std::string::npos);
  CHECK(json::parse(docs::matrix_json({}), "matrix")["providers"].Size() == 0);
}
