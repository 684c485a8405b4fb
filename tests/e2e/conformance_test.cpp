// `corral conformance` itself: a conformant provider passes every check it advertises the
// feature for, a plugin that breaks the contract fails the checks that cover the break
// with the reason, and the kit leaves nothing behind that it could remove.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "cli.hpp"
#include "base/hash.hpp"
#include "conformance_run.hpp"
#include "corral/json.hpp"

namespace fs = std::filesystem;
namespace json = corral::json;
using corral::test::CliEnv;
using corral::test::conformance_of;

namespace {

const std::string kDir = CORRAL_TEST_PLUGIN_DIR;

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

bool has(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// The kit run with only `ids`, against testbox broken with TESTBOX_FLAW=`flaw`: it must
// exit 1 with exactly those checks failed, in the kit's order.
corral::test::ConformanceRun flawed(Boxes& user, const std::string& flaw, const std::vector<std::string>& ids) {
  user.env["TESTBOX_FLAW"] = flaw;
  std::vector<std::string> only;
  for (const std::string& id : ids) only.insert(only.end(), {"--only", id});
  auto r = conformance_of(user, "testbox", only);
  CHECK(r.cli.exit_code == 1);
  CHECK(r.failed == ids);
  return r;
}

// A TCP port of 127.0.0.1 that nothing listens on (bound, then let go).
int closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace

TEST_CASE("testbox passes every check; the report lists each with its outcome") {
  Boxes user;
  auto r = conformance_of(user, "testbox");
  INFO(r.failures);
  CHECK(r.cli.exit_code == 0);
  CHECK(r.failed.empty());
  // testbox advertises run-session, archive-sync, url-bridge, keep-alive, cleanup, run-downloads, pause-resume, fork,
  // network-policy and network-allowlist, and enforces the policies as the stand-ins do.
  for (const char* id : {"lifecycle", "exit-codes", "argv", "output-separate", "output-binary", "output-large",
                         "output-streams", "workspace", "workdir", "environment", "timeout", "interrupt",
                         "network-none", "network-allowlist", "destroy-twice", "get-not-found", "keep-reuse", "sync-deletions", "keep-on-failure", "downloads", "url",
                         "extend", "listing", "pause-resume", "fork", "shards-from", "stop", "nothing-left"})
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
  CHECK(has(r.skipped, "pause-resume"));
  CHECK(has(r.skipped, "fork"));
  CHECK(has(r.skipped, "network-none"));
  CHECK(has(r.skipped, "network-allowlist"));
  CHECK(has(r.passed, "workdir"));  // the mounted tree's own subfolder, written through
  CHECK(has(r.passed, "destroy-twice"));
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
  CHECK(r.out.find("mountbox: 20 passed, 0 failed, 12 skipped\n") != std::string::npos);
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
  CHECK_MESSAGE(r.failures.find("the value of CORRAL_CONFORMANCE_SECRET (planted in corral's environment by the kit) "
                                "reached the command's output") != std::string::npos,
                r.failures);
  CHECK(r.cli.out.find("kit-planted-") == std::string::npos);
  CHECK(r.cli.err.find("kit-planted-") == std::string::npos);
  CHECK(user.empty());
}

TEST_CASE("a plugin that ignores cancellation fails interrupt and timeout as such, within the kit's grace") {
  Boxes user;
  auto r = flawed(user, "ignore-cancel", {"timeout", "interrupt"});
  // The kit gives a plugin 5 s after a stop, then kills its helper: never the command's 120 s.
  CHECK_MESSAGE(r.failures.find("interrupt: provider plugin 'testbox' ignored cancellation: 'exec' was still running "
                                "5 s after Ctrl-C, so corral stopped its helper process") != std::string::npos,
                r.failures);
  CHECK_MESSAGE(r.failures.find("timeout: provider plugin 'testbox' ignored cancellation: 'exec' was still running 5 s "
                                "after the command's --timeout (2s)") != std::string::npos,
                r.failures);
  // A fresh helper removed the sandboxes all the same.
  CHECK(user.empty());
  CHECK(user.claims().empty());
}

TEST_CASE("--only runs the checks named; an unknown name is a usage error listing every check") {
  Boxes user;
  auto r = conformance_of(user, "testbox", {"--only", "lifecycle"});
  CHECK(r.cli.exit_code == 0);
  CHECK(r.passed == std::vector<std::string>{"lifecycle"});
  CHECK(r.skipped.empty());

  auto bad = user.run({"conformance", "--provider", "testbox", "--only", "lifecycel"});
  CHECK(bad.exit_code == 64);
  CHECK(bad.out.empty());
  CHECK(bad.err.find("--only lifecycel: there is no such check") != std::string::npos);
  CHECK(bad.err.find("the checks are: lifecycle, exit-codes,") != std::string::npos);
  CHECK(bad.err.find("destroy-twice") != std::string::npos);

  // A comma list is one unknown name: the error says --only repeats, and how to write it.
  auto listed = user.run({"conformance", "--provider", "testbox", "--only", "lifecycle,exit-codes"});
  CHECK(listed.exit_code == 64);
  CHECK(listed.out.empty());
  CHECK_MESSAGE(listed.err.find("--only lifecycle,exit-codes: there is no such check; --only takes one check and "
                                "repeats") != std::string::npos, listed.err);
  CHECK_MESSAGE(listed.err.find("write `--only lifecycle --only exit-codes`") != std::string::npos, listed.err);
  CHECK(user.empty());
}

TEST_CASE("a check that hangs is stopped at --check-timeout with a clear verdict, and nothing is left") {
  Boxes user;
  user.env["TESTBOX_CRASH"] = "exec:hang";  // deaf to everything: only the kit's deadline ends the check
  auto r = conformance_of(user, "testbox", {"--only", "lifecycle", "--check-timeout", "2s"});
  CHECK(r.cli.exit_code == 1);
  CHECK(r.failed == std::vector<std::string>{"lifecycle"});
  CHECK_MESSAGE(r.failures.find("lifecycle: stopped: the check was still running after 2s (--check-timeout); it "
                                "then said: ") != std::string::npos,
                r.failures);
  CHECK(r.failures.find("ignored cancellation") != std::string::npos);
  CHECK(user.empty());
  CHECK(user.claims().empty());

  auto bad = user.run({"conformance", "--provider", "testbox", "--check-timeout", "soon"});
  CHECK(bad.exit_code == 64);
}

TEST_CASE("a plugin that ignores the network policy fails network-none and network-allowlist") {
  Boxes user;
  auto r = flawed(user, "ignore-network", {"network-none", "network-allowlist"});
  CHECK_MESSAGE(r.failures.find("with --network none the command still reached 127.0.0.1:") != std::string::npos,
                r.failures);
  CHECK(r.failures.find("the provider does not enforce the policy") != std::string::npos);
  CHECK(r.failures.find("with --network allow:192.0.2.1 the command still reached 127.0.0.1:") != std::string::npos);
  CHECK(r.failures.find("does not enforce its allow list") != std::string::npos);
  CHECK(user.empty());
}

TEST_CASE("the network checks are skipped, never passed, when even an open network cannot reach the target") {
  Boxes user;
  // A port of this machine nothing listens on: as unreachable as the kit's listener is
  // from a sandbox on another machine.
  const std::string target = "127.0.0.1:" + std::to_string(closed_port());
  auto r = conformance_of(user, "testbox",
                          {"--only", "network-none", "--only", "network-allowlist", "--network-target", target});
  CHECK(r.cli.exit_code == 0);
  CHECK(r.skipped == std::vector<std::string>{"network-none", "network-allowlist"});
  auto human = user.run({"conformance", "--provider", "testbox", "--only", "network-none", "--network-target", target});
  CHECK_MESSAGE(human.out.find("even with an open network the command could not reach " + target) != std::string::npos,
                human.out);

  auto bad = user.run({"conformance", "--provider", "testbox", "--network-target", "example.com:80"});
  CHECK(bad.exit_code == 64);
  CHECK(bad.err.find("--network-target must be an IPv4 address and a port") != std::string::npos);
  CHECK(user.empty());
}

TEST_CASE("a plugin that ignores the command's folder, or runs it in the user's own, fails workdir") {
  Boxes user;
  auto top = flawed(user, "ignore-cwd", {"workdir"});
  // What ran, where, and how it failed: the author sees the cause without rerunning.
  CHECK_MESSAGE(top.failures.find("workdir: exit code 1, expected 0, from sh -c \"cat 'dir/nested file.txt' && pwd") !=
                    std::string::npos,
                top.failures);
  CHECK_MESSAGE(top.failures.find("in the fixture's folder sub; its stderr ended ") != std::string::npos, top.failures);
  // The same files, the same folder name: only where the command wrote tells.
  auto host = flawed(user, "host-cwd", {"workdir"});
  CHECK_MESSAGE(host.failures.find("workdir: the command wrote into the user's own folder, not into the sandbox's "
                                   "copy of it") != std::string::npos,
                host.failures);
  CHECK(user.empty());
}

TEST_CASE("a plugin that joins the argv into one shell string fails argv, naming the argument that changed") {
  Boxes user;
  auto joined = flawed(user, "join-argv", {"argv"});
  CHECK_MESSAGE(joined.failures.find("argv: the printer of its 56 arguments exited 2") != std::string::npos,
                joined.failures);
  CHECK_MESSAGE(joined.failures.find("joins an argv into one shell string") != std::string::npos, joined.failures);
  CHECK(user.empty());
}

TEST_CASE("a plugin that fails to destroy a sandbox already gone fails destroy-twice") {
  Boxes user;
  auto r = flawed(user, "fail-destroy-gone", {"destroy-twice"});
  CHECK_MESSAGE(r.failures.find("destroying sandbox tb-") != std::string::npos, r.failures);
  CHECK(r.failures.find("once more failed: testbox cannot destroy") != std::string::npos);
  CHECK(user.empty());
}

TEST_CASE("a plugin that passes on a credential by its name or its shape fails environment, naming it, its value masked") {
  Boxes user;
  // The user's own TESTBOX_API_TOKEN: watched where it is, never overwritten, never printed.
  user.env["TESTBOX_API_TOKEN"] = "acme-live-token-777";
  auto named = flawed(user, "forward-named", {"environment"});
  CHECK_MESSAGE(named.failures.find("environment: the value of TESTBOX_API_TOKEN (a credential of yours) reached the "
                                    "command's output") != std::string::npos,
                named.failures);
  CHECK(named.cli.out.find("acme-live-token-777") == std::string::npos);
  CHECK(named.cli.err.find("acme-live-token-777") == std::string::npos);
  // Unset, the kit plants one under that name: the provider's name, shaped like ACME_API_TOKEN.
  user.env.erase("TESTBOX_API_TOKEN");
  auto planted = flawed(user, "forward-named", {"environment"});
  CHECK_MESSAGE(planted.failures.find("the value of TESTBOX_API_TOKEN (planted in corral's environment by the kit)") !=
                    std::string::npos,
                planted.failures);
  CHECK(planted.cli.out.find("kit-planted-") == std::string::npos);
  // Every *_TOKEN and *_KEY: the first the kit watches shows, and no value does.
  auto shaped = flawed(user, "forward-shaped", {"environment"});
  CHECK_MESSAGE(shaped.failures.find("reached the command's output") != std::string::npos, shaped.failures);
  CHECK(shaped.cli.out.find("kit-planted-") == std::string::npos);
  CHECK(shaped.cli.out.find("tb-secret-value-5551234") == std::string::npos);
  CHECK(user.empty());
}

TEST_CASE("a plugin whose list leaves out paused sandboxes fails pause-resume: stop --orphans would never find them") {
  Boxes user;
  auto r = flawed(user, "list-skips-paused", {"pause-resume"});
  CHECK_MESSAGE(r.failures.find("pause-resume: list left out the paused sandbox tb-") != std::string::npos, r.failures);
  CHECK(r.failures.find("corral stop --orphans would never find it") != std::string::npos);
  CHECK(user.empty());
}

TEST_CASE("a plugin that reads an option its spec does not declare is refused, the name and the declared ones given") {
  Boxes user;
  user.env["TESTBOX_FLAW"] = "misspelt-option";
  // No check runs: --json gives the error object instead of a report.
  auto r = user.run({"conformance", "--provider", "testbox", "--json"});
  CHECK(r.exit_code == 70);
  const json::Document doc = json::parse(r.out, "the conformance error");
  REQUIRE(doc.HasMember("error"));
  CHECK_MESSAGE(json::get_string(doc["error"], "message")
                        .find("the plugin read option 'dirr', which its spec does not declare: a misspelt name in its "
                              "code") != std::string::npos,
                r.out);
  CHECK(json::get_string(doc["error"], "hint").find("its spec declares dir, fail, crash") != std::string::npos);
  CHECK(r.err.find("the plugin read option 'dirr'") != std::string::npos);  // and the terminal says it too
  CHECK(user.empty());
}

TEST_CASE("output handed over only when the command ends fails output-streams, and interrupt says why, not 'ignored'") {
  Boxes user;
  auto r = flawed(user, "buffer-output", {"output-streams", "interrupt"});
  CHECK_MESSAGE(r.failures.find("output-streams: the command printed a line, slept 3 s and printed another, but the two "
                                "arrived ") != std::string::npos,
                r.failures);
  CHECK(r.failures.find("the plugin hands output over when the command ends") != std::string::npos);
  CHECK(r.failures.find("interrupt: Ctrl-C could not be pressed while the command ran") != std::string::npos);
  CHECK(r.failures.find("ignor") == std::string::npos);
  CHECK(user.empty());
}

TEST_CASE("a get that never says not-found fails get-not-found alone: nothing is blamed on destroy or called left behind") {
  Boxes user;
  user.env["TESTBOX_FLAW"] = "get-never-not-found";
  auto r = conformance_of(user, "testbox", {"--only", "lifecycle", "--only", "destroy-twice", "--only", "get-not-found",
                                            "--only", "nothing-left"});
  CHECK(r.cli.exit_code == 1);
  CHECK(r.failed == std::vector<std::string>{"get-not-found"});
  CHECK(r.passed == std::vector<std::string>{"lifecycle", "destroy-twice", "nothing-left"});
  CHECK_MESSAGE(r.failures.find("get-not-found: get of sandbox tb-") != std::string::npos, r.failures);
  CHECK(r.failures.find(", which never existed, answered state \"running\" instead of not-found") !=
        std::string::npos);
  CHECK(user.empty());
}

TEST_CASE("--record writes what was verified; providers and describe show it while it is for the installed file") {
  Boxes user;
  const fs::path record = user.root().path() / "testbox.conformance.json";
  user.env["TESTBOX_FLAW"] = "list-skips-paused";
  auto r = conformance_of(user, "testbox", {"--record", record.string()});
  CHECK(r.cli.exit_code == 1);
  CHECK(r.cli.err.find("verification record written to " + record.string()) != std::string::npos);
  const json::Document doc = json::parse(corral::test::read_file(record), "record");
  CHECK(json::get_int(doc, "record") == 1);
  CHECK(json::get_string(doc, "provider") == "testbox");
  CHECK(json::get_string(doc["plugin"], "file") == "libcorral-testbox.so");
  CHECK(json::get_string(doc["plugin"], "sha256") == corral::sha256_file(kDir + "/libcorral-testbox.so"));
  CHECK(json::get_string(doc["plugin"], "version") == "1.0.0");
  CHECK(json::get_string(doc, "date").size() == 10);
  CHECK(json::get_string(doc, "contract") == "verified");
  CHECK(json::get_string(doc["features"], "run-session") == "verified");
  CHECK(json::get_string(doc["features"], "fork") == "verified");
  CHECK(json::get_string(doc["features"], "pause-resume") == "failed");  // the planted bug
  CHECK(json::get_string(doc["features"], "network-allowlist-domains") == "not-checkable");
  CHECK(!doc["features"].HasMember("workspace-mount"));  // not declared: not in the record

  // Named by the registry entry, the record shows in `corral providers` and `describe`.
  user.env.erase("TESTBOX_FLAW");
  user.add_registry("boxes", {kDir + "/libcorral-testbox.so", kDir + "/libcorral-mountbox.so"},
                    {{"record", record.string()}});
  auto table = user.run({"providers"});
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("VERIFIED") != std::string::npos);
  CHECK_MESSAGE(table.out.find("9 of 10 checkable features, failed: pause-resume (corral ") != std::string::npos,
                table.out);
  auto described = user.run({"providers", "describe", "testbox"});
  CHECK(described.out.find("  pause-resume               failed ") != std::string::npos);
  CHECK(described.out.find("  fork                       verified ") != std::string::npos);
  CHECK(described.out.find("Verified by the conformance kit of corral ") != std::string::npos);
  auto as_json = user.run({"providers", "describe", "testbox", "--json"});
  const json::Document described_json = json::parse(as_json.out, "describe");
  CHECK(described_json["verification"]["counts"].GetBool());
  CHECK(json::get_string(described_json["verification"]["features"], "pause-resume") == "failed");
  // mountbox's entry names the same record, which is testbox's file's: it does not count.
  auto mountbox = user.run({"providers", "describe", "mountbox"});
  CHECK_MESSAGE(mountbox.out.find("Not verified: verification record " + record.string() +
                                  " is for another build of the plugin (its sha256 differs)") != std::string::npos,
                mountbox.out);
  CHECK(mountbox.out.find("  run-session                declared ") != std::string::npos);

  // A record that is not one is named, and the plugin still loads and runs.
  user.root().write("testbox.conformance.json", "{\"record\": 1, \"provider\": 7}");
  auto broken = user.run({"providers", "describe", "testbox"});
  CHECK(broken.exit_code == 0);
  CHECK_MESSAGE(broken.out.find("Not verified: verification record " + record.string() + ": ") != std::string::npos,
                broken.out);
  CHECK(user.run({"providers"}).out.find("unreadable record") != std::string::npos);
  // A FIFO in its place is refused, never waited on.
  fs::remove(record);
  REQUIRE(::mkfifo(record.c_str(), 0600) == 0);
  auto fifo = user.run({"providers", "describe", "testbox"});
  CHECK(fifo.exit_code == 0);
  CHECK_MESSAGE(fifo.out.find("Not verified: verification record ") != std::string::npos, fifo.out);
  CHECK(fifo.out.find("  run-session                declared ") != std::string::npos);
}

TEST_CASE("the docs matrix marks each feature from the records: verified, failed or declared only") {
  Boxes user;
  const fs::path records = user.root().path() / "records";
  fs::create_directories(records);
  user.env["TESTBOX_FLAW"] = "list-skips-paused";
  conformance_of(user, "testbox", {"--record", (records / "testbox.json").string(), "--only", "lifecycle", "--only",
                                   "pause-resume", "--only", "listing"});
  user.env.erase("TESTBOX_FLAW");
  auto md = user.run({"docs", "matrix", "--records", records.string()});
  REQUIRE_MESSAGE(md.exit_code == 0, md.err);
  // Verified where every check of it passed; failed where one failed; unmarked where a
  // check of it did not run (--only) or none covers it; mountbox has no record.
  CHECK_MESSAGE(md.out.find("keep-alive, cleanup ✓, pause-resume ✗, run-downloads, network-policy,") != std::string::npos,
                md.out);
  CHECK(md.out.find("run contract not verified |") != std::string::npos);
  CHECK(md.out.find("| no record: declared only |") != std::string::npos);
  CHECK(md.out.find("- ✓ **verified**: `corral conformance` ran every check of the feature") != std::string::npos);
  auto js = user.run({"docs", "matrix", "--format", "json", "--records", records.string()});
  const json::Document doc = json::parse(js.out, "matrix");
  for (const auto& p : doc["providers"].GetArray()) {
    if (json::get_string(p, "name") == "testbox")
      CHECK(json::get_string(p["verification"]["features"], "pause-resume") == "failed");
    else
      CHECK(p["verification"].IsNull());
  }
  // A record under another provider's name is refused, naming the file.
  fs::copy_file(records / "testbox.json", records / "mountbox.json");
  auto wrong = user.run({"docs", "matrix", "--records", records.string()});
  CHECK(wrong.exit_code == 78);
  CHECK(wrong.err.find("is provider 'testbox's, not 'mountbox's") != std::string::npos);
}
