// `corral --provider kubernetes` end to end against the stand-in API server: the cluster
// found as kubectl finds it, sandboxes as Pods, exec over the WebSocket, sync, downloads,
// network policies, shards, and the faults of docs/reliability.md's K rows. Each test
// checks afterwards that no Pod is left and that no credential leaked.
#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cli.hpp"
#include "conformance_run.hpp"
#include "corral/json.hpp"
#include "four_shards.hpp"
#include "https_client.hpp"
#include "private_network.hpp"
#include "provider_cli.hpp"
#include "standin.hpp"

using namespace corral;
using namespace corral::test;
namespace standin = corral::kubernetes::standin;

namespace {

constexpr const char* kNs = "corral";

struct KubeCli : ProviderCli {
  KubeCli() : ProviderCli("kubernetes") {
    cli.env["KUBECONFIG"] = cluster.kubeconfig().string();
    secrets.push_back(cluster.token());
  }
  ~KubeCli() { CHECK(cluster.answer_violations().empty()); }

  // The Pods that exist (in any state) in corral's namespace.
  std::vector<std::string> pods() {
    return cluster.with([](standin::State& s) {
      std::vector<std::string> names;
      for (const auto& [key, pod] : s.pods)
        if (key.first == kNs) names.push_back(key.second);
      return names;
    });
  }
  bool no_pods_left() {
    return eventually([&] { return pods().empty(); });
  }
  // The bodies clients sent to `route`.
  std::vector<std::string> bodies(const std::string& route) {
    return cluster.with([&](standin::State& s) {
      std::vector<std::string> out;
      for (const auto& r : s.requests)
        if (r.route == route) out.push_back(r.body);
      return out;
    });
  }
  std::filesystem::path workdir(const std::string& pod) { return cluster.pod_root(kNs, pod) / "corral/workspace"; }

