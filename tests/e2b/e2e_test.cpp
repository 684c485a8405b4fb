// `corral --provider e2b` end to end against the stand-in E2B: every behaviour issue 3
// lists, each test checking afterwards which sandboxes are left and that no secret leaked.
#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <regex>
#include <thread>

#include "cli.hpp"
#include "four_shards.hpp"
#include "conformance_run.hpp"
#include "corral/json.hpp"
#include "private_network.hpp"
#include "e2b_cli.hpp"
#include "server.hpp"

using namespace corral;
using namespace corral::test;

namespace {

std::string str(const json::Value& v, const char* key) { return json::get_string(v, key); }


// The pid a command wrote into `file` of sandbox `id`'s workdir; 0 when there is none.
pid_t pid_written(E2bCli& t, const std::string& id, const std::string& file) {
  auto path = t.server.with([&](auto& st) { return st.sandboxes.at(id).root; }) / "home/user/workspace" / file;
  std::ifstream in(path);
  pid_t pid = 0;
  in >> pid;
  return pid;
}


// Waits (bounded) until nothing runs in sandbox `id` any more; true when so.
bool idle_soon(E2bCli& t, const std::string& id) {
  return eventually([&] { return t.server.with([&](auto& st) { return st.sandboxes.at(id).processes.empty(); }); });
}

// After a kept run whose command stream failed: the command (which wrote its pid to
// cmd.pid and appended "run" to runs.txt) ran once and was stopped by corral (nothing else
// stops a kept sandbox's command), and sandbox `id` is idle.
void check_stopped_once(E2bCli& t, const std::string& id) {
  const pid_t cmd = pid_written(t, id, "cmd.pid");
  REQUIRE(cmd > 0);
  CHECK(gone_within(cmd, std::chrono::seconds(5)));
  CHECK(idle_soon(t, id));
  auto root = t.server.with([&](auto& st) { return st.sandboxes.at(id).root; });
  CHECK(read_file(root / "home/user/workspace/runs.txt") == "run\n");
}

}  // namespace

TEST_CASE("providers describe e2b lists its settings with E2B's own variable names") {
  E2bCli t;
  CliResult r = t.run({"providers", "describe", "e2b"});
  REQUIRE(r.exit_code == 0);
  for (const char* s : {"E2B_API_KEY", "E2B_API_URL", "E2B_DOMAIN", "E2B_SANDBOX_URL", "CORRAL_E2B_TEMPLATE",
                        "--e2b-workdir", "--e2b-user", "--e2b-lifetime", "--e2b-create-timeout",
                        "CORRAL_E2B_REQUEST_TIMEOUT", "--e2b-stall-timeout", "https://api.e2b.app", "e2b.app",
                        "run-session", "url-bridge", "archive-sync", "keep-alive", "cleanup"})
    CHECK_MESSAGE(r.out.find(s) != std::string::npos, s);
}

TEST_CASE("a plain run streams the output, returns the exit code and deletes its sandbox") {
  E2bCli t;
  CliResult r = t.run_script("cat hello.txt; cat src/main.c >&2; exit 7");
  CHECK(r.exit_code == 7);
  CHECK(r.out == "hello from the workspace\n");
  CHECK(r.err.find("int main(void)") != std::string::npos);
  auto h = t.handle();
  CHECK(str(h, "provider") == "e2b");
  CHECK_FALSE(str(h, "leaseId").empty());
  CHECK_FALSE(str(h, "slug").empty());
  CHECK(json::get_bool(h, "reused") == false);
  CHECK(json::get_bool(h, "kept") == false);
  CHECK(str(h, "cleanupCommand") == "corral stop --provider e2b --id " + str(h, "leaseId"));
  // The sandbox was created tagged as corral's, then deleted.
  CHECK(t.server.calls("create") == 1);
  CHECK(t.server.calls("kill") == 1);
  CHECK(t.alive().empty());
}

TEST_CASE("--keep keeps the sandbox; status, url, extend, reuse with --id and stop work on it") {
  E2bCli t;
  CliResult r = t.run_script("cat hello.txt", {"--keep"});
  REQUIRE(r.exit_code == 0);
  auto h = t.handle();
  const std::string lease = str(h, "leaseId"), slug = str(h, "slug"), id = str(h, "sandboxId");
  CHECK(json::get_bool(h, "kept"));
  REQUIRE(t.alive() == std::vector<std::string>{id});
  auto meta = t.server.with([&](auto& st) { return st.sandboxes.at(id).metadata; });
  CHECK(meta["corral-owner"] == "corral");
  CHECK(meta["corral-lease"] == lease);
  CHECK(meta["corral-slug"] == slug);

  CliResult status = t.run({"status", "--id", lease, "--json"});
  CHECK(status.exit_code == 0);
  CHECK(status.out.find("running") != std::string::npos);
  CHECK(t.server.calls("connect") == 0);  // looking does not extend

  CliResult url = t.run({"url", "--id", lease, "--port", "3000"});
  CHECK(url.exit_code == 0);
  CHECK(url.out == "https://3000-" + id + ".e2b.app\n");

  CliResult ext = t.run({"extend", "--id", lease, "--by", "3h"});
  CHECK(ext.exit_code == 0);
  auto left = t.server.with([&](auto& st) { return st.sandboxes.at(id).end_at; }) - std::chrono::system_clock::now();
  CHECK(left > std::chrono::minutes(179));

  CliResult remote = t.run({"list", "--remote", "--provider", "e2b", "--json"});
  CHECK(remote.exit_code == 0);
  CHECK(remote.out.find(id) != std::string::npos);

  // The workspace changed: a reuse syncs it again and never deletes the sandbox, even
  // when the command fails.
  t.cli.root().write("work/hello.txt", "changed\n");
  CliResult again = t.run_script("cat hello.txt; exit 1", {"--id", slug});
  CHECK(again.exit_code == 1);
  CHECK(again.out == "changed\n");
  auto h2 = t.handle();
  CHECK(json::get_bool(h2, "reused"));
  CHECK(str(h2, "sandboxId") == id);
  CHECK(t.server.calls("connect") == 1);  // the reuse resumed and extended it once
  CHECK(t.alive() == std::vector<std::string>{id});

  // A file deleted locally leaves the sandbox on the next sync (its emptied folder too);
  // a file the sandbox made itself stays.
  REQUIRE(t.run_script("echo built > made.txt", {"--id", slug}).exit_code == 0);
  std::filesystem::remove_all(t.cli.workspace() / "src");
  CliResult synced = t.run_script("ls -a; test ! -e src", {"--id", slug});
  CHECK(synced.exit_code == 0);
  CHECK(synced.out.find("made.txt") != std::string::npos);
  CHECK(synced.out.find("hello.txt") != std::string::npos);
  CHECK(synced.out.find("src") == std::string::npos);

  CliResult stop = t.run({"stop", "--id", lease});
  CHECK(stop.exit_code == 0);
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("a kept sandbox that E2B deleted says so, and the handle is still written") {
  E2bCli t;
  REQUIRE(t.run_script("true", {"--keep"}).exit_code == 0);
  auto h = t.handle();
  const std::string lease = str(h, "leaseId"), id = str(h, "sandboxId");
  t.server.with([&](auto& st) { st.remove(id); return 0; });  // as when its lifetime ends
  std::filesystem::remove(t.handle_path());
  CliResult r = t.run_script("true", {"--id", lease});
  CHECK(r.exit_code == 66);
  CHECK(r.err.find(id) != std::string::npos);
  CHECK(r.err.find("lifetime") != std::string::npos);
  CHECK(r.err.find(lease) != std::string::npos);
  auto h2 = t.handle();
  CHECK(str(h2, "leaseId") == lease);
  CHECK(json::get_bool(h2, "reused"));
  CHECK(t.alive().empty());
  t.run({"stop", "--id", lease});
}

TEST_CASE("a lifetime above the account cap is retried at the cap with a warning") {
  E2bCli t;
  t.fault([](auto& f) { f.lifetime_cap_hours = 24; });
  CliResult r = t.run_script("echo ok", {"--e2b-lifetime", "48h"});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "ok\n");
  CHECK(r.err.find("corral: warning: E2B refused a sandbox lifetime of 48h") != std::string::npos);
  CHECK(r.err.find("Timeout cannot be greater than 24 hours") != std::string::npos);
  CHECK(r.err.find("--e2b-lifetime") != std::string::npos);
  auto bodies = t.server.with([](auto& st) { return st.create_bodies; });
  REQUIRE(bodies.size() == 2);
  CHECK(json::get_int(json::parse(bodies[1], "b"), "timeout") == 24 * 3600);
  CHECK(t.alive().empty());
}

