// The kubernetes plugin's pure parts, compiled in: reading kubeconfigs, judging a Pod's
// start, the exec status, labels and selectors, NetworkPolicies and settings.
#include <doctest/doctest.h>

#include <cstdlib>

#include "cli.hpp"
#include "command_line.hpp"
#include "corral/json.hpp"
#include "exec_credential.hpp"
#include "exec_stream.hpp"
#include "kubeconfig.hpp"
#include "network_policy.hpp"
#include "pod.hpp"
#include "pod_wait.hpp"
#include "settings.hpp"

using namespace corral;
using namespace corral::kubernetes;
using corral::test::TempDir;

namespace {

const char* const kCluster =
    "apiVersion: v1\nkind: Config\n"
    "clusters:\n- name: a\n  cluster:\n    server: https://a.example:6443/\n    certificate-authority: ca.pem\n"
    "users:\n- name: u\n  user:\n    token: first-token\n"
    "contexts:\n- name: one\n  context:\n    cluster: a\n    user: u\n    namespace: team\n"
    "current-context: one\n";

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return std::string(e.what()) + " | " + e.hint();
  }
  return "no error";
}

}  // namespace

TEST_CASE("kubeconfigs merge as kubectl merges them: the first file to name a thing wins, paths are the file's") {
  TempDir dir;
  dir.write("one/ca.pem", "CA PEM\n");
  auto first = dir.write("one/config", kCluster);
  auto second =
      dir.write("two/config",
                "clusters:\n- name: b\n  cluster:\n    server: https://b.example\n    insecure-skip-tls-verify: true\n"
                "users:\n- name: u\n  user:\n    token: second-token\n- name: v\n  user:\n    tokenFile: t\n"
                "contexts:\n- name: two\n  context:\n    cluster: b\n    user: v\n"
                "current-context: two\n");
  dir.write("two/t", "file-token\n");
  const std::string list = first.string() + ":" + (dir.path() / "missing").string() + ":" + second.string();
  ClusterAccess a = find_cluster({list, "", "/nonexistent"});
  CHECK(a.server == "https://a.example:6443");
  CHECK(a.tls.ca_pem == "CA PEM\n");
  CHECK(a.token == "first-token");  // user u of the first file, not the second's
  CHECK(a.ns == "team");
  CHECK_FALSE(a.tls.insecure);
  ClusterAccess b = find_cluster({list, "two", "/nonexistent"});
  CHECK(b.server == "https://b.example");
  CHECK(b.tls.insecure);
  CHECK(b.token == "file-token");  // tokenFile relative to its own kubeconfig's folder
  CHECK(b.ns.empty());
}

TEST_CASE("a broken kubeconfig is refused naming the file and field, never quoting a credential") {
  TempDir dir;
  SUBCASE("not YAML") {
    auto f = dir.write("config", "users: [ {token: secret-in-broken-yaml\n");
    const std::string m = message_of([&] { find_cluster({f.string(), "", "/nonexistent"}); });
    CHECK(m.find("not valid YAML") != std::string::npos);
    CHECK(m.find("secret-in-broken-yaml") == std::string::npos);
  }
  SUBCASE("a certificate without its key") {
    auto f = dir.write("config", std::string(kCluster) + "");
    std::string text = kCluster;
    text.replace(text.find("    token: first-token"), 22, "    client-certificate-data: Q0VSVA==");
    dir.write("ca.pem", "x");
    f = dir.write("config", text);
    CHECK(message_of([&] {
            find_cluster({f.string(), "", "/nonexistent"});
          }).find("without its key") != std::string::npos);
  }
  SUBCASE("an auth-provider user") {
    std::string text = kCluster;
    text.replace(text.find("    token: first-token"), 22, "    auth-provider:\n      name: gcp");
    dir.write("ca.pem", "x");
    auto f = dir.write("config", text);
    CHECK(message_of([&] { find_cluster({f.string(), "", "/nonexistent"}); }).find("exec plugin") != std::string::npos);
  }
  SUBCASE("an exec plugin of an unknown apiVersion") {
    std::string text = kCluster;
    text.replace(text.find("    token: first-token"), 22,
                 "    exec:\n      apiVersion: client.authentication.k8s.io/v1alpha1\n      command: x");
    dir.write("ca.pem", "x");
    auto f = dir.write("config", text);
    CHECK(message_of([&] { find_cluster({f.string(), "", "/nonexistent"}); }).find("v1alpha1") != std::string::npos);
  }
}