  standin::StandIn cluster;
};

std::string str(const json::Value& v, const char* key) { return json::get_string(v, key); }

// Starts `corral run` of `script` in the background and waits (bounded) until it printed
// "started"; returns it with the one Pod's name.
std::pair<Background, std::string> start_run(KubeCli& t, const std::string& script) {
  Background b = t.cli.start(t.script_args(script));
  for (int i = 0; i < 300 && read_file(b.out).empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(read_file(b.out) == "started\n");
  auto names = t.pods();
  REQUIRE(names.size() == 1u);
  return {b, names[0]};
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

pid_t pid_written(const std::filesystem::path& file) {
  std::ifstream in(file);
  pid_t pid = 0;
  in >> pid;
  return pid;
}

// A kubeconfig whose user logs in with the exec credential plugin `script` (a sh script
// written to login.sh); its path goes to KUBECONFIG.
std::filesystem::path use_exec_plugin(KubeCli& t, const std::string& script) {
  auto path = t.cli.root().write("login.sh", script);
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  t.cli.env["KUBECONFIG"] =
      t.cluster.write_kubeconfig(t.cli.root().path() / "exec.yaml", {.exec_command = path.string()}).string();
  return path;
}

// The pid `file` holds once it holds a whole line (bounded wait); 0 when it never does.
pid_t pid_once_written(const std::filesystem::path& file) {
  for (int i = 0; i < 300; ++i) {
    const std::string text = read_file(file);
    if (!text.empty() && text.back() == '\n') return pid_written(file);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return 0;
}

}  // namespace

TEST_CASE("providers describe kubernetes lists its settings and the kubectl variables") {
  KubeCli t;
  CliResult r = t.run({"providers", "describe", "kubernetes"});
  REQUIRE(r.exit_code == 0);
  for (const char* s :
       {"KUBECONFIG", "--kubernetes-context", "--kubernetes-namespace", "--kubernetes-image", "--kubernetes-cpu",
        "--kubernetes-memory", "--kubernetes-node-selector", "--kubernetes-service-account", "--kubernetes-lifetime",
        "--kubernetes-start-timeout", "run-session", "archive-sync", "keep-alive", "cleanup", "network-policy"})
    CHECK_MESSAGE(has(r.out, s), s);
}

TEST_CASE("a plain run passes output and exit code over the exec WebSocket, syncs the workspace and deletes its Pod") {
  KubeCli t;
  CliResult r = t.run_script("cat hello.txt; cat src/main.c >&2; printf 'no newline'; exit 7");
  CHECK(r.exit_code == 7);
  CHECK(r.out == "hello from the workspace\nno newline");
  CHECK(has(r.err, "int main(void)"));
  CHECK(t.cluster.calls("create pods") == 1);
  CHECK(t.cluster.calls("create pods/exec") >= 2);  // the unpack and the command
  CHECK(t.no_pods_left());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("the Pod carries the settings: namespace, image, resources, node selector, account, deadline, labels") {
  KubeCli t;
  t.cluster.add_namespace("sandboxes");
  t.cluster.add_service_account("sandboxes", "runner");
  CliResult r =
      t.run_script("true", {"--kubernetes-namespace", "sandboxes", "--kubernetes-image", "example.com/tools:1",
                            "--kubernetes-cpu", "500m", "--kubernetes-memory", "256Mi", "--kubernetes-node-selector",
                            "kubernetes.io/os=linux", "--kubernetes-service-account", "runner", "--kubernetes-lifetime",
                            "20m", "--kubernetes-max-lifetime", "2h"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto bodies = t.bodies("create pods");
  REQUIRE(bodies.size() == 1u);
  json::Document pod = json::parse(bodies[0], "pod");
  CHECK(str(pod["metadata"], "namespace") == "sandboxes");
  CHECK(str(pod["metadata"]["labels"], "corral-owner") == "corral");
  CHECK(json::find(pod["metadata"]["labels"], "corral-host"));  // the host decides from it which Pods are its own
  CHECK(has(str(pod["metadata"]["annotations"], "corral.dev/labels"), "corral-lease"));
  const json::Value& spec = pod["spec"];
  CHECK(json::get_int(spec, "activeDeadlineSeconds") == 7200);
  CHECK(str(spec, "serviceAccountName") == "runner");
  CHECK(str(spec["nodeSelector"], "kubernetes.io/os") == "linux");
  const json::Value& c = spec["containers"][0];
  CHECK(str(c, "image") == "example.com/tools:1");
  CHECK(str(c["resources"]["requests"], "cpu") == "500m");
  CHECK(str(c["resources"]["limits"], "memory") == "256Mi");
  CHECK(has(bodies[0], "\"CORRAL_LIFETIME\",\"value\":\"1200\""));
  CHECK(eventually([&] {
    return t.cluster.with([](standin::State& s) {
      for (const auto& [key, pod] : s.pods)
        if (key.first == "sandboxes") return false;
      return true;
    });
  }));
}

TEST_CASE("the cluster is found as kubectl finds it: every kind of kubeconfig user, and the in-cluster account") {
  KubeCli t;
  const auto dir = t.cli.root().path();
  SUBCASE("a token file") {
    t.cli.env["KUBECONFIG"] =
        t.cluster.write_kubeconfig(dir / "tf.yaml", {.token_file = t.cluster.token_file().string()}).string();
  }
  SUBCASE("a client certificate, inline") {
    auto cert = t.cluster.issue_client_certificate("alice", {"corral-users"});
    t.secrets.push_back(cert.key_pem.substr(40, 64));
    t.cli.env["KUBECONFIG"] = t.cluster
                                  .write_kubeconfig(dir / "cert.yaml", {.client_certificate_pem = cert.cert_pem,
                                                                        .client_key_pem = cert.key_pem})
                                  .string();
  }
  SUBCASE("a client certificate, as files relative to the kubeconfig") {
    auto cert = t.cluster.issue_client_certificate("bob");
    t.cli.root().write("kube/bob.crt", cert.cert_pem);
    t.cli.root().write("kube/bob.key", cert.key_pem);
    t.cli.env["KUBECONFIG"] =
        t.cluster
            .write_kubeconfig(dir / "kube/config", {.client_certificate_file = "bob.crt", .client_key_file = "bob.key"})
            .string();
  }
  SUBCASE("an exec credential plugin (client.authentication.k8s.io/v1), run once per corral") {
    const std::string token = "exec-plugin-token-5d2c81";
    t.cluster.add_token(token, "plugin-user");
    t.secrets.push_back(token);
    auto script = t.cli.root().write("login.sh", standin::exec_plugin_script(token));
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    t.cli.env["KUBECONFIG"] = t.cluster.write_kubeconfig(dir / "exec.yaml", {.exec_command = script.string()}).string();
  }
  SUBCASE("a KUBECONFIG list whose first file is missing, and a context asked for by name") {
    t.cli.env["KUBECONFIG"] = (dir / "missing.yaml").string() + ":" + t.cluster.kubeconfig().string();
    t.cli.env["CORRAL_KUBERNETES_CONTEXT"] = "standin";
  }
  SUBCASE("no kubeconfig: the in-cluster service account") {
    auto sa = t.cluster.write_service_account(dir / "sa", kNs);
    t.secrets.push_back(read_file(sa / "token"));
    t.cli.env["KUBECONFIG"] = (dir / "none.yaml").string();
    t.cli.env["CORRAL_KUBERNETES_SERVICE_ACCOUNT_DIR"] = sa.string();
    t.cli.env["KUBERNETES_SERVICE_HOST"] = "127.0.0.1";
    t.cli.env["KUBERNETES_SERVICE_PORT"] = t.cluster.url().substr(t.cluster.url().rfind(':') + 1);
  }
  CliResult r = t.run_script("cat hello.txt");
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out == "hello from the workspace\n");
  if (std::filesystem::exists(dir / "login.sh.calls")) CHECK(read_file(dir / "login.sh.calls") == "run\n");
  CHECK(t.no_pods_left());
}

TEST_CASE("an exec plugin's credential that is about to expire is fetched again before the next call") {
  KubeCli t;
  const std::string token = "short-lived-token-93be1f";
  t.cluster.add_token(token, "plugin-user");
  t.secrets.push_back(token);
  // Within client-go's refresh margin from the start: every call asks the plugin anew.
  const auto soon = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now() + std::chrono::seconds(30));
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&soon));
  auto script = t.cli.root().write("login.sh", standin::exec_plugin_script(token, when));
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  t.cli.env["KUBECONFIG"] =
      t.cluster.write_kubeconfig(t.cli.root().path() / "exec.yaml", {.exec_command = script.string()}).string();
  CliResult r = t.run_script("echo ok");
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  const std::string calls = read_file(script.string() + ".calls");
  CHECK(std::count(calls.begin(), calls.end(), '\n') > 2);
  CHECK(t.no_pods_left());
}

TEST_CASE("an API server that speaks only v4.channel.k8s.io still gets the workspace (head -c ends stdin)") {
  KubeCli t;
  t.cluster.with([](standin::State& s) { return s.faults.exec_v4_only = true; });
  CliResult r = t.run_script("cat hello.txt; exit 3");
  CHECK(r.exit_code == 3);
  CHECK(r.out == "hello from the workspace\n");
  CHECK(t.no_pods_left());
}

TEST_CASE("what is piped into corral is the command's stdin in the Pod, to its end; a command that stops reading ends the run") {
  KubeCli t;
  auto with_input = [&](const std::string& script, const std::string& input) {
    CliResult r = t.cli.run_with_input(t.script_args(script), input);
    t.seen.push_back(r.out.size() < 4096 ? r.out : "");
    t.seen.push_back(r.err);
    return r;
  };
  CliResult lines = with_input("cat", "a\nb\n");
  CHECK_MESSAGE(lines.exit_code == 0, lines.err);
  CHECK(lines.out == "a\nb\n");
  // More than a pipe and the plugin's queue hold, every byte value: all of it arrives, and its end.
  const std::string big = random_bytes(3 << 20);
  CliResult counted = with_input("wc -c", big);
  CHECK_MESSAGE(counted.exit_code == 0, counted.err);
  CHECK(counted.out == std::to_string(big.size()) + "\n");
  CliResult echoed = with_input("cat", big);
  CHECK(echoed.exit_code == 0);
  CHECK(echoed.out.size() == big.size());
  CHECK((echoed.out == big));
  // head stops reading after 5 bytes: the run ends by its exit, nothing waits for the rest.
  const auto t0 = std::chrono::steady_clock::now();
  CliResult head = with_input("head -c 5", big);
  CHECK(head.exit_code == 0);
  CHECK(head.out == big.substr(0, 5));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20));
  // An empty pipe is an empty stdin; --no-stdin closes it.
  CHECK(with_input("wc -c", "").out == "0\n");
  CliResult closed = t.cli.run_with_input(t.script_args("wc -c", {"--no-stdin"}), "abc");
  CHECK(closed.out == "0\n");
  CHECK(t.no_pods_left());
}

