// `corral conformance` itself: a conformant provider passes every check it advertises the
// feature for, a plugin that breaks the contract fails the checks that cover the break
// with the reason, and the kit leaves nothing behind that it could remove.
#include <doctest/doctest.h>

#include <algorithm>

#include "cli.hpp"
#include "conformance_run.hpp"
#include "corral/json.hpp"

namespace fs = std::filesystem;
using corral::test::CliEnv;
using corral::test::conformance_of;

namespace {

const std::string kDir = CORRAL_TEST_PLUGIN_DIR;

bool has(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// A user with the testbox and mountbox test providers installed.
struct Boxes : CliEnv {
  fs::path boxes = root().path() / "boxes";
  Boxes() {
    fs::create_directories(boxes);
    add_registry("boxes", {kDir + "/libcorral-testbox.so", kDir + "/libcorral-mountbox.so"});
    env["TESTBOX_DIR"] = boxes.string();
    env["TESTBOX_TOKEN"] = "tb-secret-value-5551234";
  }
  bool empty() const { return fs::is_empty(boxes); }
};

}  // namespace

TEST_CASE("testbox passes every check; the report lists each with its outcome") {
  Boxes user;
  auto r = conformance_of(user, "testbox");
  INFO(r.failures);
  CHECK(r.cli.exit_code == 0);
  CHECK(r.failed.empty());
  // testbox advertises run-session, archive-sync, url-bridge, keep-alive, cleanup and run-downloads.
  for (const char* id : {"lifecycle", "exit-codes", "output-separate", "output-binary", "output-large", "workspace",
                         "workdir", "environment", "timeout", "interrupt", "keep-reuse", "sync-deletions",
                         "keep-on-failure", "downloads", "url", "extend", "listing", "stop", "nothing-left"})
    CHECK_MESSAGE(has(r.passed, id), id);
  CHECK(user.empty());
  CHECK(user.claims().empty());
}

TEST_CASE("a workspace-mount provider passes too; what it does not advertise is skipped, not failed") {
  Boxes user;
  auto r = conformance_of(user, "mountbox");
  INFO(r.failures);
  CHECK(r.cli.exit_code == 0);
  CHECK(has(r.passed, "sync-deletions"));  // through the mount
  CHECK(has(r.skipped, "url"));
  CHECK(has(r.skipped, "extend"));
  CHECK(has(r.skipped, "downloads"));
  CHECK(user.empty());
}

TEST_CASE("the human report has one line per check and a summary") {
  Boxes user;
  auto r = user.run({"conformance", "--provider", "mountbox"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("conformance of provider 'mountbox':\n") == 0);
  CHECK(r.out.find("  ok    lifecycle ") != std::string::npos);
  CHECK(r.out.find("  skip  url ") != std::string::npos);
  CHECK(r.out.find("the provider does not advertise url-bridge") != std::string::npos);
  CHECK(r.out.find("mountbox: 16 passed, 0 failed, 3 skipped\n") != std::string::npos);
}

TEST_CASE("a plugin whose exec fails fails the checks that run commands, with its reason, and exits 1") {
  Boxes user;
  user.env["TESTBOX_FAIL"] = "exec";
  auto r = conformance_of(user, "testbox");
  INFO(r.failures);
  CHECK(r.cli.exit_code == 1);
  CHECK(has(r.failed, "lifecycle"));
  CHECK(has(r.failed, "output-large"));
  CHECK(r.failures.find("testbox exec failed as asked") != std::string::npos);
  // The provider's secret option value is redacted from the reasons.
  CHECK(r.failures.find("tb-secret-value-5551234") == std::string::npos);
  CHECK(r.cli.err.find("tb-secret-value-5551234") == std::string::npos);
  CHECK(has(r.passed, "nothing-left"));  // every failed run still removed its sandbox
  CHECK(user.empty());
}

TEST_CASE("a plugin that cannot destroy fails lifecycle and nothing-left, naming what is left") {
  Boxes user;
  user.env["TESTBOX_FAIL"] = "destroy";
  auto r = conformance_of(user, "testbox");
  CHECK(r.cli.exit_code == 1);
  CHECK(has(r.failed, "lifecycle"));
  CHECK(has(r.failed, "nothing-left"));
  CHECK(r.failures.find("left behind") != std::string::npos);
}

TEST_CASE("an unknown provider is a usage error before anything runs") {
  CliEnv env;
  auto r = env.run({"conformance", "--provider", "nope"});
  CHECK(r.exit_code == 64);
  CHECK(r.out.empty());
  CHECK(r.err.find("nope") != std::string::npos);
}

TEST_CASE("a plugin that hands corral's environment to commands fails environment, without printing the secret") {
  Boxes user;
  user.env["TESTBOX_LEAK"] = "true";
  auto r = conformance_of(user, "testbox");
  CHECK(r.cli.exit_code == 1);
  CHECK(has(r.failed, "environment"));
  CHECK(r.failures.find("the secret planted in corral's environment reached the command's output") !=
        std::string::npos);
  CHECK(r.cli.out.find("planted-secret-") == std::string::npos);
  CHECK(r.cli.err.find("planted-secret-") == std::string::npos);
  CHECK(user.empty());
}
