// `corral mcp` on the Kubernetes stand-in (tests/kubernetes/standin): a sandbox is a Pod,
// commands and the file tools go over the API server's exec WebSocket, and a tool the
// provider has no feature for (fork, pause) is a tool error. No Pod is left when the
// client goes away, and the cluster's token never reaches what the server printed.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "mcp_session.hpp"
#include "node_client.hpp"
#include "standin.hpp"

using namespace corral::test::mcp;
using corral::test::CliEnv;
using corral::test::eventually;
namespace standin = corral::kubernetes::standin;

namespace {

std::vector<std::string> pods(standin::StandIn& cluster) {
  return cluster.with([](standin::State& s) {
    std::vector<std::string> names;
    for (const auto& [key, pod] : s.pods)
      if (key.first == "corral") names.push_back(key.second);
    return names;
  });
}

}  // namespace

TEST_CASE("the tools on the Kubernetes stand-in: run, start, exec, files, stop; fork and pause refused") {
  standin::StandIn cluster;
  CliEnv env;
  env.env["KUBECONFIG"] = cluster.kubeconfig().string();
  env.root().write("work/hello.txt", "hello from the workspace\n");
  McpServer server(env, {"--provider", "kubernetes"});
  server.initialize();

  json::Document run = server.call(1, "run", R"({"command":["sh","-c","cat hello.txt; exit 2"]})");
  CHECK(json::get_int(structured(run), "exitCode") == 2);
  CHECK(json::get_string(structured(run), "stdout") == "hello from the workspace\n");
  CHECK(eventually([&] { return pods(cluster).empty(); }));

  const std::string lease = lease_of(server.call(2, "sandbox_start"));
  CHECK(pods(cluster).size() == 1);
  json::Document exec = server.call(3, "sandbox_exec", R"({"lease":")" + lease + R"(","command":["sh","-c","expr 2 + 3"]})");
  CHECK(json::get_string(structured(exec), "stdout") == "5\n");
  server.call(4, "sandbox_write_file", R"({"lease":")" + lease + R"(","path":"k/f.txt","content":"in a pod\n"})");
  json::Document read = server.call(5, "sandbox_read_file", R"({"lease":")" + lease + R"(","path":"k/f.txt"})");
  CHECK(json::get_string(structured(read), "content") == "in a pod\n");
  json::Document listed = server.call(6, "sandbox_list_files", R"({"lease":")" + lease + R"("})");
  CHECK(structured(listed)["entries"].Size() == 2);  // hello.txt and k

  const std::string fork = tool_error(server.call(7, "sandbox_fork", R"({"lease":")" + lease + R"("})"));
  CHECK(fork.find("fork") != std::string::npos);
  CHECK(fork.find("none of the providers this server may use") != std::string::npos);
  CHECK(!tool_error(server.call(8, "sandbox_pause", R"({"lease":")" + lease + R"("})")).empty());

  server.call(9, "sandbox_start");
  CHECK(pods(cluster).size() == 2);
  server.call(10, "sandbox_stop", R"({"lease":")" + lease + R"("})");
  server.close_stdin();  // the second is stopped by the server as it ends
  CHECK(server.wait() == 0);
  CHECK(eventually([&] { return pods(cluster).empty(); }));
  CHECK(env.claims().empty());
  CHECK(server.stderr_text().find(cluster.token()) == std::string::npos);
  CHECK(cluster.answer_violations().empty());
}

TEST_CASE("the official clients of both eras on the Kubernetes stand-in") {
  for (const ClientEra& client : kClientEras) {
    CAPTURE(client.era);
    standin::StandIn cluster;
    CliEnv env;
    env.env["KUBECONFIG"] = cluster.kubeconfig().string();
    env.root().write("work/hello.txt", "hello from the workspace\n");
    std::string err;
    if (!drive_provider(client, "kubernetes", env.workspace().string(), env.environment(), &err)) continue;
    CHECK(eventually([&] { return pods(cluster).empty(); }));
    CHECK(env.claims().empty());
    CHECK(err.find(cluster.token()) == std::string::npos);
    CHECK(cluster.answer_violations().empty());
  }
}