TEST_CASE("under v4.channel.k8s.io, which cannot end stdin, waiting input is refused and none is an empty stdin") {
  KubeCli t;
  t.cluster.with([](standin::State& s) { return s.faults.exec_v4_only = true; });
  CliResult refused = t.cli.run_with_input(t.script_args("cat; echo ran"), "data\n");
  CHECK(refused.exit_code == 64);
  CHECK(has(refused.err, "speaks only v4.channel.k8s.io"));
  CHECK(has(refused.err, "--no-stdin"));
  CHECK_FALSE(has(refused.out, "ran"));
  CliResult empty = t.cli.run_with_input(t.script_args("wc -c"), "");
  CHECK_MESSAGE(empty.exit_code == 0, empty.err);
  CHECK(empty.out == "0\n");
  t.seen.push_back(refused.err);
  t.seen.push_back(empty.err);
  CHECK(t.no_pods_left());
}

TEST_CASE("Ctrl-C and SIGTERM reach the command in the Pod as that signal: its trap runs and its exit code is kept") {
  KubeCli t;
  int sig = SIGINT;
  std::string name = "INT";
  SUBCASE("SIGINT") {}
  SUBCASE("SIGTERM") {
    sig = SIGTERM;
    name = "TERM";
  }
  auto [b, pod] = start_run(t, "trap 'echo got INT; exit 3' INT; trap 'echo got TERM; exit 4' TERM; echo started; "
                               "while :; do sleep 0.1; done");
  const auto t0 = std::chrono::steady_clock::now();
  ::kill(b.pid, sig);
  CHECK(b.wait(std::chrono::seconds(60)) == 130);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(8));  // by its trap, not the 10 s kill
  CHECK(read_file(b.out) == "started\ngot " + name + "\n");
  t.seen.push_back(read_file(b.err));
  auto h = t.handle();
  CHECK(h["exitCode"].GetInt() == (sig == SIGINT ? 3 : 4));
  CHECK(t.no_pods_left());
}

TEST_CASE("run -t gives the command in the Pod a terminal sized as the user's, and puts the user's back") {
  KubeCli t;
  TerminalModes modes;
  // The user's terminal is 33 rows by 100 columns before corral starts: not a default.
  CliResult r = t.cli.run_on_terminal(
      t.script_args("echo \"tty=$(tty)\"; test -t 0 && test -t 1 && test -t 2 && echo on-a-terminal; stty size; "
                    "echo \"TERM=$TERM\"; echo to-stderr >&2; printf 'name? '; read name; echo \"hello-$name\"; exit 5",
                    {"-t"}),
      100, {{"", "", 33, 100}, {"name? ", "corral\r"}}, &modes);
  t.seen.push_back(r.out);
  CHECK_MESSAGE(r.exit_code == 5, r.out);
  CHECK(has(r.out, "tty=/dev/pts/"));
  CHECK(has(r.out, "on-a-terminal"));
  CHECK(has(r.out, "33 100"));
  CHECK_FALSE(has(r.out, "TERM=\r"));  // the user's TERM, never empty
  CHECK(has(r.out, "to-stderr"));
  CHECK(has(r.out, "hello-corral"));
  CHECK(modes.before_canonical);
  CHECK(modes.before_echo);
  CHECK(modes.after_canonical);  // raw only while the command ran
  CHECK(modes.after_echo);
  CHECK(t.no_pods_left());
}

TEST_CASE("with -t in a Pod, a resize reaches the command and Ctrl-C typed interrupts its foreground job, whose trap runs") {
  KubeCli t;
  // The long sleep is a foreground job of its own: only the terminal's SIGINT ends it
  // early (status 130); WINCH's trap runs between the short sleeps before it.
  CliResult r = t.cli.run_on_terminal(
      t.script_args("trap 'stty size; echo resized; r=1' WINCH; r=0; i=0; echo ready; "
                    "while [ $r = 0 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; "
                    "trap 'echo caught-int' INT; sh -c 'echo sleeping; exec sleep 30'; echo \"job=$?\"; exit 7",
                    {"-t"}),
      80, {{"ready", "", 30, 120}, {"sleeping", "\x03"}});
  t.seen.push_back(r.out);
  CHECK_MESSAGE(r.exit_code == 7, r.out);  // the command's own end, not corral's 130
  CHECK(has(r.out, "30 120"));
  CHECK(has(r.out, "caught-int"));
  CHECK(has(r.out, "job=130"));
  CHECK(t.no_pods_left());
}

TEST_CASE("corral shell --provider kubernetes opens a login shell in a new Pod, deleted when it ends") {
  KubeCli t;
  CliResult r = t.cli.run_on_terminal({"shell", "--provider", "kubernetes"}, 80,
                                      {{"", "echo marker-$((6*7)); cat hello.txt\r"}, {"marker-42", "exit 3\r"}});
  t.seen.push_back(r.out);
  CHECK_MESSAGE(r.exit_code == 3, r.out);
  CHECK(has(r.out, "hello from the workspace"));
  CHECK(t.no_pods_left());
}