TEST_CASE("an unknown template names the template, e2b template build and the setting") {
  E2bCli t;
  t.cli.env["CORRAL_E2B_TEMPLATE"] = "my-missing-template";
  CliResult r = t.run_script("true");
  CHECK(r.exit_code == 66);
  CHECK(r.err.find("corral: error: E2B template 'my-missing-template' was not found") != std::string::npos);
  CHECK(r.err.find("hint: build it with `e2b template build`") != std::string::npos);
  CHECK(r.err.find("CORRAL_E2B_TEMPLATE") != std::string::npos);
  CHECK(t.alive().empty());
}

TEST_CASE("rate-limit and server failures map to corral's exit codes") {
  E2bCli t;
  SUBCASE("429") {
    t.fault([](auto& f) { f.fail_route = "create"; f.fail_status = 429; });
    CHECK(t.run_script("true", {"--timeout", "2"}).exit_code == 75);
  }
  SUBCASE("500") {
    t.fault([](auto& f) { f.fail_route = "create"; f.fail_status = 500; });
    CliResult r = t.run_script("true");
    CHECK(r.exit_code == 69);
    CHECK(r.err.find("HTTP 500") != std::string::npos);
  }
  SUBCASE("a busy create is never sent twice: a second sandbox could be made") {
    t.fault([](auto& f) { f.fail_route = "create"; f.fail_status = 503; f.fail_times = 1; f.retry_after = "0"; });
    CHECK(t.run_script("true").exit_code == 69);
    CHECK(t.server.calls("create") == 1);
  }
  CHECK(t.alive().empty());
}

TEST_CASE("a server that echoes the API key or the envd token in its errors never gets them shown or stored") {
  E2bCli t;
  // The fixture's destructor checks every output, handle and claim for the key and every
  // token the stand-in issued; -v adds corral's own diagnostics to what is checked.
  SUBCASE("control plane: create fails quoting the key") {
    t.fault([](auto& f) { f.fail_route = "create"; f.fail_status = 500; f.echo_secrets = true; });
    CliResult r = t.run_script("true", {"-v"});
    CHECK(r.exit_code == 69);
    CHECK(r.err.find("X-API-Key: ") != std::string::npos);  // the echo arrived, redacted
    CHECK(r.err.find(t.server.api_key()) == std::string::npos);
  }
  SUBCASE("envd: the upload fails quoting the access token, after the sandbox exists") {
    t.fault([](auto& f) { f.fail_route = "files"; f.fail_status = 503; f.echo_secrets = true; });
    CliResult r = t.run_script("true", {"-v", "--keep-on-failure"});
    CHECK(r.exit_code == 69);
    CHECK(r.err.find("X-Access-Token: ") != std::string::npos);
    auto tokens = t.server.with([](auto& st) { return st.issued_tokens; });
    REQUIRE(!tokens.empty());  // there was a token to leak
    for (const auto& token : tokens) CHECK(r.err.find(token) == std::string::npos);
    t.handle();
    t.fault([](auto& f) { f.fail_route.clear(); });
    CHECK(t.run({"stop", "--all"}).exit_code == 0);
  }
  CHECK(t.alive().empty());
}

TEST_CASE("busy answers to calls that are safe to repeat are retried within bounds") {
  E2bCli t;
  SUBCASE("a 503, then a 429 with Retry-After, on deleting the sandbox: retried, nothing left") {
    t.fault([](auto& f) { f.fail_route = "kill"; f.fail_status = 503; f.fail_times = 1; });
    CliResult r = t.run_script("echo ran");
    CHECK(r.exit_code == 0);
    CHECK(r.out == "ran\n");
    CHECK(t.server.calls("kill") == 2);
    t.fault([](auto& f) { f.fail_route = "kill"; f.fail_status = 429; f.fail_times = 2; f.retry_after = "1"; });
    CHECK(t.run_script("true").exit_code == 0);
    CHECK(t.server.calls("kill") == 5);
  }
  SUBCASE("a 500 on deleting the sandbox: sent again (a delete is safe to repeat), nothing left") {
    t.fault([](auto& f) { f.fail_route = "kill"; f.fail_status = 500; f.fail_times = 1; });
    CliResult r = t.run_script("echo ran; exit 4");
    CHECK(r.exit_code == 4);
    CHECK(t.server.calls("kill") == 2);
    CHECK(t.cli.claims().empty());
  }
  SUBCASE("a 500, then a 502, on pausing a kept sandbox: sent again (a pause is safe to repeat), it is paused") {
    CHECK(t.run_script("true", {"--keep"}).exit_code == 0);
    const std::string lease = str(t.handle(), "leaseId");
    t.fault([](auto& f) { f.fail_route = "pause"; f.fail_status = 500; f.fail_times = 1; f.retry_after = "0"; });
    CliResult paused = t.run({"pause", "--id", lease});
    CHECK_MESSAGE(paused.exit_code == 0, paused.err);
    CHECK(t.server.calls("pause") == 2);
    CHECK(t.run({"resume", "--id", lease}).exit_code == 0);
    t.fault([](auto& f) { f.fail_route = "pause"; f.fail_status = 502; f.fail_times = 1; f.retry_after = "0"; });
    CHECK(t.run({"pause", "--id", lease}).exit_code == 0);
    CHECK(t.server.calls("pause") == 4);
    CHECK(t.run({"stop", "--id", lease}).exit_code == 0);
  }
  SUBCASE("a 429 asking for longer than corral waits is reported at once as a quota problem") {
    CHECK(t.run_script("true", {"--keep"}).exit_code == 0);
    const std::string lease = str(t.handle(), "leaseId");
    t.fault([](auto& f) { f.fail_route = "get"; f.fail_status = 429; f.retry_after = "3600"; });
    CliResult r = t.run({"status", "--id", lease});
    CHECK(r.exit_code == 75);
    CHECK(t.server.calls("get") == 1);
    t.fault([](auto& f) { f.fail_route.clear(); });
    CHECK(t.run({"stop", "--id", lease}).exit_code == 0);
  }
  SUBCASE("a service that stays busy is given up on after four retries") {
    CHECK(t.run_script("true", {"--keep"}).exit_code == 0);
    const std::string lease = str(t.handle(), "leaseId");
    t.fault([](auto& f) { f.fail_route = "get"; f.fail_status = 502; f.retry_after = "0"; });
    CliResult r = t.run({"status", "--id", lease});
    CHECK(r.exit_code == 69);
    CHECK(t.server.calls("get") == 5);
    t.fault([](auto& f) { f.fail_route.clear(); });
    CHECK(t.run({"stop", "--id", lease}).exit_code == 0);
  }
  SUBCASE("a 503, then 429s, on listing (list --remote, stop --orphans): retried, the kept sandbox stays") {
    CHECK(t.run_script("true", {"--keep"}).exit_code == 0);
    const std::string lease = str(t.handle(), "leaseId"), id = str(t.handle(), "sandboxId");
    t.fault([](auto& f) { f.fail_route = "list"; f.fail_status = 503; f.fail_times = 1; f.retry_after = "0"; });
    CliResult remote = t.run({"list", "--remote", "--provider", "e2b", "--json"});
    CHECK(remote.exit_code == 0);
    CHECK(remote.out.find(id) != std::string::npos);
    CHECK(t.server.calls("list") == 2);
    t.fault([](auto& f) { f.fail_route = "list"; f.fail_status = 429; f.fail_times = 2; f.retry_after = "0"; });
    CHECK(t.run({"stop", "--orphans", "--provider", "e2b"}).exit_code == 0);
    CHECK(t.server.calls("list") == 5);
    CHECK(t.alive() == std::vector<std::string>{id});
    CHECK(t.run({"stop", "--id", lease}).exit_code == 0);
  }
  SUBCASE("502s on extending the lifetime (timeout): retried, the new lifetime holds") {
    CHECK(t.run_script("true", {"--keep"}).exit_code == 0);
    const std::string lease = str(t.handle(), "leaseId"), id = str(t.handle(), "sandboxId");
    t.fault([](auto& f) { f.fail_route = "timeout"; f.fail_status = 502; f.fail_times = 2; f.retry_after = "0"; });
    CHECK(t.run({"extend", "--id", lease, "--by", "2h"}).exit_code == 0);
    CHECK(t.server.calls("timeout") == 3);
    auto left = t.server.with([&](auto& st) { return st.sandboxes.at(id).end_at; }) - std::chrono::system_clock::now();
    CHECK(left > std::chrono::minutes(119));
    CHECK(t.run({"stop", "--id", lease}).exit_code == 0);
  }
  SUBCASE("a 429 with Retry-After, then a 504, on resuming a kept sandbox (connect): retried, the command runs once") {
    CHECK(t.run_script("echo run >> runs.txt", {"--keep"}).exit_code == 0);
    const std::string lease = str(t.handle(), "leaseId"), id = str(t.handle(), "sandboxId");
    t.fault([](auto& f) { f.fail_route = "connect"; f.fail_status = 429; f.fail_times = 1; f.retry_after = "1"; });
    CliResult r = t.run_script("echo run >> runs.txt; cat runs.txt", {"--id", lease});
    CHECK(r.exit_code == 0);
    CHECK(r.out == "run\nrun\n");
    CHECK(t.server.calls("connect") == 2);
    t.fault([](auto& f) { f.fail_route = "connect"; f.fail_status = 504; f.fail_times = 1; f.retry_after = "0"; });
    r = t.run_script("cat runs.txt", {"--id", lease});
    CHECK(r.exit_code == 0);
    CHECK(r.out == "run\nrun\n");
    CHECK(t.server.calls("connect") == 4);
    CHECK(t.run({"stop", "--id", lease}).exit_code == 0);
  }
  CHECK(t.alive().empty());
}