TEST_CASE("an exec credential plugin's output is read; a failing plugin says so without its output") {
  TempDir dir;
  ExecPlugin plugin;
  plugin.api_version = "client.authentication.k8s.io/v1";
  plugin.command = dir.write("ok.sh",
                             "#!/bin/sh\necho \"$KUBERNETES_EXEC_INFO\" > \"$0.info\"\n"
                             "echo "
                             "'{\"kind\":\"ExecCredential\",\"status\":{\"token\":\"tok\",\"expirationTimestamp\":"
                             "\"2030-01-02T03:04:05Z\"}}'\n")
                       .string();
  std::filesystem::permissions(plugin.command, std::filesystem::perms::owner_all);
  ExecCredential c = run_exec_plugin(plugin, "context 'x'");
  CHECK(c.token == "tok");
  REQUIRE(c.expires);
  CHECK(*c.expires == *parse_rfc3339("2030-01-02T05:04:05+02:00"));
  CHECK(corral::test::read_file(plugin.command + ".info").find("\"interactive\":false") != std::string::npos);

  plugin.command = dir.write("bad.sh", "#!/bin/sh\necho 'not json secret-output'\n").string();
  std::filesystem::permissions(plugin.command, std::filesystem::perms::owner_all);
  const std::string m = message_of([&] { run_exec_plugin(plugin, "context 'x'"); });
  CHECK(m.find("not an ExecCredential") != std::string::npos);
  CHECK(m.find("secret-output") == std::string::npos);
}

TEST_CASE("a Pod's status reads as ready, starting (with why) or failed (pull errors naming the image)") {
  auto judge = [](const char* status) {
    json::Document pod = json::parse(std::string("{\"status\":") + status + "}", "pod");
    return progress_of(pod, "img:1");
  };
  CHECK(judge(R"({"phase":"Running","conditions":[{"type":"Ready","status":"True"}]})").kind ==
        PodProgress::Kind::ready);
  PodProgress pending = judge(
      R"({"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/3 nodes are available: 3 Insufficient cpu."}]})");
  CHECK(pending.kind == PodProgress::Kind::starting);
  CHECK(pending.why.find("Insufficient cpu") != std::string::npos);
  PodProgress pull = judge(
      R"({"phase":"Pending","containerStatuses":[{"name":"sandbox","state":{"waiting":{"reason":"ImagePullBackOff","message":"Back-off pulling image"}}}]})");
  CHECK(pull.kind == PodProgress::Kind::failed);
  CHECK(pull.code == ErrorCode::not_found);
  CHECK(pull.why.find("image 'img:1' cannot be pulled (ImagePullBackOff") != std::string::npos);
  PodProgress ended = judge(R"({"phase":"Failed","reason":"DeadlineExceeded","message":"Pod was active too long"})");
  CHECK(ended.kind == PodProgress::Kind::failed);
  CHECK(ended.why.find("DeadlineExceeded") != std::string::npos);
}

TEST_CASE("the exec Status on channel 3 gives the exit code") {
  CHECK(exit_code_of_status(R"({"metadata":{},"status":"Success"})", "x") == 0);
  CHECK(
      exit_code_of_status(
          R"({"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"42"}]}})",
          "x") == 42);
  CHECK(message_of([] {
          exit_code_of_status(R"({"status":"Failure","reason":"InternalError","message":"no sh"})", "x");
        }).find("could not run: no sh") != std::string::npos);
}