TEST_CASE("a command in the Pod that ignores its signal is killed once --stop-timeout has passed") {
  KubeCli t;
  Background b = t.cli.start(t.script_args("trap '' INT; echo started; sleep 60 & echo $! > bg.pid; wait",
                                           {"--stop-timeout", "1500ms", "--keep"}));
  for (int i = 0; i < 300 && read_file(b.out).empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(read_file(b.out) == "started\n");
  const auto t0 = std::chrono::steady_clock::now();
  ::kill(b.pid, SIGINT);
  CHECK(b.wait(std::chrono::seconds(60)) == 130);
  const auto took = std::chrono::steady_clock::now() - t0;
  CHECK(took >= std::chrono::milliseconds(1400));
  CHECK(took < std::chrono::seconds(9));
  const std::string err = read_file(b.err);
  t.seen.push_back(err);
  CHECK(has(err, "--stop-timeout"));
  auto h = t.handle();
  const pid_t bg = pid_once_written(t.workdir(str(h, "sandboxId")) / "bg.pid");
  REQUIRE(bg > 0);
  CHECK(gone_within(bg, std::chrono::seconds(10)));  // kept: only the remote kill can have ended it
  CHECK(t.run({"stop", "--id", str(h, "leaseId")}).exit_code == 0);
  CHECK(t.no_pods_left());
}

TEST_CASE("a kubeconfig that cannot work is refused before any call, saying what to fix") {
  KubeCli t;
  const auto dir = t.cli.root().path();
  SUBCASE("none at all") {
    t.cli.env["KUBECONFIG"] = (dir / "none.yaml").string();
    CliResult r = t.run_script("true");
    CHECK(r.exit_code == 64);
    CHECK(has(r.err, "no Kubernetes cluster is configured"));
    CHECK(has(r.err, "KUBECONFIG"));
  }
  SUBCASE("a context it does not have") {
    CliResult r = t.run_script("true", {"--kubernetes-context", "prod"});
    CHECK(r.exit_code == 64);
    CHECK(has(r.err, "no context 'prod'"));
  }
  SUBCASE("a revoked token: exit 77 with what to do") {
    t.cluster.revoke_token(t.cluster.token());
    CliResult r = t.run_script("true");
    CHECK(r.exit_code == 77);
    CHECK(has(r.err, "401"));
  }
  SUBCASE("a user whose Role lacks pods/exec: exit 77 naming the verbs, and the Pod is deleted") {
    t.cluster.with([](standin::State& s) { return s.access.denied.insert("create pods/exec"); });
    CliResult r = t.run_script("true");
    CHECK(r.exit_code == 77);
    CHECK(has(r.err, "pods/exec"));
  }
  CHECK(t.no_pods_left());
}

TEST_CASE("insecure-skip-tls-verify is honoured with a warning") {
  KubeCli t;
  const std::string config =
      "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: " + t.cluster.url() +
      "\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: " + t.cluster.token() +
      "\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n    namespace: corral\n"
      "current-context: x\n";
  t.cli.env["KUBECONFIG"] = t.cli.root().write("insecure.yaml", config).string();
  CliResult r = t.run_script("echo ok");
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(has(r.err, "insecure-skip-tls-verify"));
  CHECK(t.no_pods_left());
}

TEST_CASE("a Pod that cannot start fails naming why, and is deleted") {
  KubeCli t;
  SUBCASE("unschedulable: the scheduler's reason, within the start timeout") {
    CliResult r = t.run_script("true", {"--kubernetes-cpu", "64", "--kubernetes-start-timeout", "2s"});
    CHECK(r.exit_code == 69);
    CHECK(has(r.err, "not Ready within 2s"));
    CHECK(has(r.err, "Insufficient cpu"));
    CHECK(has(r.err, "--kubernetes-start-timeout"));
  }
  SUBCASE("an image that cannot be pulled: at once, naming the image (the start timeout is long)") {
    t.cluster.with([](standin::State& s) { return s.faults.unpullable_images.insert("example.com/missing:1"); });
    CliResult r =
        t.run_script("true", {"--kubernetes-image", "example.com/missing:1", "--kubernetes-start-timeout", "10m"});
    CHECK(r.exit_code == 66);
    CHECK(has(r.err, "image 'example.com/missing:1' cannot be pulled"));
    CHECK((has(r.err, "ErrImagePull") || has(r.err, "ImagePullBackOff")));
  }
  CHECK(t.no_pods_left());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("the start is followed by a watch that survives its end and a 410 Gone") {
  KubeCli t;
  t.cluster.with([](standin::State& s) {
    s.faults.ready_ms = 400;
    s.faults.watch_end_times = 1;
    s.faults.watch_gone_times = 1;
    return 0;
  });
  CliResult r = t.run_script("echo ready");
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out == "ready\n");
  CHECK(t.cluster.calls("watch pods") >= 2);
  CHECK(t.no_pods_left());
}

TEST_CASE("--timeout stops the remote command's process group and exits 124") {
  KubeCli t;
  CliResult r = t.run_script("sleep 60 & echo $! > bg.pid; wait", {"--timeout", "1s", "--keep"});
  CHECK(r.exit_code == 124);
  auto h = t.handle();
  const pid_t bg = pid_written(t.workdir(str(h, "sandboxId")) / "bg.pid");
  REQUIRE(bg > 0);
  CHECK(gone_within(bg, std::chrono::seconds(10)));  // kept: only the remote kill can have ended it
  CHECK(t.run({"stop", "--id", str(h, "leaseId")}).exit_code == 0);
  CHECK(t.no_pods_left());
}

TEST_CASE("Ctrl-C stops the remote command and deletes the Pod; exit 130") {
  KubeCli t;
  auto [b, pod] = start_run(t, "sleep 60 & echo $! > bg.pid; echo started; wait");
  const pid_t bg = pid_written(t.workdir(pod) / "bg.pid");
  ::kill(b.pid, SIGINT);
  CHECK(b.wait(std::chrono::seconds(60)) == 130);
  t.seen.push_back(read_file(b.err));
  CHECK(gone_within(bg, std::chrono::seconds(10)));
  CHECK(t.no_pods_left());
}

TEST_CASE("a re-sync on reuse is exact: files deleted locally go, what the Pod made stays; extend and list work") {
  KubeCli t;
  t.cli.root().write("work/old/gone.txt", "soon gone\n");
  REQUIRE(t.run_script("echo made > made.txt", {"--keep"}).exit_code == 0);
  auto h = t.handle();
  const std::string lease = str(h, "leaseId");
  std::filesystem::remove_all(t.cli.workspace() / "old");
  CliResult r = t.run_script("ls -R", {"--id", lease});
  CHECK(r.exit_code == 0);
  CHECK_FALSE(has(r.out, "gone.txt"));
  CHECK(has(r.out, "made.txt"));
  CHECK(has(r.out, "hello.txt"));
  CliResult listed = t.run({"list", "--json"});
  CHECK(has(listed.out, str(h, "sandboxId")));
  CHECK(t.run({"stop", "--id", lease}).exit_code == 0);
  CHECK(t.no_pods_left());
}

TEST_CASE("a kept Pod ends by itself when its lifetime passes; corral extend moves the end later") {
  KubeCli t;
  SUBCASE("the lifetime passes: the Pod ends, and reuse says it is gone") {
    REQUIRE(t.run_script("true", {"--keep", "--kubernetes-lifetime", "2s"}).exit_code == 0);
    auto h = t.handle();
    const std::string pod = str(h, "sandboxId");
    CHECK(eventually([&] {
      return t.cluster.with([&](standin::State& s) {
        auto it = s.pods.find({kNs, pod});
        return it != s.pods.end() && it->second.stage == standin::PodRuntime::Stage::finished;
      });
    }));
    CliResult again = t.run_script("true", {"--id", str(h, "leaseId")});
    CHECK(again.exit_code == 66);
    CHECK(has(again.err, pod));
    t.run({"stop", "--id", str(h, "leaseId")});
  }
  SUBCASE("extend: the deadline the Pod's loop reads moves an hour on") {
    REQUIRE(t.run_script("true", {"--keep", "--kubernetes-lifetime", "1m"}).exit_code == 0);
    auto h = t.handle();
    const auto deadline_file = t.cluster.pod_root(kNs, str(h, "sandboxId")) / "tmp/corral-deadline";
    const long before = std::stol(read_file(deadline_file));
    CliResult ext = t.run({"extend", "--id", str(h, "leaseId"), "--by", "1h"});
    CHECK_MESSAGE(ext.exit_code == 0, ext.err);
    CHECK(std::stol(read_file(deadline_file)) >= before + 3500);
    CHECK(t.run({"stop", "--id", str(h, "leaseId")}).exit_code == 0);
  }
  CHECK(t.no_pods_left());
}

TEST_CASE("stop --orphans deletes this host's Pods no lease claims, and only those") {
  KubeCli t;
  REQUIRE(t.run_script("true", {"--keep"}).exit_code == 0);
  auto kept = t.handle();
  REQUIRE(t.run_script("true", {"--keep"}).exit_code == 0);
  auto orphan = t.handle();
  // The second lease's claim goes, as when its machine's state was lost.
  for (const auto& claim : t.cli.claims())
    if (read_file(claim).find(str(orphan, "leaseId")) != std::string::npos) std::filesystem::remove(claim);
  // Another host's corral Pod, and a Pod that is not corral's at all.
  kubernetes::test::HttpsClient api(t.cluster.url(), t.cluster.ca_pem());
  api.token(t.cluster.token());
  const std::string other_labels = R"({"corral-owner":"corral","corral-lease":"x","corral-host":"another-host"})";
  std::string escaped;
  for (char c : other_labels) escaped += c == '"' ? std::string("\\\"") : std::string(1, c);
  REQUIRE(api.post("/api/v1/namespaces/corral/pods",
                   R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"other-host","labels":)" + other_labels +
                       R"(,"annotations":{"corral.dev/labels":")" + escaped +
                       R"("}},"spec":{"containers":[{"name":"sandbox","image":"x"}]}})")
              .status == 201);
  REQUIRE(api.post("/api/v1/namespaces/corral/pods",
                   R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"not-corral"},)"
                   R"("spec":{"containers":[{"name":"main","image":"x"}]}})")
              .status == 201);
  CliResult r = t.run({"stop", "--orphans", "--provider", "kubernetes"});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(eventually([&] {
    auto names = t.pods();
    return std::find(names.begin(), names.end(), str(orphan, "sandboxId")) == names.end();
  }));
  auto names = t.pods();
  for (const std::string& stays : {str(kept, "sandboxId"), std::string("other-host"), std::string("not-corral")})
    CHECK_MESSAGE(std::find(names.begin(), names.end(), stays) != names.end(), stays);
  CHECK(t.run({"stop", "--id", str(kept, "leaseId")}).exit_code == 0);
}

