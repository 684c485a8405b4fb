// `corral mcp` end to end: the built binary spawned as an MCP client spawns it, spoken to in
// raw JSON-RPC lines on its stdin and stdout, its sandboxes made by the local provider.
// Both protocol eras, every tool's happy path on a started sandbox, hostile input,
// cancellation, the user's limits, and what the server leaves behind when it ends.
#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <string>
#include <vector>

#include "cli.hpp"
#include "corral/json.hpp"
#include "mcp_session.hpp"

namespace fs = std::filesystem;
namespace json = corral::json;
using corral::test::CliEnv;
using corral::test::eventually;
using namespace corral::test::mcp;
using namespace std::chrono_literals;

TEST_CASE("legacy era: initialize, tools/list with schemas, and run's output and exit code") {
  CliEnv env;
  fill_workspace(env);
  McpServer server(env, {});
  server.send(kInitialize);
  json::Document init = server.answer("0");
  const json::Value& r = result_of(init);
  CHECK(json::get_string(r, "protocolVersion") == "2025-11-25");
  CHECK(json::get_string(r["serverInfo"], "name") == "corral");
  CHECK(r["capabilities"].HasMember("tools"));
  CHECK_FALSE(r.HasMember("resultType"));  // a modern-era member only
  server.send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");

  json::Document list = server.request("1", "tools/list");
  const json::Value& tools = result_of(list)["tools"];
  REQUIRE(tools.IsArray());
  std::vector<std::string> names;
  for (const json::Value& t : tools.GetArray()) {
    names.push_back(json::get_string(t, "name"));
    CHECK(!json::get_string(t, "description").empty());
    CHECK(json::get_string(t["inputSchema"], "type") == "object");
    CHECK(json::get_string(t["outputSchema"], "type") == "object");
  }
  CHECK(names == std::vector<std::string>{"run", "sandbox_start", "sandbox_exec", "sandbox_write_file",
                                          "sandbox_read_file", "sandbox_list_files", "sandbox_fork", "sandbox_pause",
                                          "sandbox_resume", "sandbox_stop", "sandbox_status", "sandbox_list",
                                          "providers"});

  // A command that fails is a result, not a tool error.
  json::Document run = server.call(2, "run", R"({"command":["sh","-c","cat hello.txt; echo oops >&2; exit 3"]})");
  const json::Value& out = structured(run);
  CHECK(json::get_int(out, "exitCode") == 3);
  CHECK(json::get_string(out, "stdout") == "hello from the served folder\n");
  CHECK(json::get_string(out, "stderr") == "oops\n");
  CHECK(json::get_string(out["handle"], "provider") == "local");

  // A folder below the root.
  json::Document below = server.call(3, "run", R"({"command":["cat","inner.txt"],"cwd":"sub"})");
  CHECK(json::get_string(structured(below), "stdout") == "inner\n");

  // download brings files back under the served folder, where the handle says.
  json::Document downloaded =
      server.call(5, "run", R"({"command":["sh","-c","echo artefact > built.txt"],"download":["built.txt"]})");
  const std::string dir = json::get_string(structured(downloaded)["handle"]["downloads"], "dir");
  CHECK(dir.rfind((env.workspace() / ".corral" / "runs").string(), 0) == 0);
  CHECK(corral::test::read_file(fs::path(dir) / "built.txt") == "artefact\n");

  json::Document providers = server.call(4, "providers");
  const json::Value& p = structured(providers)["providers"];
  REQUIRE(p.Size() == 1);
  CHECK(json::get_string(p[0], "name") == "local");

  // The run's sandbox is gone: nothing made by a run outlives it.
  CHECK(env.local_sandboxes().empty());
  CHECK(env.claims().empty());
  server.close_stdin();
  CHECK(server.wait() == 0);
}