TEST_CASE("labels: only valid Kubernetes labels go to the selector; the annotation keeps them all") {
  CHECK(is_label_text("corral-lease", true));
  CHECK(is_label_text("corral.dev/sandbox", true));
  CHECK_FALSE(is_label_text("has space", false));
  CHECK_FALSE(is_label_text(std::string(64, 'a'), false));
  CHECK(label_selector({{"corral-owner", "corral"}, {"odd", "a b"}}) == "corral-owner%3Dcorral");
  Settings s = Settings::from(sdk::Options(StringMap{}));
  const std::string manifest = pod_manifest(s, "corral-abc", "ns", {{"corral-owner", "corral"}, {"odd", "a b"}}, {});
  json::Document pod = json::parse(manifest, "pod");
  Sandbox back = sandbox_of(pod, s.workdir);
  CHECK(back.labels.at("odd") == "a b");
  CHECK(back.labels.at("corral-owner") == "corral");
  CHECK_FALSE(json::find(pod["metadata"]["labels"], "odd"));
  CHECK(json::get_string(pod["metadata"]["labels"], kSandboxLabel) == "corral-abc");
}

TEST_CASE("a NetworkPolicy denies all egress but the allowed blocks; a domain is refused") {
  NetworkPolicy none{NetworkPolicy::Mode::none, {}};
  CHECK(network_policy_manifest(none, "ns", "p", "uid").find("\"egress\":[]") != std::string::npos);
  NetworkPolicy allow{NetworkPolicy::Mode::allow, {"10.1.2.3", "fd00::1", "192.168.0.0/16"}};
  const std::string text = network_policy_manifest(allow, "ns", "p", "uid");
  CHECK(text.find("\"cidr\":\"10.1.2.3/32\"") != std::string::npos);
  CHECK(text.find("\"cidr\":\"fd00::1/128\"") != std::string::npos);
  CHECK(text.find("\"cidr\":\"192.168.0.0/16\"") != std::string::npos);
  NetworkPolicy domain{NetworkPolicy::Mode::allow, {"pypi.org"}};
  CHECK(message_of([&] {
          network_policy_manifest(domain, "ns", "p", "uid");
        }).find("cannot allow the domain 'pypi.org'") != std::string::npos);
}

TEST_CASE("settings are checked before anything reaches the cluster") {
  auto refusal = [](StringMap values) { return message_of([&] { Settings::from(sdk::Options(std::move(values))); }); };
  CHECK(refusal({{"cpu", "lots"}}).find("not a quantity") != std::string::npos);
  CHECK(refusal({{"node-selector", "pool"}}).find("KEY=VALUE") != std::string::npos);
  CHECK(refusal({{"namespace", "Team_A"}}).find("not a valid name") != std::string::npos);
  CHECK(refusal({{"workdir", "/"}}).find("--kubernetes-workdir") != std::string::npos);
  CHECK(refusal({{"start-timeout", "0s"}}).find("start-timeout") != std::string::npos);
  Settings s = Settings::from(sdk::Options({{"node-selector", "a=b,kubernetes.io/arch=amd64"}, {"memory", "1.5Gi"}}));
  CHECK(s.node_selector.size() == 2u);
  CHECK(s.memory == "1.5Gi");
}

TEST_CASE("a command's folder, variables and words travel as arguments, never as shell text") {
  Command c;
  c.argv = {"printf", "%s", "$(id)"};
  c.env = {{"A", "1 2"}};
  std::vector<std::string> argv = run_argv(c, "/w/sub dir", "/tmp/p.pid");
  REQUIRE(argv.size() == 15u);  // the folder's script, then the process group's, then the command
  CHECK(argv[4] == "/w/sub dir");
  CHECK(argv[9] == "/tmp/p.pid");
  CHECK(argv[10] == "env");
  CHECK(argv[11] == "A=1 2");
  CHECK(argv[14] == "$(id)");
  CHECK(argv[2].find("$(id)") == std::string::npos);
  CHECK(argv[7].find("$(id)") == std::string::npos);
}