TEST_CASE("--download brings files back through the exec's stdout") {
  KubeCli t;
  const auto h = t.cli.root().path() / "h.json";
  const auto results = t.cli.root().path() / "results";
  CliResult r = t.run({"run", "--provider", "kubernetes", "--lease-output", h.string(), "--download", "out/*.txt",
                       "--download-dir", results.string(), "--", "sh", "-c",
                       "mkdir -p out && echo one > out/a.txt && head -c 300000 /dev/urandom > out/b.txt"});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(read_file(results / "out/a.txt") == "one\n");
  REQUIRE(std::filesystem::exists(results / "out/b.txt"));
  CHECK(std::filesystem::file_size(results / "out/b.txt") == 300000u);
  CHECK(t.no_pods_left());
}

TEST_CASE("a Pod evicted mid-command ends the run naming it; a cut exec stream is a lost connection") {
  KubeCli t;
  SUBCASE("evicted") {
    auto [b, pod] = start_run(t, "echo started; sleep 60");
    REQUIRE(t.cluster.evict(kNs, pod, standin::ExecEnding::dropped));
    const int code = b.wait(std::chrono::seconds(60));
    const std::string err = read_file(b.err);
    t.seen.push_back(err);
    CHECK(code == 66);
    CHECK(has(err, "Evicted"));
  }
  SUBCASE("cut") {
    t.cluster.with([](standin::State& s) {
      s.faults.exec_cut_times = 2;  // the unpack's answer has no output: the command's is cut
      s.faults.exec_cut_after_bytes = 3;
      return 0;
    });
    CliResult r = t.run_script("echo hello; sleep 1; echo more");
    CHECK(r.exit_code == 69);
    CHECK(has(r.err, "lost mid-command"));
  }
  CHECK(t.no_pods_left());
}