TEST_CASE("a started sandbox: exec, write, read, list, status, stop") {
  CliEnv env;
  fill_workspace(env);
  McpServer server(env, {});
  server.initialize();
  json::Document started = server.call(1, "sandbox_start");
  const std::string lease = lease_of(started);
  REQUIRE(!lease.empty());
  CHECK(env.local_sandboxes().size() == 1);

  json::Document exec = server.call(2, "sandbox_exec",
                                    R"({"lease":")" + lease + R"(","command":["sh","-c","cat hello.txt; exit 4"]})");
  CHECK(json::get_int(structured(exec), "exitCode") == 4);
  CHECK(json::get_string(structured(exec), "stdout") == "hello from the served folder\n");

  json::Document piped = server.call(3, "sandbox_exec",
                                     R"({"lease":")" + lease + R"(","command":["wc","-c"],"stdin":"twelve bytes"})");
  CHECK(json::get_string(structured(piped), "stdout").find("12") != std::string::npos);

  json::Document wrote = server.call(
      4, "sandbox_write_file", R"({"lease":")" + lease + R"(","path":"made/note.txt","content":"caf\u00e9 100% \\ ok\n"})");
  CHECK(json::get_int(structured(wrote), "size") == 16);
  json::Document read = server.call(5, "sandbox_read_file", R"({"lease":")" + lease + R"(","path":"made/note.txt"})");
  CHECK(json::get_string(structured(read), "content") == "caf\xc3\xa9 100% \\ ok\n");
  CHECK(json::get_string(structured(read), "encoding") == "utf-8");
  CHECK_FALSE(json::get_bool(structured(read), "truncated"));

  // Bytes that are not text go in and come out as base64.
  server.call(6, "sandbox_write_file",
              R"({"lease":")" + lease + R"(","path":"blob.bin","content":"AAEC/4A=","encoding":"base64"})");
  json::Document blob = server.call(7, "sandbox_read_file", R"({"lease":")" + lease + R"(","path":"blob.bin"})");
  CHECK(json::get_string(structured(blob), "encoding") == "base64");
  CHECK(json::get_string(structured(blob), "content") == "AAEC/4A=");
  CHECK(json::get_int(structured(blob), "size") == 5);

  // The command sees what the file tools wrote.
  json::Document seen = server.call(8, "sandbox_exec", R"({"lease":")" + lease + R"(","command":["cat","made/note.txt"]})");
  CHECK(json::get_string(structured(seen), "stdout") == "caf\xc3\xa9 100% \\ ok\n");

  json::Document listed = server.call(9, "sandbox_list_files", R"({"lease":")" + lease + R"("})");
  std::vector<std::string> entries;
  for (const json::Value& e : structured(listed)["entries"].GetArray())
    entries.push_back(json::get_string(e, "name") + ":" + json::get_string(e, "type"));
  std::sort(entries.begin(), entries.end());
  CHECK(entries == std::vector<std::string>{"blob.bin:file", "hello.txt:file", "made:dir", "sub:dir"});

  // Paths that leave the workspace are refused, links are not followed.
  CHECK(tool_error(server.call(10, "sandbox_read_file", R"({"lease":")" + lease + R"(","path":"../etc/passwd"})"))
            .find("..") != std::string::npos);
  CHECK(!tool_error(server.call(11, "sandbox_read_file", R"({"lease":")" + lease + R"(","path":"/etc/passwd"})")).empty());
  server.call(12, "sandbox_exec", R"({"lease":")" + lease + R"(","command":["ln","-s","/etc","out"]})");
  CHECK(tool_error(server.call(13, "sandbox_read_file", R"({"lease":")" + lease + R"(","path":"out/passwd"})"))
            .find("symbolic link") != std::string::npos);
  CHECK(tool_error(server.call(14, "sandbox_write_file", R"({"lease":")" + lease + R"(","path":"out/x","content":"x"})"))
            .find("symbolic link") != std::string::npos);
  CHECK(tool_error(server.call(15, "sandbox_read_file", R"({"lease":")" + lease + R"(","path":"missing.txt"})"))
            .find("does not exist") != std::string::npos);

  json::Document status = server.call(16, "sandbox_status", R"({"lease":")" + lease + R"("})");
  CHECK(structured(status).HasMember("sandbox"));
  json::Document list = server.call(17, "sandbox_list");
  REQUIRE(structured(list)["leases"].Size() == 1);
  CHECK(json::get_string(structured(list)["leases"][0], "lease") == lease);

  json::Document stopped = server.call(18, "sandbox_stop", R"({"lease":")" + lease + R"("})");
  CHECK(json::get_string(structured(stopped), "state") == "stopped");
  CHECK(env.local_sandboxes().empty());
  CHECK(env.claims().empty());
  // A lease that is gone, or was never this server's, is a tool error.
  CHECK(!tool_error(server.call(19, "sandbox_exec", R"({"lease":")" + lease + R"(","command":["true"]})")).empty());
  CHECK(!tool_error(server.call(20, "sandbox_stop", R"({"lease":"no-such-lease"})")).empty());
  server.close_stdin();
  CHECK(server.wait() == 0);
}