TEST_CASE("a busy answer to starting a command is never retried: the command could run twice") {
  E2bCli t;
  CHECK(t.run_script("echo run >> runs.txt", {"--keep"}).exit_code == 0);
  const std::string lease = str(t.handle(), "leaseId"), id = str(t.handle(), "sandboxId");
  const int starts = t.server.calls("start");
  SUBCASE("503") {
    t.fault([](auto& f) { f.fail_route = "start"; f.fail_status = 503; f.fail_times = 1; f.retry_after = "0"; });
    CliResult r = t.run_script("echo run >> runs.txt", {"--id", lease});
    CHECK(r.exit_code == 69);
    CHECK(r.err.find("HTTP 503") != std::string::npos);
  }
  SUBCASE("429") {
    t.fault([](auto& f) { f.fail_route = "start"; f.fail_status = 429; f.fail_times = 1; f.retry_after = "0"; });
    CliResult r = t.run_script("echo run >> runs.txt", {"--id", lease});
    CHECK(r.exit_code == 75);
    CHECK(r.err.find("HTTP 429") != std::string::npos);
  }
  SUBCASE("502 from the edge while the sandbox is alive: unavailable, not taken for a sandbox that is gone") {
    t.fault([](auto& f) { f.fail_route = "start"; f.fail_status = 502; f.fail_times = 1; f.retry_after = "0"; });
    CliResult r = t.run_script("echo run >> runs.txt", {"--id", lease});
    CHECK(r.exit_code == 69);
    CHECK_MESSAGE(r.err.find("502") != std::string::npos, r.err);
    CHECK_MESSAGE(r.err.find("no longer exists") == std::string::npos, r.err);
  }
  // The workspace did not change, so the only Start was the command's, sent once.
  CHECK(t.server.calls("start") == starts + 1);
  auto runs = t.server.with([&](auto& st) { return st.sandboxes.at(id).root; }) / "home/user/workspace/runs.txt";
  CHECK(read_file(runs) == "run\n");
  CHECK(t.alive() == std::vector<std::string>{id});  // a reused lease is kept
  CHECK(t.run({"stop", "--id", lease}).exit_code == 0);
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("failures after the sandbox exists still return the handle and clean up") {
  E2bCli t;
  SUBCASE("the stream is cut before its end event") {
    t.fault([](auto& f) { f.cut_streams_from = 2; });  // the first Start unpacks the workspace
    CliResult r = t.run_script("echo partial");
    CHECK(r.exit_code == 69);
    INFO(r.err);
    CHECK(r.out == "partial\n");
    CHECK(r.err.find("ended before the command finished") != std::string::npos);
  }
  SUBCASE("the stream of the workspace unpacking is cut") {
    t.fault([](auto& f) { f.cut_streams_from = 1; });
    CliResult r = t.run_script("echo never");
    CHECK(r.exit_code == 69);
    CHECK(r.out.empty());
    CHECK(r.err.find("unpack the workspace") != std::string::npos);
  }
  SUBCASE("the upload fails") {
    t.fault([](auto& f) { f.fail_route = "files"; f.fail_status = 503; });
    CliResult r = t.run_script("echo never");
    CHECK(r.exit_code == 69);
    CHECK(r.out.empty());
  }
  SUBCASE("envd refuses the user") {
    CliResult r = t.run_script("true", {"--e2b-user", "nobody"});
    CHECK(r.exit_code == 77);
    CHECK(r.err.find("nobody") != std::string::npos);
  }
  auto h = t.handle();
  CHECK_FALSE(str(h, "leaseId").empty());
  CHECK(json::get_bool(h, "kept") == false);
  CHECK(t.alive().empty());
}

TEST_CASE("a connection that drops in the middle of an answer is not taken for a result") {
  E2bCli t;
  SUBCASE("envd: the command's stream drops while it runs; it is stopped, never run again") {
    t.fault([](auto& f) { f.cut_streams_from = 2; f.cut_how = "reset"; });  // the first Start unpacks
    CliResult r = t.run_script("echo $$ > cmd.pid; echo run >> runs.txt; echo partial; sleep 60", {"--keep"});
    CHECK(r.exit_code == 69);
    CHECK(r.out == "partial\n");
    // Said in the user's words, with what to do; libcurl's own words only in brackets.
    CHECK_MESSAGE(r.err.find("run the command: the connection to the sandbox was lost mid-command (") !=
                      std::string::npos,
                  r.err);
    CHECK(r.err.find("hint: what arrived before the break was delivered") != std::string::npos);
    CHECK(r.err.find("`corral status --id LEASE`") != std::string::npos);
    auto h = t.handle();
    const std::string id = str(h, "sandboxId");
    check_stopped_once(t, id);
    t.fault([](auto& f) { f.cut_streams_from = 0; });
    CHECK(t.run({"stop", "--id", str(h, "leaseId")}).exit_code == 0);
  }
  SUBCASE("control plane: create's answer drops midway; the sandbox it made is found by its lease and deleted") {
    t.fault([](auto& f) { f.reset_route = "create"; });
    CliResult r = t.run_script("echo never");
    CHECK(r.exit_code == 69);
    CHECK(r.out.empty());
    CHECK_MESSAGE(r.err.find("E2B create sandbox") != std::string::npos, r.err);
    CHECK(t.server.calls("create") == 1);
    auto filters = t.server.with([](auto& st) { return st.list_filters; });
    REQUIRE(filters.size() == 1);
    CHECK(filters[0].count("corral-lease") == 1);
  }
  SUBCASE("control plane: get's answer drops midway once; sent again, and the status is right") {
    CHECK(t.run_script("true", {"--keep"}).exit_code == 0);
    const std::string lease = str(t.handle(), "leaseId");
    t.fault([](auto& f) { f.reset_route = "get"; f.reset_times = 1; });
    CliResult r = t.run({"status", "--id", lease});
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    CHECK(t.server.calls("get") == 2);
    CHECK(t.run({"stop", "--id", lease}).exit_code == 0);
  }
  SUBCASE("control plane: get's answer drops every time; sent 5 times in all, then reported, the lease kept") {
    CHECK(t.run_script("true", {"--keep"}).exit_code == 0);
    const std::string lease = str(t.handle(), "leaseId");
    t.fault([](auto& f) { f.reset_route = "get"; });
    CliResult r = t.run({"status", "--id", lease});
    CHECK(r.exit_code == 69);
    CHECK_MESSAGE(r.err.find("E2B get sandbox") != std::string::npos, r.err);
    CHECK_MESSAGE(r.err.find("(sent 5 times)") != std::string::npos, r.err);
    CHECK(t.server.calls("get") == 5);
    t.fault([](auto& f) { f.reset_route.clear(); });
    CHECK(t.run({"stop", "--id", lease}).exit_code == 0);
  }
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("a truncated JSON answer to create exits 69, and the sandbox it made is deleted") {
  E2bCli t;
  t.fault([](auto& f) { f.malformed_route = "create"; f.malformed = "truncated"; });
  CliResult r = t.run_script("true");
  CHECK(r.exit_code == 69);
  CHECK(r.err.find("unexpected answer") != std::string::npos);
  CHECK(r.err.find("hint:") != std::string::npos);
  CHECK(t.server.calls("create") == 1);
  CHECK(t.server.calls("list") == 1);  // the sweep by lease
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("a Connect envelope that is oversized or cut is refused end to end, and the command stopped") {
  E2bCli t;
  SUBCASE("an envelope header claiming 1 GiB") {
    t.fault([](auto& f) { f.cut_streams_from = 2; f.cut_how = "oversized"; });
    CliResult r = t.run_script("echo $$ > cmd.pid; echo started; sleep 60", {"--keep"});
    CHECK(r.exit_code == 69);
    CHECK(r.out == "started\n");
    CHECK_MESSAGE(r.err.find("run the command: the stream sent a message of 1073741824 bytes") != std::string::npos,
                  r.err);
    auto h = t.handle();
    const pid_t cmd = pid_written(t, str(h, "sandboxId"), "cmd.pid");
    REQUIRE(cmd > 0);
    CHECK(gone_within(cmd, std::chrono::seconds(5)));
    t.fault([](auto& f) { f.cut_streams_from = 0; });
    CHECK(t.run({"stop", "--id", str(h, "leaseId")}).exit_code == 0);
  }
  SUBCASE("a stream that ends inside an envelope") {
    t.fault([](auto& f) { f.cut_streams_from = 2; f.cut_how = "mid-envelope"; });
    CliResult r = t.run_script("echo done");
    CHECK(r.exit_code == 69);
    CHECK(r.out == "done\n");
    CHECK_MESSAGE(r.err.find("cut in the middle of a message") != std::string::npos, r.err);
    CHECK(json::get_bool(t.handle(), "kept") == false);
  }
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("a sandbox that E2B deletes during a run is reported as gone, and nothing is left") {
  E2bCli t;
  SUBCASE("between the sync and the command") {
    t.fault([](auto& f) { f.hold_route = "start"; f.hold_skip = 1; });  // the first Start unpacks
    Background b = t.cli.start({"run", "--provider", "e2b", "--lease-output", t.handle_path(), "--", "echo", "never"});
    REQUIRE(eventually([&] { return t.server.with([](auto& st) { return st.held; }) == 1; }));
    t.server.with([](auto& st) {
      st.remove(st.sandboxes.begin()->first);  // as when its lifetime ends
      st.release();
      return 0;
    });
    CHECK(b.wait() == 66);
    std::string err = read_file(b.err);
    t.seen.push_back(err);
    t.seen.push_back(read_file(b.out));
    CHECK(read_file(b.out).empty());
    CHECK_MESSAGE(err.find("no longer exists") != std::string::npos, err);
    CHECK(err.find("lifetime") != std::string::npos);
    CHECK(err.find("could not confirm that the command stopped") == std::string::npos);  // moot: it is gone
  }
  SUBCASE("while the command runs") {
    Background b = t.cli.start({"run", "--provider", "e2b", "--lease-output", t.handle_path(), "--", "sh", "-c",
                                "echo started; sleep 60"});
    REQUIRE(eventually([&] { return read_file(b.out) == "started\n"; }));
    t.server.with([](auto& st) {
      st.remove(st.sandboxes.begin()->first);
      return 0;
    });
    CHECK(b.wait() == 66);
    std::string err = read_file(b.err);
    t.seen.push_back(err);
    CHECK_MESSAGE(err.find("no longer exists") != std::string::npos, err);
    CHECK(err.find("lifetime") != std::string::npos);
    CHECK(err.find("could not confirm that the command stopped") == std::string::npos);  // moot: it is gone
  }
  auto h = t.handle();
  CHECK(json::get_bool(h, "kept") == false);
  CHECK(t.alive().empty());
  // Whatever the run left in the state folder, the next corral clears it.
  CHECK(t.run({"stop", "--orphans", "--provider", "e2b"}).exit_code == 0);
  CHECK(t.cli.claims().empty());
}

TEST_CASE("keepalives and a slow stream deliver the output intact") {
  E2bCli t;
  t.fault([](auto& f) { f.keepalive_ms = 25; f.slow_chunk_ms = 80; });
  CliResult r = t.run_script("for i in 1 2 3 4 5; do echo line $i; sleep 0.2; done");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "line 1\nline 2\nline 3\nline 4\nline 5\n");
  CHECK(t.alive().empty());
}

TEST_CASE("large output streams through unchanged") {
  E2bCli t;
  CliResult r = t.run_script("seq 1 2000000");
  CHECK(r.exit_code == 0);
  CHECK(r.out.size() == 14888896);
  CHECK(r.out.substr(r.out.size() - 8) == "2000000\n");
  CHECK(t.alive().empty());
}

TEST_CASE("--timeout stops the remote command with its children and exits 124") {
  E2bCli t;
  auto start = std::chrono::steady_clock::now();
  CliResult r = t.run_script("sleep 60 & echo $! > bg.pid; wait", {"--timeout", "1s", "--keep"});
  CHECK(r.exit_code == 124);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(15));
  auto h = t.handle();
  const pid_t bg = pid_written(t, str(h, "sandboxId"), "bg.pid");
  REQUIRE(bg > 0);
  CHECK(gone_within(bg, std::chrono::seconds(5)));  // the sandbox was kept: only the kill can have ended it
  CHECK(t.run({"stop", "--id", str(h, "leaseId")}).exit_code == 0);
  CHECK(t.alive().empty());
}

TEST_CASE("a command that reads stdin sees its end instead of waiting forever") {
  E2bCli t;
  CliResult r = t.run({"run", "--provider", "e2b", "--timeout", "20s", "--", "cat"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.empty());
  CHECK(t.alive().empty());
}

TEST_CASE("a garbled create answer exits 69 and leaves no sandbox behind") {
  E2bCli t;
  // "deep": 400,000 nested '[', which once overflowed the parser's stack (exit 139).
  for (const char* kind : {"not-json", "deep"}) {
    CAPTURE(kind);
    t.fault([&](auto& f) { f.malformed_route = "create"; f.malformed = kind; });
    CliResult r = t.run_script("true");
    CHECK(r.exit_code == 69);
    CHECK(r.err.find("unexpected answer") != std::string::npos);
    CHECK(r.err.find("hint:") != std::string::npos);
    CHECK(t.server.with([](auto& st) { return st.sandboxes.size(); }) == 0);
  }
  t.fault([](auto& f) { f.malformed_route = "list"; f.malformed = "deep"; });
  CliResult list = t.run({"list", "--remote", "--provider", "e2b"});
  CHECK(list.exit_code == 69);
  CHECK(list.err.find("unexpected answer") != std::string::npos);
}

TEST_CASE("the sandbox's own domain, when E2B reports one, beats E2B_DOMAIN") {
  E2bCli t;
  t.cli.env["E2B_DOMAIN"] = "configured.example.org";
  t.fault([](auto& f) { f.sandbox_domain = "eu.sandbox.example.dev"; });
  REQUIRE(t.run_script("true", {"--keep"}).exit_code == 0);
  auto h = t.handle();
  CliResult url = t.run({"url", "--id", str(h, "leaseId"), "--port", "8080"});
  CHECK(url.exit_code == 0);
  CHECK(url.out == "https://8080-" + str(h, "sandboxId") + ".eu.sandbox.example.dev\n");
  CHECK(t.run({"stop", "--id", str(h, "leaseId")}).exit_code == 0);
  CHECK(t.alive().empty());
}

TEST_CASE("extend beyond the account cap warns naming --by") {
  E2bCli t;
  REQUIRE(t.run_script("true", {"--keep"}).exit_code == 0);
  auto h = t.handle();
  t.fault([](auto& f) { f.lifetime_cap_hours = 24; });
  CliResult ext = t.run({"extend", "--id", str(h, "leaseId"), "--by", "48h"});
  CHECK(ext.exit_code == 0);
  CHECK(ext.err.find("corral: warning: E2B refused a sandbox lifetime of 48h") != std::string::npos);
  CHECK(ext.err.find("--by") != std::string::npos);
  CHECK(ext.err.find("--e2b-lifetime") == std::string::npos);
  CHECK(t.run({"stop", "--id", str(h, "leaseId")}).exit_code == 0);
}

namespace {

// Starts a long run in the background, waits until its command runs in the stand-in and
// its first line reached corral's output, then sends SIGINT like Ctrl-C; returns corral's
// exit code.
int interrupt_run(E2bCli& t, std::vector<std::string> flags,
                  const std::string& script = "echo started; sleep 60") {
  std::vector<std::string> args = {"run", "--provider", "e2b", "--lease-output", t.handle_path()};
  args.insert(args.end(), flags.begin(), flags.end());
  args.insert(args.end(), {"--", "sh", "-c", script});
  Background b = t.cli.start(args);
  auto running = [&] {
    return t.server.with([](auto& st) {
      for (const auto& [id, sb] : st.sandboxes)
        if (!sb.processes.empty()) return true;
      return false;
    });
  };
  for (int i = 0; i < 200 && !running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(running());
  // Registered is not yet started: under a sanitizer the first line can take longer than
  // any fixed pause to come back.
  for (int i = 0; i < 200 && read_file(b.out).empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ::kill(b.pid, SIGINT);
  int code = b.wait();
  t.seen.push_back(read_file(b.out));
  t.seen.push_back(read_file(b.err));
  CHECK(read_file(b.out) == "started\n");
  return code;
}

}  // namespace

TEST_CASE("Ctrl-C stops the remote process, then applies the keep rules") {
  E2bCli t;
  SUBCASE("plain run: deleted") {
    CHECK(interrupt_run(t, {}) == 130);
    CHECK(t.alive().empty());
  }
  SUBCASE("--keep: kept, with nothing left running in it") {
    CHECK(interrupt_run(t, {"--keep"}) == 130);
    auto h = t.handle();
    CHECK(json::get_bool(h, "kept"));
    const std::string id = str(h, "sandboxId");
    REQUIRE(t.alive() == std::vector<std::string>{id});
    CHECK(idle_soon(t, id));
    CHECK(t.run({"stop", "--id", str(h, "leaseId")}).exit_code == 0);
    CHECK(t.alive().empty());
  }
  SUBCASE("--keep: a background child of the command is stopped too") {
    CHECK(interrupt_run(t, {"--keep"}, "sleep 60 & echo $! > bg.pid; echo started; wait") == 130);
    auto h = t.handle();
    const pid_t bg = pid_written(t, str(h, "sandboxId"), "bg.pid");
    REQUIRE(bg > 0);
    CHECK(gone_within(bg, std::chrono::seconds(5)));
    CHECK(t.run({"stop", "--id", str(h, "leaseId")}).exit_code == 0);
    CHECK(t.alive().empty());
  }
  // The process group went by a second Start of kill; SendSignal was not needed.
  CHECK(t.server.calls("signal") == 0);
}

namespace {

// Where SIGKILL lands: the call E2B holds (none: the command's stream is open), and what
// the kill leaves.
struct KillPoint {
  const char* name;
  const char* route;  // Faults::hold_route; "" for the running command
  bool claim;         // the lease's claim is left (as abandoned)
  bool by_id;         // cleaned up with `stop --id` rather than `stop --orphans`
};


}  // namespace

TEST_CASE("SIGKILL while E2B holds a call: the next stop --orphans or stop --id leaves nothing") {
  const KillPoint points[] = {
      {"create (the sandbox is made after corral died)", "create", false, false},
      {"upload of the workspace", "files", true, false},
      {"envd exec (the command runs)", "", true, true},
      {"kill (the sandbox goes after corral died)", "kill", true, false},
  };
  for (const KillPoint& point : points) {
    INFO(point.name);
    E2bCli t;
    t.fault([&](auto& f) { f.hold_route = point.route; });
    const bool running = !*point.route;
    Background b = t.cli.start({"run", "--provider", "e2b", "--", "sh", "-c",
                                running ? "echo $$ > command.pid; echo started; exec sleep 60" : "true"});
    if (running)
      REQUIRE(eventually([&] { return read_file(b.out) == "started\n"; }));
    else
      REQUIRE(eventually([&] { return t.server.with([](auto& st) { return st.held; }) == 1; }));
    ::kill(b.pid, SIGKILL);
    b.wait();
    t.seen.push_back(read_file(b.out));
    t.seen.push_back(read_file(b.err));
    t.server.with([](auto& st) { st.release(); return 0; });  // the held call is served now
    const size_t left = std::string(point.route) == "kill" ? 0 : 1;
    REQUIRE(eventually([&] { return t.alive().size() == left; }));
    // Nothing is left to stop the command: it runs on in the sandbox until the next stop.
    const pid_t command = running ? pid_written(t, t.alive()[0], "command.pid") : 0;
    if (running) CHECK(process_alive(command));

    std::vector<std::string> states = t.cli.lease_states();
    CHECK(states.size() == (point.claim ? 1u : 0u));
    for (const std::string& st : states) CHECK(st == "abandoned");
    CliResult stop;
    if (point.by_id) {
      CliResult listed = t.run({"list", "--json"});
      const std::string lease = str(json::parse(listed.out, "list")[0], "leaseId");
      stop = t.run({"stop", "--id", lease});
    } else {
      stop = t.run({"stop", "--orphans", "--provider", "e2b"});
    }
    CHECK_MESSAGE(stop.exit_code == 0, stop.err);
    CHECK(t.alive().empty());
    if (running) CHECK(gone_within(command, std::chrono::seconds(5)));
    CHECK(t.cli.claims().empty());
    CHECK(t.cli.lease_states().empty());
    CHECK(t.run_script("cat hello.txt").out == "hello from the workspace\n");  // corral works on
    CHECK(t.alive().empty());
  }
}

TEST_CASE("the real e2b plugin crashing during exec is named, and stop --id deletes the sandbox") {
  E2bCli t;
  bool isolated = true;
  SUBCASE("isolation: process (its helper gets SIGSEGV)") {
    t.cli.add_registry("e2b", {CORRAL_E2B_PLUGIN}, {{"isolation", "process"}});
  }
  SUBCASE("in-process (corral gets SIGSEGV while the plugin streams)") {
    t.cli.add_registry("e2b", {CORRAL_E2B_PLUGIN}, {{"isolation", "in-process"}});
    isolated = false;
  }
  Background b = t.cli.start({"run", "--provider", "e2b", "--", "sh", "-c",
                              "echo $$ > command.pid; echo started; exec sleep 60"});
  REQUIRE(eventually([&] { return read_file(b.out) == "started\n"; }));  // the exec stream is open
  const int starts = t.server.calls("start");
  const std::vector<int> helpers = children_named(b.pid, "corral-plugin-host");
  REQUIRE(helpers.size() == (isolated ? 1u : 0u));
  ::kill(isolated ? helpers[0] : b.pid, SIGSEGV);
  CHECK(b.wait(std::chrono::seconds(30)) == (isolated ? 70 : 128 + SIGSEGV));
  const std::string err = read_file(b.err);
  t.seen.push_back(read_file(b.out));
  t.seen.push_back(err);
  CHECK_MESSAGE(err.find("provider plugin 'e2b' crashed during 'exec' (SIGSEGV)") != std::string::npos, err);

  CliResult listed = t.run({"list", "--json"});
  REQUIRE(listed.exit_code == 0);
  json::Document leases = json::parse(listed.out, "list");
  REQUIRE(leases.Size() == 1);
  const std::string lease = str(leases[0], "leaseId");
  CHECK(err.find("`corral stop --id " + lease + "` cleans up once the plugin is fixed") != std::string::npos);
  REQUIRE(t.alive().size() == 1);
  const pid_t command = pid_written(t, t.alive()[0], "command.pid");
  CHECK(process_alive(command));  // the crash took the plugin, not the sandbox's command

  CliResult stop = t.run({"stop", "--id", lease});
  CHECK_MESSAGE(stop.exit_code == 0, stop.err);
  CHECK(t.alive().empty());
  CHECK(gone_within(command, std::chrono::seconds(5)));
  CHECK(t.cli.claims().empty());
  CHECK(t.server.calls("create") == 1);
  CHECK(t.server.calls("start") == starts);  // nothing ran again
}

TEST_CASE("stop --orphans removes corral sandboxes no local lease claims, and only those") {
  E2bCli t;
  REQUIRE(t.run_script("true", {"--keep"}).exit_code == 0);
  const std::string kept = str(t.handle(), "sandboxId");
  // The kept sandbox carries this machine's host label.
  std::string host = read_file(t.cli.state_dir() / "corral" / "host-id");
  host = host.substr(0, host.find('\n'));
  REQUIRE(host.size() == 12);
  CHECK(t.server.with([&](auto& st) { return st.sandboxes.at(kept).metadata.at("corral-host"); }) == host);
  // An orphan: made here, but no lease here claims it; another machine's; an unlabelled
  // one from an older corral; and a sandbox corral never made.
  auto add = [&](const std::string& lease, const std::string& host_label) {
    return t.server.with([&](auto& st) {
      auto& sb = st.add_sandbox("base", true, 600);
      sb.metadata = {{"corral-owner", "corral"}, {"corral-lease", lease}, {"corral-slug", "lost-lamb"}};
      if (!host_label.empty()) sb.metadata["corral-host"] = host_label;
      return sb.id;
    });
  };
  std::string orphan = add("elsewhere", host);
  std::string other_host = add("theirs", "0123456789ab");
  std::string unlabelled = add("old", "");
  std::string foreign = t.server.with([](auto& st) { return st.add_sandbox("base", true, 600).id; });
  CliResult r = t.run({"stop", "--orphans", "--provider", "e2b"});
  CHECK(r.exit_code == 0);
  auto left = t.alive();
  auto alive = [&](const std::string& id) { return std::find(left.begin(), left.end(), id) != left.end(); };
  CHECK_FALSE(alive(orphan));
  CHECK(alive(kept));
  CHECK(alive(other_host));
  CHECK(alive(unlabelled));
  CHECK(alive(foreign));
  CHECK(t.run({"stop", "--orphans", "--provider", "e2b", "--all-hosts"}).exit_code == 0);
  left = t.alive();
  CHECK_FALSE(alive(other_host));
  CHECK_FALSE(alive(unlabelled));
  CHECK(alive(kept));
  t.run({"stop", "--all"});
  CHECK(t.alive() == std::vector<std::string>{foreign});
}

TEST_CASE("doctor checks the key and the control plane") {
  E2bCli t;
  // (The exit code also reflects the registry's other plugins; the e2b lines are ours.)
  CliResult ok = t.run({"doctor", "--provider", "e2b"});
  CHECK(ok.out.find("[ok] E2B API key") != std::string::npos);
  CHECK(ok.out.find("[ok] E2B control plane") != std::string::npos);
  t.fault([](auto& f) { f.reject_api_key = true; });
  CliResult bad = t.run({"doctor", "--provider", "e2b"});
  CHECK(bad.exit_code != 0);
  CHECK(bad.out.find("[FAIL] E2B control plane") != std::string::npos);
  CHECK((bad.out + bad.err).find("check E2B_API_KEY") != std::string::npos);
}

TEST_CASE("four shards on E2B: each its own sandbox, index and count; all deleted afterwards") {
  E2bCli t;
  CliResult r = t.run_script(corral::test::four_shard_script(3, 9), {"--shards", "4"});
  std::string text = read_file(t.handle_path());
  t.seen.push_back(text);
  corral::test::check_four_shards(r, text, 3, 9);
  CHECK(t.server.with([](auto& st) { return st.calls["create"]; }) == 4);
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("E2B's concurrent-sandbox limit in the middle of a fan-out of 8: the shards back off and all finish") {
  E2bCli t;
  t.fault([](auto& f) {
    f.max_sandboxes = 2;
    f.retry_after = "1";
  });
  CliResult r = t.run_script("sleep 0.3; echo done", {"--shards", "8", "--max-parallel", "8", "--progress", "json"});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 8);
  // E2B refused some (its limit is 2), and the shards waited it out instead of failing.
  CHECK(t.server.calls("create") > 8);
  // A shard's event names its shard before the provider.
  CHECK_MESSAGE(std::regex_search(r.err, std::regex(R"(\{"phase":"slot-wait","state":"start","shard":\d,"provider":"e2b",)"
                                                    R"("reason":"backoff")")),
                r.err);
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("a 429 with Retry-After to one corral makes another corral's next create wait, then both run") {
  E2bCli t;
  t.fault([](auto& f) {
    f.fail_route = "create";
    f.fail_status = 429;
    f.fail_times = 1;
    f.retry_after = "4";
  });
  corral::test::Background first = t.cli.start({"run", "--provider", "e2b", "--", "echo", "first"});
  for (int i = 0; i < 600 && t.server.calls("create") < 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(t.server.calls("create") >= 1);
  // The second starts after the first got its 429: it never got one itself, yet it waits.
  CliResult second = t.run({"run", "--provider", "e2b", "--progress", "json", "--", "echo", "second"});
  CHECK_MESSAGE(second.exit_code == 0, second.err);
  CHECK(second.out == "second\n");
  CHECK_MESSAGE(second.err.find(R"("phase":"slot-wait","state":"start","provider":"e2b","reason":"backoff")") !=
                    std::string::npos,
                second.err);
  CHECK(first.wait() == 0);
  CHECK(corral::test::read_file(first.out) == "first\n");
  CHECK(t.server.calls("create") == 3);  // the refused one, then one each
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("e2b passes the conformance kit against the stand-in, no sandbox left and no secret shown") {
  E2bCli t;
  auto r = conformance_recorded(t.cli, "e2b");
  t.seen.push_back(r.cli.out);
  t.seen.push_back(r.cli.err);
  check_passed(r, {"argv", "keep-reuse", "sync-deletions", "url", "extend", "listing", "interrupt", "output-large",
                   "workdir", "network-none", "network-allowlist", "destroy-twice", "pause-resume", "fork",
                   "shards-from", "stdin", "signals", "concurrent"});
  CHECK(t.alive().empty());
}

TEST_CASE("--network none creates the sandbox without internet access, and its commands reach nothing") {
  E2bCli t;
  LoopbackListener listener;
  auto open = t.run_script(listener.probe_script());
  CHECK_MESSAGE(open.exit_code == 0, open.err);
  CHECK(open.out == "reached\n");
  auto body = json::parse(t.server.with([](auto& st) { return st.create_bodies.back(); }), "create");
  CHECK_FALSE(body.HasMember("allow_internet_access"));  // open: E2B's default, nothing sent
  CHECK_FALSE(body.HasMember("network"));

  auto cut = t.run_script(listener.probe_script(), {"--network", "none"});
  CHECK_MESSAGE(cut.exit_code == 0, cut.err);
  CHECK(cut.out == "unreachable\n");
  body = json::parse(t.server.with([](auto& st) { return st.create_bodies.back(); }), "create");
  REQUIRE(body.HasMember("allow_internet_access"));
  CHECK_FALSE(body["allow_internet_access"].GetBool());
  CHECK_FALSE(body.HasMember("network"));
  CHECK(str(t.handle(), "network") == "none");
  CHECK(t.alive().empty());
}

TEST_CASE("--network allow: denies all egress but the listed domains, addresses and CIDRs") {
  E2bCli t;
  auto r = t.run_script("true", {"--network", "allow:pypi.org,*.github.com,10.0.0.0/8,192.0.2.7"});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  auto body = json::parse(t.server.with([](auto& st) { return st.create_bodies.back(); }), "create");
  CHECK_FALSE(body.HasMember("allow_internet_access"));
  REQUIRE(body.HasMember("network"));
  CHECK(json::get_strings(body["network"], "allowOut") ==
        std::vector<std::string>{"pypi.org", "*.github.com", "10.0.0.0/8", "192.0.2.7"});
  CHECK(json::get_strings(body["network"], "denyOut") == std::vector<std::string>{"0.0.0.0/0"});
  CHECK(str(t.handle(), "network") == "allow:pypi.org,*.github.com,10.0.0.0/8,192.0.2.7");
  CHECK(t.alive().empty());
}

TEST_CASE("--secret on E2B: its header is set by E2B's egress rules while the command runs, then taken off") {
  E2bCli t;
  const std::string value = "sk-e2b-9Real8Key7Value6Here5";
  t.cli.env["API_KEY"] = value;
  t.secrets.push_back(value);  // checked in nothing printed or stored
  auto r = t.run_script("echo \"key=$API_KEY\"",
                        {"--network", "allow:pypi.org", "--secret", "API_KEY=api.example.com"});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  REQUIRE_MESSAGE(r.out.rfind("key=sk-", 0) == 0, r.out);  // the vendor prefix kept
  const std::string placeholder = r.out.substr(4, r.out.size() - 5);
  CHECK(placeholder.size() == value.size());
  CHECK(placeholder != value);
  auto create = json::parse(t.server.with([](auto& st) { return st.create_bodies.back(); }), "create");
  const std::vector<std::string> allow = {"pypi.org", "api.example.com"};
  CHECK(json::get_strings(create["network"], "allowOut") == allow);
  const std::vector<std::string> bodies = t.server.with([](auto& st) { return st.network_bodies; });
  REQUIRE(bodies.size() == 2);
  auto set = json::parse(bodies[0], "network");
  CHECK(json::get_strings(set, "allowOut") == allow);  // an omitted field would be cleared
  CHECK(json::get_strings(set, "denyOut") == std::vector<std::string>{"0.0.0.0/0"});
  REQUIRE(set["rules"].HasMember("api.example.com"));
  CHECK(std::string(set["rules"]["api.example.com"][0]["transform"]["headers"]["Authorization"].GetString()) ==
        "Bearer " + value);
  auto cleared = json::parse(bodies[1], "network");
  CHECK(json::get_strings(cleared, "allowOut") == allow);
  CHECK(cleared["rules"].ObjectEmpty());
  CHECK(t.alive().empty());
}

TEST_CASE("--secret on E2B for a *.domain is refused before the command runs; nothing is left set or running") {
  E2bCli t;
  t.cli.env["API_KEY"] = "sk-e2b-9Real8Key7Value6Here5";
  auto r = t.run_script("echo ran", {"--network", "allow:pypi.org", "--secret", "API_KEY=*.example.com"});
  CHECK(r.exit_code == 64);
  CHECK(r.out.empty());
  CHECK(r.err.find("E2B sets a secret on requests to named domains, not '*.example.com'") != std::string::npos);
  CHECK(t.server.with([](auto& st) { return st.network_bodies.size(); }) == 0);
  CHECK(t.alive().empty());
}

namespace {

// True when `text` holds every one of `parts`.
bool says(const std::string& text, std::initializer_list<const char*> parts) {
  for (const char* p : parts)
    if (text.find(p) == std::string::npos) return false;
  return true;
}

// Seconds since `t0`.
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("E2B answering past a timeout setting: exit 69 naming the call and the setting, never retried, nothing left") {
  E2bCli t;
  const auto t0 = std::chrono::steady_clock::now();
  SUBCASE("create (--e2b-create-timeout): the sandbox it made is found by its lease and deleted") {
    t.cli.env["CORRAL_E2B_CREATE_TIMEOUT"] = "1s";
    t.fault([](auto& f) { f.delay_route = "create"; f.delay_ms = 20000; });
    CliResult r = t.run_script("echo never");
    CHECK(r.exit_code == 69);
    CHECK(r.out.empty());
    CHECK_MESSAGE(says(r.err, {"E2B create sandbox", "within 1 s", "--e2b-create-timeout or CORRAL_E2B_CREATE_TIMEOUT"}),
                  r.err);
    CHECK(t.server.calls("create") == 1);
    CHECK(t.server.calls("start") == 0);
    auto filters = t.server.with([](auto& st) { return st.list_filters; });
    REQUIRE(filters.size() == 1);  // the sweep by lease found the sandbox the create made
    CHECK(filters[0].count("corral-lease") == 1);
    CHECK(t.server.calls("kill") == 1);
  }
  SUBCASE("get (--e2b-request-timeout, status --id): reported, the lease kept for stop --id") {
    CHECK(t.run_script("true", {"--keep"}).exit_code == 0);
    const std::string lease = str(t.handle(), "leaseId"), id = str(t.handle(), "sandboxId");
    t.cli.env["CORRAL_E2B_REQUEST_TIMEOUT"] = "1s";
    t.fault([](auto& f) { f.delay_route = "get"; f.delay_ms = 20000; });
    CliResult r = t.run({"status", "--id", lease});
    CHECK(r.exit_code == 69);
    CHECK_MESSAGE(says(r.err, {"E2B get sandbox", "within 1 s", "--e2b-request-timeout or CORRAL_E2B_REQUEST_TIMEOUT"}),
                  r.err);
    CHECK(t.server.calls("get") == 1);
    CHECK(t.alive() == std::vector<std::string>{id});
    t.server.with([](auto& st) { st.release(); return 0; });
    CHECK(t.run({"stop", "--id", lease}).exit_code == 0);
  }
  SUBCASE("connect (--e2b-create-timeout, reusing a kept lease): the command never runs, the lease stays") {
    CHECK(t.run_script("echo run >> runs.txt", {"--keep"}).exit_code == 0);
    const std::string lease = str(t.handle(), "leaseId"), id = str(t.handle(), "sandboxId");
    t.cli.env["CORRAL_E2B_CREATE_TIMEOUT"] = "1s";
    t.fault([](auto& f) { f.delay_route = "connect"; f.delay_ms = 20000; });
    CliResult r = t.run_script("echo run >> runs.txt", {"--id", lease});
    CHECK(r.exit_code == 69);
    CHECK_MESSAGE(says(r.err, {"E2B connect to sandbox", "within 1 s", "--e2b-create-timeout or CORRAL_E2B_CREATE_TIMEOUT"}),
                  r.err);
    CHECK(t.server.calls("connect") == 1);
    auto root = t.server.with([&](auto& st) { return st.sandboxes.at(id).root; });
    CHECK(read_file(root / "home/user/workspace/runs.txt") == "run\n");
    CHECK(t.alive() == std::vector<std::string>{id});
    CHECK(t.cli.lease_states().size() == 1);
    t.server.with([](auto& st) { st.release(); return 0; });
    CHECK(t.run({"stop", "--id", lease}).exit_code == 0);
  }
  SUBCASE("kill (--e2b-request-timeout, the end of a run): the command's exit code stands, the claim is abandoned") {
    t.cli.env["CORRAL_E2B_REQUEST_TIMEOUT"] = "1s";
    t.fault([](auto& f) { f.delay_route = "kill"; f.delay_ms = 20000; });
    CliResult r = t.run_script("echo ran; exit 3");
    CHECK(r.exit_code == 3);
    CHECK(r.out == "ran\n");
    CHECK_MESSAGE(says(r.err, {"E2B kill sandbox", "within 1 s", "--e2b-request-timeout or CORRAL_E2B_REQUEST_TIMEOUT"}),
                  r.err);
    CHECK(t.server.calls("kill") == 1);
    CHECK(t.server.calls("start") == 2);  // the unpack and the command, once
    CHECK(t.cli.lease_states() == std::vector<std::string>{"abandoned"});
    t.server.with([](auto& st) { st.release(); return 0; });
    CHECK(t.run({"stop", "--orphans", "--provider", "e2b"}).exit_code == 0);
  }
  CHECK(seconds_since(t0) < 15);  // the 20 s delays were not waited for
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("a command's stream silent past --e2b-stall-timeout is given up on; keep-alives keep a quiet one open") {
  E2bCli t;
  t.cli.env["CORRAL_E2B_STALL_TIMEOUT"] = "3s";
  SUBCASE("stalled (no bytes, no keep-alives): exit 69, the command stopped, never run again") {
    t.fault([](auto& f) { f.stall_start = 2; });  // the first Start unpacks
    const auto t0 = std::chrono::steady_clock::now();
    CliResult r = t.run_script("echo $$ > cmd.pid; echo run >> runs.txt; echo started; sleep 60", {"--keep"});
    CHECK(r.exit_code == 69);
    CHECK(r.out == "started\n");
    CHECK_MESSAGE(says(r.err, {"run the command", "no data from", "for 3 s", "--e2b-stall-timeout or CORRAL_E2B_STALL_TIMEOUT"}),
                  r.err);
    CHECK(seconds_since(t0) < 15);
    auto h = t.handle();
    const std::string id = str(h, "sandboxId");
    check_stopped_once(t, id);
    CHECK(t.run({"stop", "--id", str(h, "leaseId")}).exit_code == 0);
  }
  SUBCASE("quiet for longer than the limit, with keep-alives: the run succeeds") {
    CliResult r = t.run_script("sleep 4; echo done");
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out == "done\n");
  }
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("a TCP reset (RST): a call safe to repeat is sent again, any other is exit 69; nothing left") {
  E2bCli t;
  SUBCASE("control plane: create's answer is reset; the sandbox it made is found by its lease and deleted") {
    t.fault([](auto& f) { f.reset_route = "create"; f.reset_with_rst = true; });
    CliResult r = t.run_script("echo never");
    CHECK(r.exit_code == 69);
    CHECK(r.out.empty());
    CHECK_MESSAGE(says(r.err, {"E2B create sandbox", "Connection reset by peer"}), r.err);
    CHECK(t.server.calls("create") == 1);
    CHECK(t.server.calls("start") == 0);
    auto filters = t.server.with([](auto& st) { return st.list_filters; });
    REQUIRE(filters.size() == 1);
    CHECK(filters[0].count("corral-lease") == 1);
  }
  SUBCASE("control plane: get's answer is reset once (status --id); sent again, and the status is right") {
    CHECK(t.run_script("true", {"--keep"}).exit_code == 0);
    const std::string lease = str(t.handle(), "leaseId");
    t.fault([](auto& f) { f.reset_route = "get"; f.reset_with_rst = true; f.reset_times = 1; });
    CliResult r = t.run({"status", "--id", lease});
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    CHECK(t.server.calls("get") == 2);
    CHECK(t.run({"stop", "--id", lease}).exit_code == 0);
  }
  SUBCASE("envd: the command's stream is reset while it runs; it is stopped, never run again") {
    t.fault([](auto& f) { f.cut_streams_from = 2; f.cut_how = "rst"; });  // the first Start unpacks
    CliResult r = t.run_script("echo $$ > cmd.pid; echo run >> runs.txt; echo partial; sleep 60", {"--keep"});
    CHECK(r.exit_code == 69);
    CHECK(r.out == "partial\n");
    CHECK_MESSAGE(says(r.err, {"run the command: the connection to the sandbox was lost mid-command (",
                               "Connection reset by peer"}),
                  r.err);
    auto h = t.handle();
    const std::string id = str(h, "sandboxId");
    check_stopped_once(t, id);
    t.fault([](auto& f) { f.cut_streams_from = 0; });
    CHECK(t.run({"stop", "--id", str(h, "leaseId")}).exit_code == 0);
  }
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("a 429 names E2B's limit, says what corral already did and what to do; exit 75") {
  E2bCli t;
  const char* limit = "E2B's rate limit or your team's concurrent-sandbox limit was reached (HTTP 429";
  SUBCASE("create, every time: not sent again by the plugin; asked again by corral after a wait, until --timeout") {
    t.fault([](auto& f) { f.fail_route = "create"; f.fail_status = 429; f.retry_after = "0"; });
    CliResult r = t.run_script("echo never", {"--timeout", "3"});
    CHECK(r.exit_code == 75);
    CHECK(r.out.empty());
    CHECK_MESSAGE(says(r.err, {"corral: error: E2B create sandbox: ", limit, "Rate limit exceeded",
                               "not sent again by the plugin", "corral waited and asked again 1 time",
                               "until --timeout ran out", "wait a minute and rerun", "lower --max-parallel",
                               "ask E2B for higher limits"}),
                  r.err);
    CHECK(t.server.calls("create") == 2);
  }
  SUBCASE("get, every time (status --id): retried four times, then reported") {
    CHECK(t.run_script("true", {"--keep"}).exit_code == 0);
    const std::string lease = str(t.handle(), "leaseId");
    t.fault([](auto& f) { f.fail_route = "get"; f.fail_status = 429; f.retry_after = "0"; });
    CliResult r = t.run({"status", "--id", lease});
    CHECK(r.exit_code == 75);
    CHECK_MESSAGE(says(r.err, {"E2B get sandbox", limit, "corral already retried it 4 times", "--max-parallel"}),
                  r.err);
    CHECK(t.server.calls("get") == 5);
    t.fault([](auto& f) { f.fail_route.clear(); });
    CHECK(t.run({"stop", "--id", lease}).exit_code == 0);
  }
  SUBCASE("get, asking for longer than corral waits: reported at once, saying so") {
    CHECK(t.run_script("true", {"--keep"}).exit_code == 0);
    const std::string lease = str(t.handle(), "leaseId");
    t.fault([](auto& f) { f.fail_route = "get"; f.fail_status = 429; f.retry_after = "3600"; });
    CliResult r = t.run({"status", "--id", lease});
    CHECK(r.exit_code == 75);
    CHECK_MESSAGE(says(r.err, {limit, "asked corral to wait 3600 s, longer than corral waits (10 s)"}), r.err);
    CHECK(t.server.calls("get") == 1);
    t.fault([](auto& f) { f.fail_route.clear(); });
    CHECK(t.run({"stop", "--id", lease}).exit_code == 0);
  }
  CHECK(t.alive().empty());
}

TEST_CASE("a kept sandbox that E2B deleted says how to forget the lease, whether found gone at get, upload or mid-command") {
  E2bCli t;
  REQUIRE(t.run_script("true", {"--keep"}).exit_code == 0);
  auto h = t.handle();
  const std::string lease = str(h, "leaseId"), id = str(h, "sandboxId");
  std::filesystem::remove(t.handle_path());
  CliResult r;
  SUBCASE("at get") {
    t.server.with([&](auto& st) { st.remove(id); return 0; });
    r = t.run_script("echo never", {"--id", lease});
  }
  SUBCASE("at the upload of a changed workspace") {
    t.cli.root().write("work/new.txt", "changed\n");
    t.fault([](auto& f) { f.vanish_route = "files"; });
    const int uploads = t.server.calls("files");
    r = t.run_script("echo never", {"--id", lease});
    CHECK(t.server.calls("files") == uploads + 1);
    CHECK(t.server.with([](auto& st) { return st.faults.vanish_route; }).empty());  // it struck
  }
  SUBCASE("while the command runs") {
    Background b = t.cli.start({"run", "--id", lease, "--lease-output", t.handle_path(), "--", "sh", "-c",
                                "echo started; sleep 60"});
    REQUIRE(eventually([&] { return read_file(b.out) == "started\n"; }));
    t.server.with([&](auto& st) { st.remove(id); return 0; });
    r.exit_code = b.wait();
    r.out = read_file(b.out);
    r.err = read_file(b.err);
    t.seen.push_back(r.out);
    t.seen.push_back(r.err);
    CHECK(r.out == "started\n");
  }
  CHECK(r.exit_code == 66);
  CHECK(r.out.find("never") == std::string::npos);
  // One message however the run found out: the lease, the sandbox, E2B's reason, and the
  // command that forgets the lease.
  const std::string forget = "forget this lease with `corral stop --provider e2b --id " + lease + "`";
  CHECK_MESSAGE(says(r.err, {"the sandbox of lease '", id.c_str(), "no longer exists at e2b", "lifetime",
                             forget.c_str()}),
                r.err);
  auto h2 = t.handle();
  CHECK(json::get_bool(h2, "reused"));
  CHECK(str(h2["error"], "code") == "not-found");
  CHECK(t.alive().empty());
  CHECK(t.run({"stop", "--id", lease}).exit_code == 0);
  CHECK(t.cli.claims().empty());
}

namespace {

// `corral pool status --json`'s pools.
json::Document pools(E2bCli& t) {
  CliResult r = t.run({"pool", "status", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return json::parse(r.out, "pool status");
}

}  // namespace

TEST_CASE("a warm E2B pool waits paused; a run resumes one, runs in it without a create, and a refill follows") {
  E2bCli t;
  CliResult r = t.run({"pool", "fill", "--provider", "e2b", "--size", "2"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(t.server.calls("create") == 2);
  const std::set<std::string> ids = t.cli.pooled_sandboxes();
  REQUIRE(ids.size() == 2);
  for (const std::string& id : ids)
    CHECK(t.server.with([&](auto& st) { return st.sandboxes.at(id).state; }) == "paused");
  auto doc = pools(t);
  REQUIRE(doc.GetArray().Size() == 1);
  CHECK(json::get_bool(doc.GetArray()[0], "canPause"));
  CHECK(json::get_int(doc.GetArray()[0], "ready") == 2);

  r = t.run_script("cat hello.txt");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "hello from the workspace\n");
  auto h = t.handle();
  CHECK(json::get_bool(h, "pooled"));
  CHECK(ids.count(str(h, "sandboxId")) == 1);
  // Released at the end like any run's own sandbox; the refill makes the third.
  CHECK(t.cli.pool_settles_at(2));
  CHECK(t.server.calls("create") == 3);
  REQUIRE(t.run({"pool", "drain", "--provider", "e2b"}).exit_code == 0);
  CHECK(t.alive().empty());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("a pooled E2B sandbox deleted at E2B is skipped and removed, never used") {
  E2bCli t;
  REQUIRE(t.run({"pool", "fill", "--provider", "e2b", "--size", "1"}).exit_code == 0);
  const std::set<std::string> ids = t.cli.pooled_sandboxes();
  REQUIRE(ids.size() == 1);
  t.server.with([&](auto& st) {
    st.remove(*ids.begin());
    return 0;
  });
  CliResult r = t.run_script("cat hello.txt");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "hello from the workspace\n");
  auto h = t.handle();
  CHECK_FALSE(json::get_bool(h, "pooled"));
  CHECK(ids.count(str(h, "sandboxId")) == 0);
  // The vanished one's claim is gone; the refill put a new one in its place.
  CHECK(t.cli.pool_settles_at(1));
  CHECK(t.cli.pooled_sandboxes() != ids);
  REQUIRE(t.run({"pool", "drain"}).exit_code == 0);
  CHECK(t.alive().empty());
}

TEST_CASE("a pooled E2B sandbox that cannot be reached stays in the pool; the run makes its own") {
  E2bCli t;
  REQUIRE(t.run({"pool", "fill", "--provider", "e2b", "--size", "1"}).exit_code == 0);
  const std::set<std::string> ids = t.cli.pooled_sandboxes();
  REQUIRE(ids.size() == 1);
  t.server.with([&](auto& st) {  // every get answers 500 (not retried): E2B cannot say
    st.faults.fail_route = "get";
    st.faults.fail_status = 500;
    return 0;
  });
  CliResult r = t.run_script("cat hello.txt");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "hello from the workspace\n");
  CHECK(r.err.find("leaving it in the pool") != std::string::npos);
  auto h = t.handle();
  CHECK_FALSE(json::get_bool(h, "pooled"));
  CHECK(ids.count(str(h, "sandboxId")) == 0);
  // Still pooled, never destroyed: once E2B answers again, a run takes it.
  CHECK(t.cli.pool_settles_at(1));
  CHECK(t.cli.pooled_sandboxes() == ids);
  const std::vector<std::string> alive = t.alive();
  CHECK(std::find(alive.begin(), alive.end(), *ids.begin()) != alive.end());
  t.server.with([&](auto& st) {
    st.faults.fail_route.clear();
    return 0;
  });
  r = t.run_script("cat hello.txt");
  CHECK(r.exit_code == 0);
  h = t.handle();
  CHECK(json::get_bool(h, "pooled"));
  CHECK(str(h, "sandboxId") == *ids.begin());
  CHECK(t.cli.pool_settles_at(1));
  REQUIRE(t.run({"pool", "drain"}).exit_code == 0);
  CHECK(t.alive().empty());
}

TEST_CASE("--shards takes what the pool has and creates the rest") {
  E2bCli t;
  REQUIRE(t.run({"pool", "fill", "--provider", "e2b", "--size", "2"}).exit_code == 0);
  const std::set<std::string> ids = t.cli.pooled_sandboxes();
  const std::string handles = (t.cli.root().path() / "shards.json").string();
  CliResult r = t.run({"run", "--provider", "e2b", "--shards", "3", "--lease-output", handles, "--", "cat", "hello.txt"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  auto doc = json::parse(read_file(handles), "handles");
  int pooled = 0;
  for (const auto& h : doc["shards"].GetArray()) {
    if (!json::get_bool(h, "pooled")) continue;
    ++pooled;
    CHECK(ids.count(str(h, "sandboxId")) == 1);
  }
  // Both pooled ones were taken unless a refill was quicker than a shard; at least one.
  CHECK(pooled >= 1);
  CHECK(t.cli.pool_settles_at(2));
  REQUIRE(t.run({"pool", "drain"}).exit_code == 0);
  CHECK(t.alive().empty());
}
