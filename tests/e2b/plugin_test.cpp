// The e2b plugin through its C ABI against the stand-in E2B: every primitive, the wire
// details (proto3 defaults, stream end, keepalives) and the failure paths with their hints.
#include <doctest/doctest.h>

#include <httplib.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "download_bytes.hpp"
#include "plugin_fixture.hpp"

using namespace corral;
using namespace corral::test;
using Clock = std::chrono::steady_clock;

namespace {

// No output, message or hint of `c` contains a secret.
void check_no_secrets(const PluginCall& c, const std::vector<std::string>& secrets) {
  for (const std::string& s : secrets) {
    if (s.empty()) continue;
    CHECK(c.result.find(s) == std::string::npos);
    CHECK(c.message.find(s) == std::string::npos);
    CHECK(c.hint.find(s) == std::string::npos);
    CHECK(c.out.find(s) == std::string::npos);
    CHECK(c.err.find(s) == std::string::npos);
    for (const auto& w : c.warnings) CHECK(w.find(s) == std::string::npos);
  }
}

// True while process `pid` exists and is not a zombie (a killed child not yet reaped).
bool process_alive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  const size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

// Waits up to five seconds for `pid` to be gone; true when it is.
bool gone_soon(pid_t pid) {
  for (int i = 0; i < 50 && process_alive(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return !process_alive(pid);
}

// The pid a command wrote into `file` of the sandbox's workdir (waits for it to appear).
pid_t pid_written(E2bFixture& fx, const std::string& id, const std::string& file) {
  auto path = fx.server.with([&](auto& st) { return st.sandboxes.at(id).root; }) / "home/user/workspace" / file;
  for (int i = 0; i < 50; ++i) {
    std::ifstream in(path);
    pid_t pid = 0;
    if (in >> pid && pid > 0) return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  FAIL("no pid in " << path);
  return 0;
}

std::string token_of(E2bFixture& fx, const std::string& id) {
  return fx.server.with([&](auto& st) { return st.sandboxes.at(id).access_token; });
}

}  // namespace

TEST_CASE("create tags the sandbox as corral's and asks for the configured lifetime") {
  E2bFixture fx(Opts{{"lifetime", "2h"}, {"template", "base"}});
  std::string sb = create(fx, "lease-7", "brave-fox");
  std::string id = id_of(sb);
  auto meta = fx.server.with([&](auto& st) { return st.sandboxes.at(id).metadata; });
  CHECK(meta["corral-owner"] == "corral");
  CHECK(meta["corral-lease"] == "lease-7");
  CHECK(meta["corral-slug"] == "brave-fox");
  auto body = json::parse(fx.server.with([](auto& st) { return st.create_bodies.back(); }), "create");
  CHECK(json::get_string(body, "templateID") == "base");
  CHECK(json::get_int(body, "timeout") == 7200);
  CHECK(json::get_bool(body, "secure") == true);
  // The token travels back to the host as a secret only, never as a detail.
  auto doc = json::parse(sb, "sandbox");
  CHECK(json::get_map(doc, "secrets")["envdAccessToken"] == token_of(fx, id));
  CHECK(json::dump(doc["details"]).find(token_of(fx, id)) == std::string::npos);
  CHECK(sb.find(fx.server.api_key()) == std::string::npos);
  CHECK(fx.plugin->call(fx.d().destroy, with_sandbox(sb)).ok);
  CHECK(fx.server.sandbox_ids().empty());
}

TEST_CASE("upload unpacks over the workdir and exec runs there with streamed output and exit codes") {
  E2bFixture fx;
  TempDir tmp;
  std::string sb = create(fx);
  std::string id = id_of(sb);
  PluginCall up = upload(fx, sb, archive(tmp, {{"hello.txt", "hello from the workspace\n"}, {"sub/inner.txt", "inner\n"}}));
  INFO(up.message);
  REQUIRE(up.ok);

  PluginCall cat = fx.plugin->call(fx.d().exec, exec_request(sb, shell("cat hello.txt; echo oops >&2")));
  REQUIRE(cat.ok);
  CHECK(cat.out == "hello from the workspace\n");
  CHECK(cat.err == "oops\n");
  CHECK(exit_code(cat) == 0);  // the stand-in omits exitCode 0, as proto3 JSON does

  Command argv;
  argv.argv = {"cat", "inner.txt"};
  argv.cwd = "sub";
  PluginCall inner = fx.plugin->call(fx.d().exec, exec_request(sb, argv));
  CHECK(inner.out == "inner\n");

  PluginCall fails = fx.plugin->call(fx.d().exec, exec_request(sb, shell("exit 3")));
  REQUIRE(fails.ok);
  CHECK(exit_code(fails) == 3);

  Command env = shell("printf '%s' \"$GREETING\"");
  env.env = {{"GREETING", "a b; $(not run)"}};
  CHECK(fx.plugin->call(fx.d().exec, exec_request(sb, env)).out == "a b; $(not run)");

  // A second sync unpacks over the workdir: its files win, what the sandbox made stays.
  REQUIRE(fx.plugin->call(fx.d().exec, exec_request(sb, shell("echo built > artifact.o"))).ok);
  REQUIRE(upload(fx, sb, archive(tmp, {{"new.txt", "new\n"}, {"hello.txt", "changed\n"}})).ok);
  PluginCall ls = fx.plugin->call(fx.d().exec, exec_request(sb, shell("ls -A; cat hello.txt")));
  CHECK(ls.out == "artifact.o\nhello.txt\nnew.txt\nsub\nchanged\n");
  // ... and no upload archive is left behind next to the workdir.
  PluginCall parent = fx.plugin->call(fx.d().exec, exec_request(sb, shell("ls -A ..")));
  CHECK(parent.out == "workspace\n");
  check_no_secrets(ls, {fx.server.api_key(), token_of(fx, id)});
  CHECK(fx.plugin->call(fx.d().destroy, with_sandbox(sb)).ok);
}

TEST_CASE("a cwd that leaves the workspace is refused before anything runs") {
  E2bFixture fx;
  std::string sb = create(fx);
  int before = fx.server.calls("start");
  PluginCall c = fx.plugin->call(fx.d().exec, exec_request(sb, shell("true", "../..")));
  CHECK_FALSE(c.ok);
  CHECK(c.code == CORRAL_ERR_INVALID_ARGUMENT);
  CHECK(fx.server.calls("start") == before);
  fx.plugin->call(fx.d().destroy, with_sandbox(sb));
}

TEST_CASE("large output arrives intact across many envelopes") {
  E2bFixture fx;
  std::string sb = ready(fx);
  // 3 MB of numbered lines: any lost, duplicated or reordered chunk changes the count.
  PluginCall c = fx.plugin->call(fx.d().exec, exec_request(sb, shell("seq 1 400000")));
  REQUIRE(c.ok);
  CHECK(c.out.size() == 2688895);
  CHECK(c.out.substr(c.out.size() - 7) == "400000\n");
  fx.plugin->call(fx.d().destroy, with_sandbox(sb));
}

TEST_CASE("a stream cut before its end event is a provider error, not success") {
  E2bFixture fx;
  std::string sb = ready(fx);
  fx.server.with([](auto& st) { st.faults.cut_streams_from = st.calls["start"] + 1; return 0; });
  PluginCall c = fx.plugin->call(fx.d().exec, exec_request(sb, shell("echo partial")));
  CHECK_FALSE(c.ok);
  CHECK(c.code == CORRAL_ERR_UNAVAILABLE);
  CHECK(c.message.find("ended before the command finished") != std::string::npos);
  CHECK(c.out == "partial\n");  // what arrived was still passed on
  fx.plugin->call(fx.d().destroy, with_sandbox(sb));
}

TEST_CASE("keepalives and a slow stream are handled") {
  E2bFixture fx;
  std::string sb = ready(fx);
  fx.server.with([](auto& st) { st.faults.keepalive_ms = 20; st.faults.slow_chunk_ms = 100; return 0; });
  PluginCall c = fx.plugin->call(fx.d().exec, exec_request(sb, shell("echo one; sleep 0.3; echo two; sleep 0.3; echo three")));
  INFO(c.message);
  REQUIRE(c.ok);
  CHECK(c.out == "one\ntwo\nthree\n");
  fx.plugin->call(fx.d().destroy, with_sandbox(sb));
}

TEST_CASE("Ctrl-C stops the remote process and its children promptly") {
  E2bFixture fx;
  std::string sb = ready(fx);
  std::string id = id_of(sb);
  auto start = Clock::now();
  PluginCall c = fx.plugin->call(fx.d().exec, exec_request(sb, shell("sleep 60 & echo $! > bg.pid; echo started; wait")),
                                 [&] { return Clock::now() - start > std::chrono::milliseconds(700); });
  CHECK_FALSE(c.ok);
  CHECK(c.code == CORRAL_ERR_CANCELLED);
  CHECK(c.out == "started\n");
  CHECK(c.warnings.empty());  // the kill was confirmed
  CHECK(Clock::now() - start < std::chrono::seconds(5));
  // The whole group was killed by a second Start; SendSignal (one pid only) was not needed.
  CHECK(fx.server.calls("signal") == 0);
  CHECK(gone_soon(pid_written(fx, id, "bg.pid")));
  // The stand-in forgets a process once it is reaped: nothing runs any more.
  for (int i = 0; i < 50 && !fx.server.with([&](auto& st) { return st.sandboxes.at(id).processes.empty(); }); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(fx.server.with([&](auto& st) { return st.sandboxes.at(id).processes.empty(); }));
  fx.plugin->call(fx.d().destroy, with_sandbox(sb));
}

TEST_CASE("a cancel before the start event kills the process found by its tag") {
  E2bFixture fx;
  std::string sb = ready(fx);
  std::string id = id_of(sb);
  fx.server.with([](auto& st) { st.faults.start_delay_ms = 2000; return 0; });
  auto start = Clock::now();
  PluginCall c = fx.plugin->call(fx.d().exec, exec_request(sb, shell("echo $$ > leader.pid; sleep 60")),
                                 [&] { return Clock::now() - start > std::chrono::milliseconds(700); });
  CHECK(c.code == CORRAL_ERR_CANCELLED);
  CHECK(fx.server.calls("signal") == 1);
  CHECK(c.warnings.empty());
  CHECK(gone_soon(pid_written(fx, id, "leader.pid")));
  fx.plugin->call(fx.d().destroy, with_sandbox(sb));
}

TEST_CASE("a command past its timeout is stopped with its children and reported as a timeout") {
  E2bFixture fx;
  std::string sb = ready(fx);
  std::string id = id_of(sb);
  auto start = Clock::now();
  PluginCall c = fx.plugin->call(fx.d().exec, exec_request(sb, shell("sleep 60 & echo $! > bg.pid; wait", "", 1)));
  CHECK_FALSE(c.ok);
  CHECK(c.code == CORRAL_ERR_TIMEOUT);
  CHECK(c.hint.find("--timeout") != std::string::npos);
  CHECK(Clock::now() - start < std::chrono::seconds(5));
  CHECK(gone_soon(pid_written(fx, id, "bg.pid")));
  // envd is also told the deadline, so it ends the call itself should corral die.
  auto sent = fx.server.with([](auto& st) { return st.header_values["start"]; });
  CHECK(std::find(sent.begin(), sent.end(), "31000") != sent.end());
  fx.plugin->call(fx.d().destroy, with_sandbox(sb));
}

TEST_CASE("answers that break the API's schema are provider errors, never usage errors") {
  E2bFixture fx;
  auto fault = [&](const std::string& route, const std::string& kind) {
    fx.server.with([&](auto& st) { st.faults.malformed_route = route; st.faults.malformed = kind; return 0; });
  };
  auto check_unexpected = [](const PluginCall& c) {
    INFO(c.message);
    CHECK_FALSE(c.ok);
    CHECK(c.code == CORRAL_ERR_UNAVAILABLE);
    CHECK(c.message.find("unexpected answer") != std::string::npos);
    CHECK_FALSE(c.hint.empty());
  };
  SUBCASE("create answers a proxy page; the sandbox it made anyway is found by its lease and removed") {
    fault("create", "not-json");
    PluginCall c = fx.plugin->call(fx.d().create, R"({"leaseId":"lease-x","slug":"s","labels":{}})");
    check_unexpected(c);
    CHECK(fx.server.sandbox_ids().empty());
    auto filters = fx.server.with([](auto& st) { return st.list_filters; });
    REQUIRE(filters.size() == 1);
    CHECK(filters[0] == std::map<std::string, std::string>{{"corral-lease", "lease-x"}, {"corral-owner", "corral"}});
  }
  SUBCASE("create answers fields of the wrong type") {
    fault("create", "wrong-types");
    check_unexpected(fx.plugin->call(fx.d().create, R"({"leaseId":"lease-y","slug":"s","labels":{}})"));
    CHECK(fx.server.sandbox_ids().empty());
  }
  SUBCASE("get and list") {
    std::string sb = create(fx);
    fault("get", "wrong-types");
    check_unexpected(fx.plugin->call(fx.d().get, "{\"id\":\"" + id_of(sb) + "\"}"));
    fault("list", "wrong-types");
    check_unexpected(fx.plugin->call(fx.d().list, R"({"labels":{}})"));
    fault("list", "not-json");
    check_unexpected(fx.plugin->call(fx.d().list, R"({"labels":{}})"));
    fault("list", "truncated");
    check_unexpected(fx.plugin->call(fx.d().list, R"({"labels":{}})"));
    fault("get", "truncated");
    check_unexpected(fx.plugin->call(fx.d().get, "{\"id\":\"" + id_of(sb) + "\"}"));
    fault("", "");
    fx.plugin->call(fx.d().destroy, with_sandbox(sb));
  }
  SUBCASE("a Start answered with text, a non-JSON event or a pid that is not a number") {
    std::string sb = ready(fx);
    fault("start", "text");
    PluginCall text = fx.plugin->call(fx.d().exec, exec_request(sb, shell("true")));
    check_unexpected(text);
    CHECK(text.message.find("text/plain") != std::string::npos);
    fault("start", "not-json");
    check_unexpected(fx.plugin->call(fx.d().exec, exec_request(sb, shell("true"))));
    fault("start", "wrong-types");
    check_unexpected(fx.plugin->call(fx.d().exec, exec_request(sb, shell("true"))));
    fault("", "");
    fx.plugin->call(fx.d().destroy, with_sandbox(sb));
  }
}

TEST_CASE("the stand-in's edge answers 502 for a port other than envd's") {
  E2bFixture fx;
  std::string id = id_of(create(fx));
  httplib::Client client(fx.server.sandbox_url());
  httplib::Headers headers = {{"E2b-Sandbox-Id", id}, {"E2b-Sandbox-Port", "8080"}};
  auto res = client.Post("/process.Process/Start", headers, "", "application/connect+json");
  REQUIRE(res);
  CHECK(res->status == 502);
  CHECK(fx.server.calls("start") == 1);
}

TEST_CASE("a lifetime above the account cap is retried once at the cap, with a warning") {
  SUBCASE("the message names the cap") {
    E2bFixture fx(Opts{{"lifetime", "48h"}});
    fx.server.with([](auto& st) { st.faults.lifetime_cap_hours = 24; return 0; });
    PluginCall c = fx.plugin->call(fx.d().create, R"({"leaseId":"l","slug":"s","labels":{}})");
    REQUIRE(c.ok);
    auto bodies = fx.server.with([](auto& st) { return st.create_bodies; });
    REQUIRE(bodies.size() == 2);
    CHECK(json::get_int(json::parse(bodies[0], "b"), "timeout") == 48 * 3600);
    CHECK(json::get_int(json::parse(bodies[1], "b"), "timeout") == 24 * 3600);
    REQUIRE(c.warnings.size() == 1);
    CHECK(c.warnings[0].find("Timeout cannot be greater than 24 hours") != std::string::npos);
    CHECK(c.warnings[0].find("--e2b-lifetime") != std::string::npos);
    CHECK(c.warnings[0].find("CORRAL_E2B_LIFETIME") != std::string::npos);
    CHECK(fx.server.sandbox_ids().size() == 1);
    fx.plugin->call(fx.d().destroy, with_sandbox(c.result));
  }
  SUBCASE("no number in the message means one hour") {
    E2bFixture fx(Opts{{"lifetime", "3h"}});
    fx.server.with([](auto& st) { st.faults.lifetime_cap_hours = 1; st.faults.cap_message_without_number = true; return 0; });
    PluginCall c = fx.plugin->call(fx.d().create, R"({"leaseId":"l","slug":"s","labels":{}})");
    REQUIRE(c.ok);
    auto bodies = fx.server.with([](auto& st) { return st.create_bodies; });
    CHECK(json::get_int(json::parse(bodies.back(), "b"), "timeout") == 3600);
    fx.plugin->call(fx.d().destroy, with_sandbox(c.result));
  }
  SUBCASE("extend is capped the same way") {
    E2bFixture fx;
    std::string sb = create(fx);
    fx.server.with([](auto& st) { st.faults.lifetime_cap_hours = 1; return 0; });
    PluginCall c = fx.plugin->call(fx.d().extend, wire::to_json(wire::ExtendRequest{sandbox_of(sb), 7200}));
    REQUIRE(c.ok);
    CHECK(c.warnings.size() == 1);
    CHECK(fx.server.calls("timeout") == 2);
    fx.plugin->call(fx.d().destroy, with_sandbox(sb));
  }
}

TEST_CASE("an unknown template names the template and how to get one") {
  E2bFixture fx(Opts{{"template", "no-such-template"}});
  PluginCall c = fx.plugin->call(fx.d().create, R"({"leaseId":"l","slug":"s","labels":{}})");
  CHECK_FALSE(c.ok);
  CHECK(c.code == CORRAL_ERR_NOT_FOUND);
  CHECK(c.message.find("'no-such-template'") != std::string::npos);
  CHECK(c.hint.find("e2b template build") != std::string::npos);
  CHECK(c.hint.find("--e2b-template") != std::string::npos);
  CHECK(c.hint.find("CORRAL_E2B_TEMPLATE") != std::string::npos);
  CHECK(fx.server.sandbox_ids().empty());
}

TEST_CASE("control-plane failures map to their codes with hints and no secret") {
  E2bFixture fx;
  SUBCASE("401") {
    fx.server.with([](auto& st) { st.faults.reject_api_key = true; return 0; });
    PluginCall c = fx.plugin->call(fx.d().create, R"({"leaseId":"l","slug":"s","labels":{}})");
    CHECK(c.code == CORRAL_ERR_AUTH);
    CHECK(c.hint.find("E2B_API_KEY") != std::string::npos);
    check_no_secrets(c, {fx.server.api_key()});
  }
  SUBCASE("missing key: no request is sent") {
    fx.open({{"api-key", ""}});
    PluginCall c = fx.plugin->call(fx.d().create, R"({"leaseId":"l","slug":"s","labels":{}})");
    CHECK(c.code == CORRAL_ERR_AUTH);
    CHECK(c.message.find("E2B_API_KEY") != std::string::npos);
    CHECK(fx.server.calls("create") == 0);
  }
  SUBCASE("503") {
    fx.server.with([](auto& st) { st.faults.fail_route = "create"; st.faults.fail_status = 503; return 0; });
    PluginCall c = fx.plugin->call(fx.d().create, R"({"leaseId":"l","slug":"s","labels":{}})");
    CHECK(c.code == CORRAL_ERR_UNAVAILABLE);
    CHECK(c.message.find("HTTP 503") != std::string::npos);
    CHECK_FALSE(c.hint.empty());
  }
  SUBCASE("429") {
    fx.server.with([](auto& st) { st.faults.fail_route = "create"; st.faults.fail_status = 429; return 0; });
    PluginCall c = fx.plugin->call(fx.d().create, R"({"leaseId":"l","slug":"s","labels":{}})");
    CHECK(c.code == CORRAL_ERR_QUOTA);
    CHECK(c.message.find("Rate limit exceeded") != std::string::npos);
  }
  CHECK(fx.server.sandbox_ids().empty());
}

TEST_CASE("a sandbox that is gone says it may have passed its lifetime") {
  E2bFixture fx;
  std::string sb = create(fx);
  std::string id = id_of(sb);
  fx.server.with([&](auto& st) { st.remove(id); return 0; });
  PluginCall get = fx.plugin->call(fx.d().get, "{\"id\":\"" + id + "\"}");
  CHECK(get.code == CORRAL_ERR_NOT_FOUND);
  CHECK(get.message.find(id) != std::string::npos);
  CHECK(get.hint.find("lifetime") != std::string::npos);
  // destroy of a gone sandbox succeeds (already gone counts as done), twice.
  CHECK(fx.plugin->call(fx.d().destroy, with_sandbox(sb)).ok);
  CHECK(fx.plugin->call(fx.d().destroy, with_sandbox(sb)).ok);
}

TEST_CASE("reuse: get, then the first data-plane call connects (resume + extend) once") {
  E2bFixture fx;
  std::string id = id_of(ready(fx));
  // A new process: the plugin knows nothing but the ID (as after `corral run --keep`).
  fx.open({});
  PluginCall got = fx.plugin->call(fx.d().get, "{\"id\":\"" + id + "\"}");
  REQUIRE(got.ok);
  CHECK(json::get_string(json::parse(got.result, "g"), "state") == "running");
  CHECK(fx.server.calls("connect") == 0);  // status must not extend anything
  Command c = shell("echo again");
  CHECK(fx.plugin->call(fx.d().exec, exec_request(got.result, c)).out == "again\n");
  CHECK(fx.plugin->call(fx.d().exec, exec_request(got.result, c)).ok);
  CHECK(fx.server.calls("connect") == 1);
  fx.plugin->call(fx.d().destroy, with_sandbox(got.result));
  CHECK(fx.server.sandbox_ids().empty());
}

TEST_CASE("list finds corral's sandboxes by label across pages") {
  E2bFixture fx;
  fx.server.with([](auto& st) { st.page_size = 2; return 0; });
  std::vector<std::string> mine;
  for (int i = 0; i < 3; ++i) mine.push_back(create(fx, "lease-a" + std::to_string(i)));
  std::string other = create(fx, "lease-b");
  // A sandbox somebody else made, without corral's marks.
  fx.server.with([](auto& st) { st.add_sandbox("base", true, 600); return 0; });

  PluginCall all = fx.plugin->call(fx.d().list, R"({"labels":{}})");
  REQUIRE(all.ok);
  auto doc = json::parse(all.result, "list");
  CHECK(doc["sandboxes"].Size() == 4);
  CHECK(fx.server.calls("list") == 2);  // two pages of two
  CHECK(all.result.find("envdAccessToken") == std::string::npos);

  PluginCall one = fx.plugin->call(fx.d().list, R"({"labels":{"corral-lease":"lease-b"}})");
  // The filter went to the server (not only re-checked here), with corral's owner mark.
  auto filter = fx.server.with([](auto& st) { return st.list_filters.back(); });
  CHECK(filter == std::map<std::string, std::string>{{"corral-lease", "lease-b"}, {"corral-owner", "corral"}});
  auto only = json::parse(one.result, "list");
  REQUIRE(only["sandboxes"].Size() == 1);
  CHECK(json::get_string(only["sandboxes"][0], "id") == id_of(other));

  for (const auto& sb : mine) fx.plugin->call(fx.d().destroy, with_sandbox(sb));
  fx.plugin->call(fx.d().destroy, with_sandbox(other));
  CHECK(fx.server.sandbox_ids().size() == 1);  // only the foreign one is left
}

TEST_CASE("extend sets the new lifetime; url names the port's host") {
  E2bFixture fx(Opts{{"domain", "sandbox.example.org"}});
  std::string sb = create(fx);
  std::string id = id_of(sb);
  PluginCall ext = fx.plugin->call(fx.d().extend, wire::to_json(wire::ExtendRequest{sandbox_of(sb), 600}));
  REQUIRE(ext.ok);
  auto end = fx.server.with([&](auto& st) { return st.sandboxes.at(id).end_at; });
  auto left = std::chrono::duration_cast<std::chrono::seconds>(end - std::chrono::system_clock::now()).count();
  CHECK(left > 590);
  CHECK(left <= 600);
  CHECK_FALSE(json::get_map(json::parse(ext.result, "e"), "details")["endAt"].empty());

  PluginCall url = fx.plugin->call(fx.d().url, wire::to_json(wire::UrlRequest{sandbox_of(sb), 8080}));
  REQUIRE(url.ok);
  CHECK(json::get_string(json::parse(url.result, "u"), "url") == "https://8080-" + id + ".sandbox.example.org");
  CHECK(fx.plugin->call(fx.d().url, wire::to_json(wire::UrlRequest{sandbox_of(sb), 70000})).code == CORRAL_ERR_INVALID_ARGUMENT);
  fx.plugin->call(fx.d().destroy, with_sandbox(sb));
}

TEST_CASE("settings are validated when the plugin opens") {
  e2b::standin::StandIn server;
  auto open_with = [&](std::map<std::string, std::string> o) {
    o.emplace("api-key", server.api_key());
    o.emplace("api-url", server.api_url());
    return PluginHarness::try_open(CORRAL_E2B_PLUGIN, o);
  };
  CHECK(open_with({}).ok);
  for (const char* bad : {"relative/dir", "/", "/tmp", "/usr", "/home/user", "/root", "/a/../b", "/srv//x", "/x/-rf"}) {
    PluginCall c = open_with({{"workdir", bad}});
    INFO(bad);
    CHECK_FALSE(c.ok);
    CHECK(c.code == CORRAL_ERR_INVALID_ARGUMENT);
    CHECK(c.hint.find("--e2b-workdir") != std::string::npos);
  }
  CHECK(open_with({{"workdir", "/home/user/project"}}).ok);
  for (const char* bad : {"../root", "a/b", "", "Root", "x y"}) {
    INFO(bad);
    CHECK(open_with({{"user", bad}}).code == CORRAL_ERR_INVALID_ARGUMENT);
  }
  CHECK(open_with({{"user", "root"}}).ok);
  CHECK(open_with({{"api-url", "http://api.example.com"}}).code == CORRAL_ERR_INVALID_ARGUMENT);
  CHECK(open_with({{"sandbox-url", "http://10.0.0.1:49983"}}).code == CORRAL_ERR_INVALID_ARGUMENT);
  CHECK(open_with({{"api-url", "https://api.example.com"}}).ok);
  CHECK(open_with({{"lifetime", "soon"}}).code == CORRAL_ERR_INVALID_ARGUMENT);
  CHECK(server.calls("create") + server.calls("list") == 0);
}

TEST_CASE("a redirect to another origin is refused and the key does not follow it") {
  e2b::standin::StandIn elsewhere("another-key");
  E2bFixture fx;
  fx.server.with([&](auto& st) { st.faults.redirect_to = elsewhere.api_url(); return 0; });
  PluginCall c = fx.plugin->call(fx.d().create, R"({"leaseId":"l","slug":"s","labels":{}})");
  CHECK_FALSE(c.ok);
  CHECK(c.message.find("refused a redirect") != std::string::npos);
  CHECK(elsewhere.calls("create") == 0);
  check_no_secrets(c, {fx.server.api_key()});
}

TEST_CASE("envd failures: a missing program and an unknown user") {
  E2bFixture fx;
  std::string sb = ready(fx);
  Command missing;
  missing.argv = {"definitely-not-a-program-xyz"};
  PluginCall c = fx.plugin->call(fx.d().exec, exec_request(sb, missing));
  // setsid starts it, so a missing program ends like it does in a shell: 127 and a message.
  REQUIRE(c.ok);
  CHECK(exit_code(c) == 127);
  CHECK(c.err.find("definitely-not-a-program-xyz") != std::string::npos);

  fx.open({{"user", "nobody-here"}});
  REQUIRE(fx.plugin->call(fx.d().get, "{\"id\":\"" + id_of(sb) + "\"}").ok);
  PluginCall user = fx.plugin->call(fx.d().exec, exec_request(sb, shell("true")));
  CHECK_FALSE(user.ok);
  CHECK(user.code == CORRAL_ERR_AUTH);
  CHECK(user.message.find("nobody-here") != std::string::npos);
  fx.plugin->call(fx.d().destroy, with_sandbox(sb));
}

TEST_CASE("secrets travel only in their headers") {
  E2bFixture fx;
  std::string sb = ready(fx);
  std::string id = id_of(sb);
  fx.plugin->call(fx.d().exec, exec_request(sb, shell("true")));
  std::string token = token_of(fx, id);
  auto headers = fx.server.with([](auto& st) { return st.header_values; });
  auto contains = [](const std::vector<std::string>& values, const std::string& s) {
    for (const auto& v : values)
      if (v.find(s) != std::string::npos) return true;
    return false;
  };
  CHECK(contains(headers["create"], fx.server.api_key()));
  CHECK(contains(headers["start"], token));
  CHECK_FALSE(contains(headers["start"], fx.server.api_key()));  // the API key never goes to envd
  fx.plugin->call(fx.d().destroy, with_sandbox(sb));
}

namespace {

std::string download_request(const std::string& sandbox, const std::string& cwd, std::vector<std::string> patterns,
                             const std::string& archive_path, std::uint64_t max_bytes = 1 << 30) {
  return wire::to_json(wire::DownloadCall{sandbox_of(sandbox), {cwd, std::move(patterns), archive_path, max_bytes}});
}

// The download archives left in the sandbox's /tmp.
int leftover_archives(E2bFixture& fx, const std::string& id) {
  auto tmp = fx.server.with([&](auto& st) { return st.sandboxes.at(id).root; }) / "tmp";
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp))
    if (e.path().filename().string().rfind("corral-download-", 0) == 0) ++n;
  return n;
}

}  // namespace

TEST_CASE("download brings the matching files back byte-exact and removes the sandbox's archive") {
  E2bFixture fx;
  TempDir tmp;
  std::string sb = create(fx);
  std::string id = id_of(sb);
  const std::string data = binary_bytes(300000);
  REQUIRE(upload(fx, sb, archive(tmp, {{"sub/data.bin", data}, {"sub/keep.txt", "not asked for\n"}})).ok);
  REQUIRE(fx.plugin->call(fx.d().exec, exec_request(sb, shell("mkdir -p reports/deep && echo '<ok/>' > "
                                                             "reports/deep/a.xml && echo b > 'reports/b c.xml'",
                                                             "sub")))
              .ok);
  const std::string local = (tmp.path() / "out.tar.gz").string();
  PluginCall c = fx.plugin->call(fx.d().download, download_request(sb, "sub", {"data.bin", "reports", "*.log"}, local));
  INFO(c.message);
  REQUIRE(c.ok);
  INFO(c.result);
  DownloadResult r = wire::read<DownloadResult>(c.result, "download result");
  CHECK(r.size == std::filesystem::file_size(local));
  CHECK(r.size > data.size());  // random bytes do not compress
  CHECK(r.missing == std::vector<std::string>{"*.log"});
  TempDir out;
  unpack(local, out);
  CHECK(read_file(out.path() / "data.bin") == data);
  CHECK(read_file(out.path() / "reports/deep/a.xml") == "<ok/>\n");
  CHECK(read_file(out.path() / "reports/b c.xml") == "b\n");
  CHECK_FALSE(std::filesystem::exists(out.path() / "keep.txt"));
  CHECK(fx.server.calls("download") == 1);
  CHECK(leftover_archives(fx, id) == 0);
  check_no_secrets(c, {fx.server.api_key(), token_of(fx, id)});

  // A command folder reached through a symlink packs the same files.
  REQUIRE(fx.plugin->call(fx.d().exec, exec_request(sb, shell("ln -s sub link"))).ok);
  PluginCall linked = fx.plugin->call(fx.d().download, download_request(sb, "link", {"data.bin"}, local));
  INFO(linked.message);
  REQUIRE(linked.ok);
  TempDir again;
  unpack(local, again);
  CHECK(read_file(again.path() / "data.bin") == data);
  CHECK(leftover_archives(fx, id) == 0);
  fx.plugin->call(fx.d().destroy, with_sandbox(sb));
}

TEST_CASE("download of patterns that match nothing fetches nothing") {
  E2bFixture fx;
  TempDir tmp;
  std::string sb = ready(fx);
  const std::string local = (tmp.path() / "out.tar.gz").string();
  PluginCall c = fx.plugin->call(fx.d().download, download_request(sb, "", {"*.xml", "no/such"}, local));
  INFO(c.message);
  REQUIRE(c.ok);
  INFO(c.result);
  DownloadResult r = wire::read<DownloadResult>(c.result, "download result");
  CHECK(r.size == 0);
  CHECK(r.missing == std::vector<std::string>{"*.xml", "no/such"});
  CHECK(fx.server.calls("download") == 0);
  CHECK_FALSE(std::filesystem::exists(local));
  CHECK(leftover_archives(fx, id_of(sb)) == 0);
  fx.plugin->call(fx.d().destroy, with_sandbox(sb));
}

TEST_CASE("download stops at the size bound, and the sandbox's archive is still removed") {
  E2bFixture fx;
  TempDir tmp;
  std::string sb = create(fx);
  REQUIRE(upload(fx, sb, archive(tmp, {{"big.bin", binary_bytes(2 << 20)}})).ok);
  const std::string local = (tmp.path() / "out.tar.gz").string();
  PluginCall c = fx.plugin->call(fx.d().download, download_request(sb, "", {"big.bin"}, local, 256 * 1024));
  CHECK_FALSE(c.ok);
  CHECK(c.code == CORRAL_ERR_INVALID_ARGUMENT);
  CHECK(c.message.find("--max-download") != std::string::npos);
  CHECK(std::filesystem::file_size(local) <= 256 * 1024);
  CHECK(leftover_archives(fx, id_of(sb)) == 0);
  fx.plugin->call(fx.d().destroy, with_sandbox(sb));
}

TEST_CASE("Ctrl-C during a download stops the transfer") {
  E2bFixture fx;
  TempDir tmp;
  std::string sb = create(fx);
  REQUIRE(upload(fx, sb, archive(tmp, {{"big.bin", binary_bytes(4 << 20)}})).ok);
  fx.server.with([](auto& st) { st.faults.slow_chunk_ms = 100; return 0; });
  const std::string local = (tmp.path() / "out.tar.gz").string();
  // Ctrl-C once the first bytes have arrived: 64 slow chunks would take over six seconds.
  auto started = Clock::now();
  PluginCall c = fx.plugin->call(fx.d().download, download_request(sb, "", {"big.bin"}, local), [&] {
    std::error_code ec;
    return std::filesystem::file_size(local, ec) > 0 && !ec;
  });
  CHECK_FALSE(c.ok);
  CHECK(c.code == CORRAL_ERR_CANCELLED);
  CHECK(Clock::now() - started < std::chrono::seconds(4));
  fx.server.with([](auto& st) { st.faults.slow_chunk_ms = 0; return 0; });
  CHECK(leftover_archives(fx, id_of(sb)) == 0);
  fx.plugin->call(fx.d().destroy, with_sandbox(sb));
}

TEST_CASE("download from a vanished sandbox or folder is not-found") {
  E2bFixture fx;
  TempDir tmp;
  std::string sb = ready(fx);
  const std::string local = (tmp.path() / "out.tar.gz").string();
  PluginCall folder = fx.plugin->call(fx.d().download, download_request(sb, "gone", {"x"}, local));
  CHECK(folder.code == CORRAL_ERR_NOT_FOUND);
  CHECK(folder.message.find("folder") != std::string::npos);
  std::string id = id_of(sb);
  fx.server.with([&](auto& st) { st.remove(id); return 0; });
  PluginCall c = fx.plugin->call(fx.d().download, download_request(sb, "", {"README"}, local));
  CHECK_FALSE(c.ok);
  CHECK(c.code == CORRAL_ERR_NOT_FOUND);
  CHECK(c.message.find(id) != std::string::npos);
  CHECK(fx.server.calls("download") == 0);
}