TEST_CASE("fork, pause and resume a started sandbox; forks count against --max-sandboxes") {
  CliEnv env;
  fill_workspace(env);
  McpServer server(env, {"--max-sandboxes", "3"});
  server.initialize();
  const std::string lease = lease_of(server.call(1, "sandbox_start"));
  server.call(2, "sandbox_write_file", R"({"lease":")" + lease + R"(","path":"state.txt","content":"before fork"})");
  CHECK(tool_error(server.call(3, "sandbox_fork", R"({"lease":")" + lease + R"(","count":3})")).find("--max-sandboxes") !=
        std::string::npos);
  CHECK(env.local_sandboxes().size() == 1);
  json::Document forked = server.call(4, "sandbox_fork", R"({"lease":")" + lease + R"(","count":2})");
  const std::vector<std::string> forks = json::get_strings(structured(forked), "leases");
  REQUIRE(forks.size() == 2);
  CHECK(env.local_sandboxes().size() == 3);
  json::Document copy = server.call(5, "sandbox_read_file", R"({"lease":")" + forks[1] + R"(","path":"state.txt"})");
  CHECK(json::get_string(structured(copy), "content") == "before fork");
  // A write in a fork is not seen in its source.
  server.call(6, "sandbox_write_file", R"({"lease":")" + forks[0] + R"(","path":"state.txt","content":"fork"})");
  CHECK(json::get_string(structured(server.call(7, "sandbox_read_file", R"({"lease":")" + lease + R"(","path":"state.txt"})")),
                         "content") == "before fork");

  CHECK(json::get_string(structured(server.call(8, "sandbox_pause", R"({"lease":")" + lease + R"("})")), "state") == "paused");
  CHECK(json::get_string(structured(server.call(9, "sandbox_resume", R"({"lease":")" + lease + R"("})")), "state") ==
        "running");
  // exec resumes a paused sandbox itself.
  server.call(10, "sandbox_pause", R"({"lease":")" + lease + R"("})");
  json::Document exec = server.call(11, "sandbox_exec", R"({"lease":")" + lease + R"(","command":["cat","state.txt"]})");
  CHECK(json::get_string(structured(exec), "stdout") == "before fork");
  CHECK(structured(server.call(12, "sandbox_list"))["leases"].Size() == 3);
  server.close_stdin();
  CHECK(server.wait() == 0);
  CHECK(env.local_sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE("modern era: _meta on every request, server/discover, and versions it does not speak") {
  CliEnv env;
  fill_workspace(env);
  McpServer server(env, {});
  const std::string meta = std::string("{") + kModernMeta + "}";

  json::Document discover = server.request("1", "server/discover", meta);
  const json::Value& d = result_of(discover);
  REQUIRE(d["supportedVersions"].IsArray());
  CHECK(json::get_strings(d, "supportedVersions").front() == "2026-07-28");
  CHECK(json::get_string(d, "resultType") == "complete");
  CHECK(json::get_string(d["_meta"]["io.modelcontextprotocol/serverInfo"], "name") == "corral");

  json::Document list = server.request("2", "tools/list", meta);
  CHECK(result_of(list)["tools"].Size() == 13);
  CHECK(json::get_string(result_of(list), "resultType") == "complete");

  json::Document run = server.request(
      "3", "tools/call", std::string(R"({"name":"run","arguments":{"command":["echo","modern"]},)") + kModernMeta + "}");
  CHECK(json::get_string(structured(run), "stdout") == "modern\n");
  CHECK(json::get_string(result_of(run), "resultType") == "complete");

  // A version it does not speak: -32022 with what it does speak.
  json::Document future = server.request(
      "4", "tools/list",
      R"({"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}})");
  CHECK(error_code(future) == -32022);
  CHECK(json::get_string(future["error"]["data"], "requested") == "2099-01-01");
  const std::vector<std::string> supported = json::get_strings(future["error"]["data"], "supported");
  CHECK(std::find(supported.begin(), supported.end(), "2026-07-28") != supported.end());
  CHECK(std::find(supported.begin(), supported.end(), "2025-11-25") != supported.end());

  // The modern era needs the client's capabilities on every request.
  CHECK(error_code(server.request("5", "tools/list", R"({"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}})")) ==
        -32602);
  // Neither era: no initialize, no _meta.
  CHECK(error_code(server.request("6", "tools/list")) == -32600);
  // A string id is answered as a string.
  json::Document ping = server.request("\"p\"", "ping", meta);
  CHECK(json::get_string(ping, "id") == "p");
  server.close_stdin();
  CHECK(server.wait() == 0);
}