TEST_CASE("--network none and allow:CIDR become a NetworkPolicy the Pod's commands are held to") {
  KubeCli t;
  LoopbackListener listener;
  SUBCASE("none") {
    CliResult r = t.run_script(listener.probe_script(), {"--network", "none"});
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out == "unreachable\n");
    auto policies = t.bodies("create networkpolicies");
    REQUIRE(policies.size() == 1u);
    CHECK(has(policies[0], "\"policyTypes\":[\"Egress\"],\"egress\":[]"));
  }
  SUBCASE("allow 127.0.0.1") {
    CliResult r = t.run_script(listener.probe_script(), {"--network", "allow:127.0.0.1,10.0.0.0/8"});
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out == "reached\n");
    auto policies = t.bodies("create networkpolicies");
    REQUIRE(policies.size() == 1u);
    CHECK(has(policies[0], "{\"ipBlock\":{\"cidr\":\"127.0.0.1/32\"}}"));
    CHECK(has(policies[0], "{\"ipBlock\":{\"cidr\":\"10.0.0.0/8\"}}"));
  }
  SUBCASE("a domain is refused before any Pod") {
    CliResult r = t.run_script("true", {"--network", "allow:example.com"});
    CHECK(r.exit_code == 64);
    CHECK(has(r.err, "example.com"));
    CHECK(t.cluster.calls("create pods") == 0);
  }
  CHECK(t.no_pods_left());
  CHECK(eventually(
      [&] { return t.cluster.calls("delete networkpolicies") == t.cluster.calls("create networkpolicies"); }));
}

TEST_CASE("four shards are four Pods made concurrently; a 429 on create is waited out by its Retry-After") {
  KubeCli t;
  t.cluster.with([](standin::State& s) {
    s.faults.throttle_route = "create pods";
    s.faults.throttle_times = 2;
    s.faults.retry_after_seconds = 1;
    return 0;
  });
  CliResult r = t.run_script(four_shard_script(2, 5), {"--shards", "4"});
  std::string text = read_file(t.handle_path());
  t.seen.push_back(text);
  check_four_shards(r, text, 2, 5);
  CHECK(t.cluster.calls("create pods") == 6);
  CHECK(t.no_pods_left());
}

