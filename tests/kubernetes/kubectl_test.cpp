// The stand-in driven by kubectl (client-go), when kubectl is installed: discovery and
// openapi v3, create with server-side field validation, wait (a watch), get with a label
// selector and the server's Table, exec over the WebSocket with an exit code and stdin,
// logs, delete; and the kubeconfig forms: token, tokenFile, client certificate, exec
// credential plugin. Without kubectl it says so, and ctest counts it as skipped.
#include <doctest/doctest.h>

#include <fstream>

#include "cli.hpp"
#include "corral/os/process.hpp"
#include "object.hpp"
#include "standin.hpp"

using namespace corral;
namespace standin = corral::kubernetes::standin;

namespace {

struct Kubectl {
  std::string path = os::find_program("kubectl");
  corral::test::TempDir home;  // kubectl's discovery cache lives in $HOME/.kube
  std::filesystem::path kubeconfig;

  os::CapturedProcess run(const std::vector<std::string>& args, const std::string& input = {}) const {
    os::ProcessSpec spec;
    spec.argv = {path, "--kubeconfig", kubeconfig.string(), "--request-timeout=30s"};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.env = std::vector<std::string>{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home.str()};
    if (!input.empty()) spec.stdin_path = home.write("stdin", input).string();
    return os::capture_process(spec, 120);
  }
  // kubectl's minor version (0 when it cannot say).
  int minor() const {
    auto r = run({"version", "--client", "-o", "json"});
    json::Document d;
    d.Parse(r.out.c_str());
    if (d.HasParseError()) return 0;
    std::string m = standin::string_at(d, {"clientVersion", "minor"});
    return m.empty() ? 0 : std::atoi(m.c_str());
  }
};

const char* kPod = R"(apiVersion: v1
kind: Pod
metadata:
  name: demo
  labels: {app: demo}
spec:
  containers:
  - name: main
    image: busybox:1.36
    command: ["sh", "-c", "echo booted; sleep 600"]
    resources: {requests: {cpu: 100m, memory: 64Mi}}
)";

}  // namespace

TEST_CASE("kubectl against the stand-in: create, wait, get, exec, logs, delete") {
  Kubectl kubectl;
  if (kubectl.path.empty()) {
    MESSAGE("kubectl is not installed: install kubectl (Debian: kubernetes-client) to run this check");
    return;
  }
  standin::StandIn server;
  kubectl.kubeconfig = server.kubeconfig();
  auto version = kubectl.run({"version", "-o", "json"});
  CHECK_MESSAGE(version.out.find("\"gitVersion\": \"v1.35.0\"") != std::string::npos, version.out << version.err);

  // Before 1.27 kubectl validates a manifest against /openapi/v2 (as protobuf), which the
  // stand-in does not serve; later ones ask the server to validate it (fieldValidation).
  const int minor = kubectl.minor();
  std::vector<std::string> create = {"create", "-f", kubectl.home.write("pod.yaml", kPod).string()};
  if (minor < 27) create.push_back("--validate=false");
  auto created = kubectl.run(create);
  REQUIRE_MESSAGE(created.exit_code == 0, created.err);
  CHECK(created.out == "pod/demo created\n");
  auto waited = kubectl.run({"wait", "--for=condition=Ready", "pod/demo", "--timeout=60s"});
  CHECK_MESSAGE(waited.exit_code == 0, waited.err);
  auto listed = kubectl.run({"get", "pods", "-l", "app=demo", "-o", "name"});
  CHECK(listed.out == "pod/demo\n");
  auto table = kubectl.run({"get", "pods"});
  CHECK_MESSAGE(table.out.find("demo   1/1     Running   0") != std::string::npos, table.out);
  auto phase = kubectl.run({"get", "pod", "demo", "-o", "jsonpath={.status.phase} {.spec.nodeName}"});
  CHECK(phase.out.rfind("Running node-", 0) == 0);
  auto logs = kubectl.run({"logs", "demo"});
  CHECK(logs.out == "booted\n");

  if (minor >= 30) {  // exec over WebSocket (v5.channel.k8s.io) is kubectl's default from 1.30
    auto exec = kubectl.run({"exec", "demo", "--", "sh", "-c", "echo out; echo err >&2; exit 3"});
    CHECK(exec.exit_code == 3);
    CHECK(exec.out == "out\n");
    CHECK_MESSAGE(exec.err.find("err\n") == 0, exec.err);  // once, under CI load, 88 bytes came first
    auto piped = kubectl.run({"exec", "-i", "demo", "--", "cat"}, "through stdin\n");
    CHECK(piped.exit_code == 0);
    CHECK(piped.out == "through stdin\n");
  } else {
    MESSAGE("kubectl is older than 1.30: it execs over SPDY, which the stand-in does not speak; exec not checked");
  }

  auto deleted = kubectl.run({"delete", "pod", "demo", "--wait=true"});
  CHECK_MESSAGE(deleted.exit_code == 0, deleted.err);
  auto none = kubectl.run({"get", "pods"});
  CHECK(none.err.find("No resources found") != std::string::npos);
  CHECK(server.answer_violations().empty());
}

TEST_CASE("kubectl authenticates as each kubeconfig says: tokenFile, client certificate, exec plugin; a bad token is Unauthorized") {
  Kubectl kubectl;
  if (kubectl.path.empty()) {
    MESSAGE("kubectl is not installed: install kubectl (Debian: kubernetes-client) to run this check");
    return;
  }
  standin::StandIn server;
  auto user_of_last_request = [&] { return server.with([](auto& s) { return s.requests.back().user; }); };
  auto get_pods = [&](const standin::KubeconfigUser& user) {
    kubectl.kubeconfig = server.write_kubeconfig(kubectl.home.path() / "config", user);
    return kubectl.run({"get", "pods"});
  };

  standin::KubeconfigUser file;
  file.token_file = server.token_file().string();
  CHECK(get_pods(file).exit_code == 0);
  CHECK(user_of_last_request() == "corral-test");

  standin::KubeconfigUser cert;
  auto alice = server.issue_client_certificate("alice", {"developers"});
  cert.client_certificate_pem = alice.cert_pem;
  cert.client_key_pem = alice.key_pem;
  CHECK(get_pods(cert).exit_code == 0);
  CHECK(user_of_last_request() == "alice");

  // client.authentication.k8s.io/v1 from kubectl 1.22 on; v1beta1 before.
  const std::string api = kubectl.minor() >= 22 ? "client.authentication.k8s.io/v1" : "client.authentication.k8s.io/v1beta1";
  const auto plugin = kubectl.home.write("plugin", standin::exec_plugin_script("plugin-token", {}, api));
  std::filesystem::permissions(plugin, std::filesystem::perms::owner_all);
  server.add_token("plugin-token", "plugin-user");
  standin::KubeconfigUser exec;
  exec.exec_command = plugin.string();
  exec.exec_api_version = api;
  auto r = get_pods(exec);
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(user_of_last_request() == "plugin-user");
  CHECK(!corral::test::read_file(plugin.string() + ".calls").empty());

  standin::KubeconfigUser wrong;
  wrong.token = "not-the-token";
  auto refused = get_pods(wrong);
  CHECK(refused.exit_code == 1);
  CHECK_MESSAGE(refused.err.find("Unauthorized") != std::string::npos, refused.err);
}