TEST_CASE("hostile input gets the JSON-RPC errors, never a crash or a hang") {
  CliEnv env;
  fill_workspace(env);
  McpServer server(env, {});
  server.initialize();

  server.send(R"({"jsonrpc":"2.0","id":1,"method":)");
  json::Document malformed = server.next();
  CHECK(error_code(malformed) == -32700);
  CHECK_FALSE(malformed.HasMember("id"));  // MCP has no null id: left out

  server.send(R"([{"jsonrpc":"2.0","id":2,"method":"ping"}])");
  CHECK(error_code(server.next()) == -32600);  // batches are not part of MCP

  server.send(std::string(5000, '[') + std::string(5000, ']'));
  CHECK(error_code(server.next()) == -32700);  // nesting past the parser's bound

  server.send(R"({"jsonrpc":"1.0","id":3,"method":"ping"})");
  CHECK(error_code(server.answer("3")) == -32600);

  CHECK(error_code(server.request("4", "resources/list")) == -32601);
  json::Document unknown = server.request("5", "tools/call", R"({"name":"rm_rf"})");
  CHECK(error_code(unknown) == -32602);
  CHECK(error_code(server.request("6", "tools/call", "[1,2]")) == -32602);
  CHECK(error_code(server.request("7", "tools/call", R"({"name":7})")) == -32602);

  // Bad arguments are tool errors the model can read and correct.
  CHECK(tool_error(server.call(8, "run", R"({"command":"ls"})")).find("array of strings") != std::string::npos);
  CHECK(tool_error(server.call(9, "run", R"({})")).find("command") != std::string::npos);
  CHECK(tool_error(server.call(10, "run", R"({"command":["true"],"bogus":1})")).find("bogus") != std::string::npos);
  CHECK(tool_error(server.call(11, "sandbox_exec", R"({"lease":5,"command":["true"]})")).find("lease") !=
        std::string::npos);

  // A notification gets no answer, whatever its method: the next line is the ping's.
  server.send(R"({"jsonrpc":"2.0","method":"notifications/whatever","params":{}})");
  server.send(R"({"jsonrpc":"2.0","method":"tools/call","params":{"name":"run","arguments":{"command":["true"]}}})");
  server.send(R"({"jsonrpc":"2.0","id":12,"method":"ping"})");
  json::Document pong = server.next();
  CHECK(json::get_int(pong, "id") == 12);

  // A line over the limit (12 MiB) is refused, not buffered, and the server goes on.
  server.write_raw(R"({"jsonrpc":"2.0","id":13,"method":"ping","params":{"x":")" + std::string(13u << 20, 'a') + "\"}}\n");
  json::Document oversized = server.next(60s);
  CHECK(error_code(oversized) == -32600);
  CHECK(json::get_int(server.request("14", "ping"), "id") == 14);

  // Invalid UTF-8 and control bytes.
  server.send("{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"\xff\xfe\"}");
  CHECK(server.next().HasMember("error"));
  CHECK(env.local_sandboxes().empty());
  server.close_stdin();
  CHECK(server.wait() == 0);
}

TEST_CASE("output past --max-output is cut with a marker; progress carries it as it comes") {
  CliEnv env;
  fill_workspace(env);
  McpServer server(env, {"--max-output", "1K"});
  server.initialize();
  json::Document big = server.call(1, "run", R"({"command":["seq","1","3000"]})");
  const std::string out = json::get_string(structured(big), "stdout");
  CHECK(out.size() < 1500);
  CHECK(out.rfind("1\n2\n3\n", 0) == 0);
  CHECK(out.find("left out") != std::string::npos);
  CHECK(out.find("3000\n") != std::string::npos);  // the tail is kept too
  CHECK(json::get_int(structured(big), "stdoutBytes") == 13893);

  server.send(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run","arguments":)"
              R"({"command":["sh","-c","echo first; sleep 0.3; echo second"]},"_meta":{"progressToken":"t1"}}})");
  std::vector<std::string> notes;
  json::Document done = server.answer("2", &notes);
  CHECK(json::get_string(structured(done), "stdout") == "first\nsecond\n");
  REQUIRE(notes.size() >= 2);
  CHECK(notes[0].find("notifications/progress") != std::string::npos);
  CHECK(notes[0].find("\"t1\"") != std::string::npos);
  CHECK(notes[0].find("first") != std::string::npos);
  server.close_stdin();
  CHECK(server.wait() == 0);
}