TEST_CASE("a delete the API server fails once (500) is sent again: the Pod is gone, the exit code is the command's") {
  KubeCli t;
  t.cluster.with([](standin::State& s) {
    s.faults.fail_route = "delete pods";
    s.faults.fail_times = 1;
    return 0;
  });
  CliResult r = t.run_script("echo ran; exit 3");
  CHECK(r.exit_code == 3);
  CHECK(r.out == "ran\n");
  CHECK(t.cluster.calls("delete pods") == 2);
  CHECK(t.no_pods_left());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("API server failures on create: a 500 is not retried, a 429 asking for longer than corral waits is quota") {
  KubeCli t;
  SUBCASE("500") {
    t.cluster.with([](standin::State& s) {
      s.faults.fail_route = "create pods";
      s.faults.fail_times = 1;
      return 0;
    });
    CliResult r = t.run_script("true");
    CHECK(r.exit_code == 69);
    CHECK(has(r.err, "HTTP 500"));
    CHECK(t.cluster.calls("create pods") == 1);
  }
  SUBCASE("429 with Retry-After: 120") {
    t.cluster.with([](standin::State& s) {
      s.faults.throttle_route = "create pods";
      s.faults.throttle_times = 1;
      s.faults.retry_after_seconds = 120;
      return 0;
    });
    // Longer than --timeout leaves: reported at once, not waited for.
    CliResult r = t.run_script("true", {"--timeout", "5"});
    CHECK(r.exit_code == 75);
    CHECK(has(r.err, "the API server's rate limit"));
    CHECK(t.cluster.calls("create pods") == 1);
  }
  CHECK(t.no_pods_left());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("doctor checks the cluster and the credentials, and warns about network policies") {
  KubeCli t;
  CliResult ok = t.run({"doctor", "--provider", "kubernetes"});
  CHECK(has(ok.out, "[ok] Kubernetes cluster"));
  CHECK(has(ok.out, "[ok] Kubernetes API access"));
  CHECK(has(ok.out, "enforces policies"));
  t.cluster.revoke_token(t.cluster.token());
  CliResult bad = t.run({"doctor", "--provider", "kubernetes"});
  CHECK(bad.exit_code != 0);
  CHECK(has(bad.out, "[FAIL] Kubernetes API access"));
}

TEST_CASE("--kubernetes-warm-pool claims a ready Pod of an agent-sandbox pool; stop deletes the claim and its Pod") {
  KubeCli t;
  kubernetes::test::HttpsClient api(t.cluster.url(), t.cluster.ca_pem());
  api.token(t.cluster.token());
  const std::string ext = "/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/corral/";
  REQUIRE(
      api.post(
             ext + "sandboxtemplates",
             R"({"apiVersion":"extensions.agents.x-k8s.io/v1beta1","kind":"SandboxTemplate","metadata":{"name":"tools"},)"
             R"("spec":{"podTemplate":{"spec":{"containers":[{"name":"main","image":"tools:1"}]}}}})")
          .status == 201);
  SUBCASE("a pool that exists") {
    REQUIRE(
        api.post(
               ext + "sandboxwarmpools",
               R"({"apiVersion":"extensions.agents.x-k8s.io/v1beta1","kind":"SandboxWarmPool","metadata":{"name":"pool"},)"
               R"("spec":{"replicas":1,"sandboxTemplateRef":{"name":"tools"}}})")
            .status == 201);
    CliResult r = t.run_script("cat hello.txt; hostname", {"--kubernetes-warm-pool", "pool", "--keep"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    auto h = t.handle();
    const std::string pod = str(h, "sandboxId");
    CHECK(r.out == "hello from the workspace\n" + pod + "\n");
    CHECK(t.cluster.calls("create sandboxclaims") == 1);
    CHECK(t.cluster.calls("create pods") == 0);  // the pool's controller made the Pods, not corral
    CliResult listed = t.run({"list", "--json"});
    CHECK(has(listed.out, pod));
    CHECK(t.run({"stop", "--id", str(h, "leaseId")}).exit_code == 0);
    CHECK(t.cluster.calls("delete sandboxclaims") == 1);
    CHECK(eventually([&] {
      auto names = t.pods();
      return std::find(names.begin(), names.end(), pod) == names.end();
    }));
  }
  SUBCASE("a pool that does not: exit 66 naming it, the claim deleted") {
    CliResult r = t.run_script("true", {"--kubernetes-warm-pool", "nopool"});
    CHECK(r.exit_code == 66);
    CHECK(has(r.err, "warm pool 'nopool' does not exist"));
    CHECK(t.cluster.calls("delete sandboxclaims") == 1);
  }
}

TEST_CASE("kubernetes passes the conformance kit against the stand-in, no Pod left and no token shown") {
  KubeCli t;
  auto r = conformance_recorded(t.cli, "kubernetes");
  t.seen.push_back(r.cli.out);
  t.seen.push_back(r.cli.err);
  check_passed(r, {"argv", "keep-reuse", "sync-deletions", "extend", "listing", "interrupt", "output-large", "workdir",
                   "network-none", "destroy-twice", "stdin", "signals", "concurrent"});
  CHECK(t.no_pods_left());
}

TEST_CASE("a Kubernetes pool waits as running Pods (no pause), says so, and a run takes one without creating a Pod") {
  KubeCli t;
  CliResult r = t.run({"pool", "fill", "--provider", "kubernetes", "--size", "1"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(has(r.err, "cannot pause: pooled sandboxes run while they wait"));
  const std::vector<std::string> pooled = t.pods();
  REQUIRE(pooled.size() == 1u);
  CHECK(t.cluster.calls("create pods") == 1);
  r = t.run({"pool", "status", "--json"});
  auto doc = json::parse(r.out, "pool status");
  REQUIRE(doc.GetArray().Size() == 1);
  CHECK_FALSE(json::get_bool(doc.GetArray()[0], "canPause"));
  CHECK(json::get_int(doc.GetArray()[0], "ready") == 1);

  r = t.run_script("cat hello.txt");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "hello from the workspace\n");
  auto h = t.handle();
  CHECK(json::get_bool(h, "pooled"));
  // The run's Pod was the pooled one: deleted at the end; the refill makes the next.
  CHECK(eventually([&] {
    auto names = t.pods();
    return names.size() == 1u && names[0] != pooled[0] && t.cluster.calls("create pods") == 2;
  }));
  CHECK(t.cli.pool_settles_at(1));
  REQUIRE(t.run({"pool", "drain"}).exit_code == 0);
  CHECK(t.no_pods_left());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("a pool filled through one kubeconfig user is not taken through another, and its Pod is not forgotten") {
  KubeCli t;
  const std::string bob = "bob-token-5c1e";
  t.cluster.add_token(bob, "bob");
  t.secrets.push_back(bob);
  REQUIRE(t.run({"pool", "fill", "--provider", "kubernetes", "--size", "1"}).exit_code == 0);
  const std::vector<std::string> pooled = t.pods();
  REQUIRE(pooled.size() == 1u);
  // The same KUBECONFIG, its user switched: no option of corral's changed.
  const std::string alice_config = read_file(t.cluster.kubeconfig());
  standin::KubeconfigUser user;
  user.token = bob;
  t.cluster.write_kubeconfig(t.cluster.kubeconfig(), user);
  CliResult r = t.run_script("true");
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK_FALSE(json::get_bool(t.handle(), "pooled"));
  CHECK(t.cli.pooled_sandboxes().size() == 1u);
  CHECK(eventually([&] { return t.pods() == pooled; }));  // the run's own Pod goes; alice's waits on
  // Back to alice: her pooled Pod is taken.
  std::ofstream(t.cluster.kubeconfig()) << alice_config;
  r = t.run_script("true");
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(json::get_bool(t.handle(), "pooled"));
  CHECK(t.cli.pool_settles_at(1));
  REQUIRE(t.run({"pool", "drain"}).exit_code == 0);
  CHECK(t.no_pods_left());
}

TEST_CASE("Ctrl-C or SIGTERM or SIGHUP while an exec credential plugin hangs: exit 130 at once and its process group gone") {
  KubeCli t;
  // A login that never ends, with a child of its own (a browser flow, a hung cloud CLI).
  auto script = use_exec_plugin(t, "#!/bin/sh\necho $$ > \"$0.pid\"\nsleep 300 &\necho $! > \"$0.child\"\nwait\n");
  int sig = SIGINT;
  SUBCASE("SIGINT") { sig = SIGINT; }
  SUBCASE("SIGTERM") { sig = SIGTERM; }
  SUBCASE("SIGHUP") { sig = SIGHUP; }
  Background b = t.cli.start(t.script_args("true"));
  const pid_t child = pid_once_written(script.string() + ".child");
  const pid_t plugin = pid_written(script.string() + ".pid");
  REQUIRE(child > 0);
  REQUIRE(plugin > 0);
  ::kill(b.pid, sig);
  // The plugin has 60 s of its own: before, corral waited them out and exited 77.
  CHECK(b.wait(std::chrono::seconds(15)) == 130);
  t.seen.push_back(read_file(b.err));
  CHECK(gone_within(plugin, std::chrono::seconds(5)));
  CHECK(gone_within(child, std::chrono::seconds(5)));
  CHECK(t.cluster.calls("create pods") == 0);
  CHECK(t.cli.claims().empty());
}

TEST_CASE("an API server that quotes the Authorization header in its errors gets no credential shown or stored") {
  KubeCli t;
  SUBCASE("the kubeconfig's token") {}
  SUBCASE("an exec credential plugin's token") {
    const std::string token = "exec-plugin-token-echoed-77c1";
    t.cluster.add_token(token, "plugin-user");
    t.secrets.push_back(token);
    use_exec_plugin(t, standin::exec_plugin_script(token));
  }
  // The exec upgrade that unpacks the workspace fails, once the Pod (and the handle) exist.
  t.cluster.with([](standin::State& s) {
    s.faults.fail_route = "create pods/exec";
    s.faults.fail_times = 1;
    s.faults.fail_echoes_authorization = true;
    return 0;
  });
  // The fixture checks every output, the handle and the claims for each credential.
  CliResult r = t.run_script("true", {"-v"});
  CHECK(r.exit_code == 69);
  CHECK_MESSAGE(has(r.err, "Authorization: Bearer ***"), r.err);  // the echo arrived, masked
  // The server's newline is written out, so its next words make no line that reads as corral's.
  CHECK(has(r.err, "\\x0acorral: the command succeeded"));
  CHECK_FALSE(has(r.err, "\ncorral: the command succeeded"));
  const json::Document h = t.handle();
  const std::string error = json::dump(h["error"]);
  CHECK(has(error, "Authorization: Bearer ***"));
  CHECK(t.no_pods_left());
}

TEST_CASE("answers without bound stop at the bound: a 64 MiB Pod and a credential plugin that prints without end") {
  KubeCli t;
  SUBCASE("a 64 MiB answer to reading the Pod") {
    t.cluster.with([](standin::State& s) {
      s.faults.huge_answer_route = "get pods";
      return s.faults.huge_answer_bytes = 64u << 20;
    });
    CliResult r = t.run_script("true");
    CHECK(r.exit_code == 69);
    CHECK_MESSAGE(has(r.err, "Kubernetes read Pod corral-"), r.err);
    CHECK(has(r.err, "the answer is larger than 16 MiB, the most corral reads of one"));
  }
  SUBCASE("a credential plugin that prints 64 MiB on stdout") {
    use_exec_plugin(t, "#!/bin/sh\nhead -c 67108864 /dev/zero | tr '\\0' x\n");
    CliResult r = t.run_script("true");
    CHECK(r.exit_code == 77);
    CHECK_MESSAGE(has(r.err, "printed more than 1 MiB on stdout"), r.err);
  }
  SUBCASE("a credential plugin that writes 256 MiB on stderr: only its end is kept") {
    // The plugin reads the memory high-water mark of its parent, the process buffering it.
    auto script = use_exec_plugin(t,
                                  "#!/bin/sh\nhead -c 268435456 /dev/zero | tr '\\0' e >&2\necho ' the last words' >&2\n"
                                  "grep VmHWM /proc/$PPID/status > \"$0.hwm\"\nexit 3\n");
    CliResult r = t.run_script("true");
    CHECK(r.exit_code == 77);
    CHECK_MESSAGE(has(r.err, "failed (exit 3): ...eeee"), r.err);
    CHECK(has(r.err, "the last words"));
    CHECK(r.err.size() < 4096);
    const std::string hwm = read_file(script.string() + ".hwm");  // "VmHWM:   123456 kB"
    REQUIRE_MESSAGE(hwm.find("kB") != std::string::npos, hwm);
    const long kib = std::stol(hwm.substr(hwm.find(':') + 1));
    CHECK_MESSAGE(kib < 128 * 1024, "corral held " << kib << " KiB while the plugin wrote 256 MiB on stderr");
  }
  CHECK(t.no_pods_left());
  CHECK(t.cli.claims().empty());
}

TEST_CASE("a Pod answer of the wrong shape is the API server's fault (69) naming the call, never a usage error") {
  KubeCli t;
  SUBCASE("metadata is a string") {
    t.cluster.with([](standin::State& s) {
      s.faults.mistype_route = "get pods";
      return s.faults.mistype_field = "metadata";
    });
    CliResult r = t.run_script("true");
    CHECK(r.exit_code == 69);
    CHECK_MESSAGE(has(r.err, "the API server's answer to GET /api/v1/namespaces/corral/pods/corral-"), r.err);
    CHECK(has(r.err, "is not a Pod: metadata is a string"));
    CHECK_FALSE(has(r.err, "was deleted"));
  }
  SUBCASE("status.phase is a number") {
    t.cluster.with([](standin::State& s) {
      s.faults.mistype_route = "get pods";
      return s.faults.mistype_field = "status.phase";
    });
    CliResult r = t.run_script("true");
    CHECK(r.exit_code == 69);
    CHECK_MESSAGE(has(r.err, "is not a Pod: field 'phase' must be a string"), r.err);
  }
  CHECK(t.no_pods_left());
  CHECK(t.cli.claims().empty());
}