TEST_CASE("a cancelled call gets no answer and its command is stopped") {
  CliEnv env;
  fill_workspace(env);
  McpServer server(env, {});
  server.initialize();
  const std::string lease = lease_of(server.call(1, "sandbox_start"));
  server.send(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sandbox_exec","arguments":{"lease":")" +
              lease + R"(","command":["sleep","31.25"]}}})");
  REQUIRE(eventually([] { return !corral::test::processes_running({"sleep", "31.25"}).empty(); }));
  const int sleeper = corral::test::processes_running({"sleep", "31.25"}).front();
  server.send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"test"}})");
  CHECK(corral::test::gone_within(sleeper, 10s));
  // The sandbox is free again at once, and the next line is this call's, not the cancelled one's.
  json::Document after = server.call(3, "sandbox_exec", R"({"lease":")" + lease + R"(","command":["echo","after"]})");
  CHECK(json::get_string(structured(after), "stdout") == "after\n");
  CHECK_FALSE(server.next_line(500ms).has_value());
  // Cancelling what is unknown or done is ignored.
  server.send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}})");
  server.send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"never"}})");
  CHECK(json::get_int(server.request("4", "ping"), "id") == 4);
  server.close_stdin();
  CHECK(server.wait() == 0);
}

TEST_CASE("calls on different sandboxes run at the same time") {
  CliEnv env;
  fill_workspace(env);
  McpServer server(env, {});
  server.initialize();
  const std::string a = lease_of(server.call(1, "sandbox_start"));
  const std::string b = lease_of(server.call(2, "sandbox_start"));
  const auto start = std::chrono::steady_clock::now();
  for (const auto& [id, lease] : {std::pair{3, a}, std::pair{4, b}})
    server.send(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
                R"(,"method":"tools/call","params":{"name":"sandbox_exec","arguments":{"lease":")" + lease +
                R"(","command":["sleep","1"]}}})");
  int answered = 0;
  while (answered < 2) {
    json::Document m = server.next();
    CHECK(json::get_int(structured(m), "exitCode") == 0);
    ++answered;
  }
  CHECK(std::chrono::steady_clock::now() - start < 1900ms);
  server.close_stdin();
  CHECK(server.wait() == 0);
}

TEST_CASE("the user's limits: sandboxes, network, variables, folders, keeping") {
  CliEnv env;
  fill_workspace(env);
  env.env["MCP_TEST_ALLOWED"] = "yes";
  env.env["MCP_TEST_OTHER"] = "no";
  McpServer server(env, {"--max-sandboxes", "2", "--network", "none", "--env", "MCP_TEST_ALLOWED"});
  server.initialize();

  // A flood of starts past the limit: exactly two sandboxes, the rest clear tool errors.
  for (int id = 1; id <= 5; ++id)
    server.send(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"tools/call","params":{"name":"sandbox_start"}})");
  int started = 0, refused = 0;
  for (int i = 0; i < 5; ++i) {
    json::Document m = server.next(60s);
    if (json::get_bool(result_of(m), "isError")) {
      CHECK(tool_error(m).find("--max-sandboxes") != std::string::npos);
      ++refused;
    } else {
      ++started;
    }
  }
  CHECK(started == 2);
  CHECK(refused == 3);
  CHECK(env.local_sandboxes().size() == 2);
  CHECK(tool_error(server.call(6, "run", R"({"command":["true"]})")).find("--max-sandboxes") != std::string::npos);
  json::Document list = server.call(7, "sandbox_list");
  const std::string first = json::get_string(structured(list)["leases"][0], "lease");
  server.call(8, "sandbox_stop", R"({"lease":")" + first + R"("})");

  // Asking for more than the user allows is refused before anything is made.
  CHECK(tool_error(server.call(9, "run", R"({"command":["true"],"network":"open"})")).find("wider") != std::string::npos);
  CHECK(tool_error(server.call(10, "run", R"({"command":["true"],"env":["MCP_TEST_OTHER"]})")).find("MCP_TEST_OTHER") !=
        std::string::npos);
  // NAME=VALUE, which `corral run --env` takes from the user, is no name the user allowed.
  CHECK(tool_error(server.call(30, "run", R"({"command":["true"],"env":["MCP_TEST_ALLOWED=forged"]})"))
            .find("may not be forwarded") != std::string::npos);
  CHECK(tool_error(server.call(11, "run", R"({"command":["true"],"cwd":".."})")).find("outside") != std::string::npos);
  CHECK(!tool_error(server.call(12, "run", R"({"command":["true"],"cwd":"/etc"})")).empty());
  CHECK(tool_error(server.call(13, "run", R"({"command":["true"],"provider":"e2b"})")).find("e2b") !=
        std::string::npos);
  CHECK(tool_error(server.call(14, "sandbox_start", R"({"keep":true})")).find("--allow-keep") != std::string::npos);
  CHECK(tool_error(server.call(15, "run", R"({"command":["true"],"timeout":"2h"})")).find("--lifetime") !=
        std::string::npos);

  // What the user allows works.
  json::Document allowed = server.call(16, "run", R"({"command":["sh","-c","echo $MCP_TEST_ALLOWED"],"env":["MCP_TEST_ALLOWED"]})");
  CHECK(json::get_string(structured(allowed), "stdout") == "yes\n");
  server.close_stdin();
  CHECK(server.wait() == 0);
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("a sandbox past --lifetime is stopped by the server") {
  CliEnv env;
  fill_workspace(env);
  McpServer server(env, {"--lifetime", "2s"});
  server.initialize();
  const std::string lease = lease_of(server.call(1, "sandbox_start"));
  CHECK(env.local_sandboxes().size() == 1);
  // The server says so once the stop is done, and forgets the lease just after: waited
  // for, since the folder and the claim go before either.
  CHECK(eventually([&] { return server.stderr_text().find("its lifetime ran out") != std::string::npos; }));
  CHECK(env.local_sandboxes().empty());
  CHECK(env.claims().empty());
  int id = 100;
  CHECK(eventually([&] { return structured(server.call(id++, "sandbox_list"))["leases"].Size() == 0; }));
  CHECK(!tool_error(server.call(3, "sandbox_exec", R"({"lease":")" + lease + R"(","command":["true"]})")).empty());
  server.close_stdin();
  CHECK(server.wait() == 0);
}

TEST_CASE("stdin closed mid-call: the call is stopped, its sandboxes too, kept ones stay") {
  CliEnv env;
  fill_workspace(env);
  McpServer server(env, {"--allow-keep"});
  server.initialize();
  const std::string busy = lease_of(server.call(1, "sandbox_start"));
  lease_of(server.call(2, "sandbox_start"));
  const std::string kept = lease_of(server.call(3, "sandbox_start", R"({"keep":true})"));
  CHECK(env.local_sandboxes().size() == 3);
  server.send(R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"sandbox_exec","arguments":{"lease":")" +
              busy + R"(","command":["sleep","32.5"]}}})");
  REQUIRE(eventually([] { return !corral::test::processes_running({"sleep", "32.5"}).empty(); }));
  server.close_stdin();
  CHECK(server.wait(30s) == 0);
  CHECK(corral::test::processes_running({"sleep", "32.5"}).empty());
  // Only the kept one is left, and the log says so and how to stop it.
  CHECK(env.local_sandboxes().size() == 1);
  CHECK(env.claims().size() == 1);
  CHECK(server.stderr_text().find("kept " + kept) != std::string::npos);
  CHECK(env.run({"stop", "--id", kept}).exit_code == 0);
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("SIGTERM stops the sandboxes the server made") {
  CliEnv env;
  fill_workspace(env);
  McpServer server(env, {});
  server.initialize();
  lease_of(server.call(1, "sandbox_start"));
  CHECK(env.local_sandboxes().size() == 1);
  ::kill(server.pid(), SIGTERM);
  CHECK(server.wait(30s) == 0);
  CHECK(env.local_sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE("--adopt lets the tools act on a kept lease, which the server never stops") {
  CliEnv env;
  fill_workspace(env);
  REQUIRE(env.run({"run", "--keep", "--", "true"}).exit_code == 0);
  const std::string lease = env.only_lease();
  {
    McpServer stranger(env, {});
    stranger.initialize();
    CHECK(tool_error(stranger.call(1, "sandbox_exec", R"({"lease":")" + lease + R"(","command":["true"]})"))
              .find("--adopt") != std::string::npos);
  }
  McpServer server(env, {"--adopt", lease});
  server.initialize();
  json::Document exec = server.call(1, "sandbox_exec", R"({"lease":")" + lease + R"(","command":["echo","adopted"]})");
  CHECK(json::get_string(structured(exec), "stdout") == "adopted\n");
  server.close_stdin();
  CHECK(server.wait() == 0);
  CHECK(env.claims().size() == 1);
  CHECK(env.run({"stop", "--id", lease}).exit_code == 0);
}

TEST_CASE("a tool whose feature the sandbox's provider lacks names the allowed providers that have it") {
  CliEnv env;
  fill_workspace(env);
  const fs::path boxes = env.root().path() / "boxes";
  fs::create_directories(boxes);
  env.add_registry("mountbox", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-mountbox.so"});
  env.env["TESTBOX_DIR"] = boxes.string();
  McpServer server(env, {"--provider", "mountbox", "--allow-provider", "local"});
  server.initialize();
  json::Document providers = server.call(1, "providers");
  REQUIRE(structured(providers)["providers"].Size() == 2);
  CHECK(json::get_string(structured(providers)["providers"][0], "name") == "mountbox");
  const std::string lease = lease_of(server.call(2, "sandbox_start"));
  const std::string fork = tool_error(server.call(3, "sandbox_fork", R"({"lease":")" + lease + R"("})"));
  CHECK(fork.find("fork") != std::string::npos);
  CHECK(fork.find("local") != std::string::npos);
  CHECK(tool_error(server.call(4, "sandbox_pause", R"({"lease":")" + lease + R"("})")).find("local") != std::string::npos);
  // The allowed provider is there for the asking.
  json::Document local = server.call(5, "run", R"({"command":["echo","local"],"provider":"local"})");
  CHECK(json::get_string(structured(local)["handle"], "provider") == "local");
  server.close_stdin();
  CHECK(server.wait() == 0);
  CHECK(fs::is_empty(boxes));
  CHECK(env.claims().empty());
}

TEST_CASE("bad flags are refused before serving") {
  CliEnv env;
  fill_workspace(env);
  CHECK(env.run({"mcp", "--root", "/no/such/folder"}).exit_code != 0);
  // A root below a git checkout's top: the sandbox would hold the whole checkout.
  env.root().write("repo/sub/inner.txt", "x");
  env.root().write("repo/above.txt", "x");
  REQUIRE(std::system(("git init -q " + (env.root().path() / "repo").string()).c_str()) == 0);
  const corral::test::CliResult below = env.run({"mcp", "--root", (env.root().path() / "repo" / "sub").string()});
  CHECK(below.exit_code != 0);
  CHECK(below.err.find("git checkout") != std::string::npos);
  const corral::test::CliResult in_root = env.run({"mcp"}, "/");
  CHECK(in_root.exit_code != 0);
  CHECK(in_root.err.find("--root") != std::string::npos);
  CHECK(env.run({"mcp", "--provider", "no-such-provider"}).exit_code != 0);
  CHECK(env.run({"mcp", "--max-sandboxes", "0"}).exit_code != 0);
  CHECK(env.run({"mcp", "--max-output", "lots"}).exit_code != 0);
  CHECK(env.run({"mcp", "--network", "sideways"}).exit_code != 0);
  // The user gives names only: a value on the command line would bypass the environment.
  const auto valued = env.run({"mcp", "--env", "MCP_TEST_ALLOWED=forged"});
  CHECK(valued.exit_code == 64);
  CHECK(valued.err.find("corral mcp takes variable names") != std::string::npos);
  CHECK(env.run({"mcp", "--lifetime", "0s"}).exit_code != 0);
  CHECK(env.run({"mcp", "--adopt", "no-such-lease"}).exit_code != 0);
  // A variable that is not set, or holds a provider's secret, is never forwarded.
  CHECK(env.run({"mcp", "--env", "MCP_TEST_NOT_SET"}).exit_code != 0);
  env.env["E2B_API_KEY"] = "e2b_secret";
  const corral::test::CliResult secret = env.run({"mcp", "--env", "E2B_API_KEY"});
  CHECK(secret.exit_code != 0);
  CHECK(secret.err.find("secret") != std::string::npos);
}
