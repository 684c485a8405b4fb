// Exec over the WebSocket endpoint, byte by byte with Boost.Beast: the subprotocol
// negotiation, the empty first message, stdout and stderr on their channels, the exit
// status on channel 3, stdin with v5's CLOSE (an archive unpacked by tar -x in the pod),
// v4 without it, a terminal (tty=true) sized from the resize channel, refusals before the
// upgrade, the cut and eviction faults, and a NetworkPolicy enforced on the command.
#include <doctest/doctest.h>

#include <fstream>

#include "cli.hpp"
#include "cluster_fixture.hpp"
#include "corral/os/process.hpp"
#include "exec_client.hpp"
#include "object.hpp"
#include "private_network.hpp"
#include "terminal_size.hpp"

using namespace corral;
using namespace corral::kubernetes::test;
using corral::kubernetes::standin::int_at;
using corral::kubernetes::standin::string_at;

namespace {

ExecClient exec(Cluster& c, const std::string& pod, const std::vector<std::string>& command, bool with_stdin = false,
                const std::vector<std::string>& protocols = {"v5.channel.k8s.io", "v4.channel.k8s.io"},
                bool tty = false) {
  return ExecClient(c.server.url(), c.server.ca_pem(), c.server.token(),
                    exec_target(c.ns, pod, command, with_stdin, tty), protocols);
}

// Reads `e` until its stdout so far holds `text`; false when the stream ended first.
bool read_until(ExecClient& e, const std::string& text) {
  while (e.outcome_so_far().out.find(text) == std::string::npos)
    if (!e.read()) return false;
  return true;
}

// A running pod to exec into.
void running_pod(Cluster& c, const std::string& name, const PodSpecText& spec = {}) {
  c.create_pod(name, spec);
  c.wait_ready(name);
}

}  // namespace

TEST_CASE("exec under v5: an empty first message, stdout and stderr apart, Success on channel 3, a normal close") {
  Cluster c;
  running_pod(c, "p");
  ExecClient e = exec(c, "p", {"sh", "-c", "printf out; printf err >&2"});
  CHECK(e.protocol() == "v5.channel.k8s.io");
  ExecOutcome o = e.finish();
  REQUIRE(!o.messages.empty());
  CHECK(o.messages[0].channel == 1);  // "the connection is established", on the lowest output channel
  CHECK(o.messages[0].data.empty());
  CHECK(o.out == "out");
  CHECK(o.err == "err");
  REQUIRE(o.status);
  CHECK(*o.status == R"({"metadata":{},"status":"Success"})");
  CHECK(o.messages.back().channel == 3);  // nothing after the status
  CHECK(o.close_frame);
  CHECK(o.close_code == 1000);
}

TEST_CASE("a non-zero exit is a NonZeroExitCode Status with an ExitCode cause") {
  Cluster c;
  running_pod(c, "p");
  ExecOutcome o = exec(c, "p", {"sh", "-c", "exit 3"}).finish();
  REQUIRE(o.status);
  json::Document s = parse(*o.status);
  CHECK(string_at(s, {"status"}) == "Failure");
  CHECK(string_at(s, {"reason"}) == "NonZeroExitCode");
  CHECK(string_at(s, {"message"}) == "command terminated with non-zero exit code: error executing command [sh -c exit 3], exit code 3");
  CHECK(string_at(s["details"]["causes"][0], {"reason"}) == "ExitCode");
  CHECK(string_at(s["details"]["causes"][0], {"message"}) == "3");
}

TEST_CASE("stdin streams into the command and v5's CLOSE ends it: a workspace archive unpacks with tar -x") {
  Cluster c;
  running_pod(c, "p");
  corral::test::TempDir src;
  src.write("work/src/main.c", "int main() { return 0; }\n");
  const std::string big = corral::test::random_bytes(300 * 1024);
  src.write("work/data.bin", big);
  os::ProcessSpec tar;
  tar.argv = {"tar", "-c", "-f", (src.path() / "work.tar").string(), "-C", (src.path() / "work").string(), "."};
  REQUIRE(os::capture_process(tar, 60).exit_code == 0);
  const std::string archive = corral::test::read_file(src.path() / "work.tar");
  ExecClient e = exec(c, "p", {"sh", "-c", "mkdir -p /workspace && tar -x -C /workspace && echo unpacked"}, true);
  for (size_t at = 0; at < archive.size(); at += 64 * 1024) e.send(0, archive.substr(at, 64 * 1024));
  e.close_stdin();
  ExecOutcome o = e.finish();
  CHECK(o.out == "unpacked\n");
  REQUIRE(o.status);
  CHECK(*o.status == R"({"metadata":{},"status":"Success"})");
  const auto root = c.server.pod_root("corral", "p");
  CHECK(corral::test::read_file(root / "workspace/src/main.c") == "int main() { return 0; }\n");
  CHECK(corral::test::read_file(root / "workspace/data.bin") == big);
}

TEST_CASE("stdin in many messages arrives whole and in order, and v5's CLOSE is the command's end of input") {
  Cluster c;
  running_pod(c, "p");
  ExecClient e = exec(c, "p", {"sh", "-c", "wc -c; echo done >&2"}, true);
  const std::string data = corral::test::random_bytes(200 * 1024);
  for (size_t at = 0; at < data.size(); at += 1000) e.send(0, data.substr(at, 1000));
  e.send(0, "");  // an empty message writes nothing and closes nothing
  e.close_stdin();
  ExecOutcome o = e.finish();
  CHECK(o.out == std::to_string(data.size()) + "\n");
  CHECK(o.err == "done\n");
  REQUIRE(o.status);
  CHECK(*o.status == R"({"metadata":{},"status":"Success"})");
}

TEST_CASE("a command that stops reading stdin ends the stream with its status: no CLOSE needed, the rest dropped") {
  Cluster c;
  running_pod(c, "p");
  ExecClient e = exec(c, "p", {"head", "-c", "5"}, true);
  e.send(0, "hello" + std::string(256 * 1024, 'x'));  // more than a pipe holds, for a reader that leaves
  ExecOutcome o = e.finish();
  CHECK(o.out == "hello");
  REQUIRE(o.status);
  CHECK(*o.status == R"({"metadata":{},"status":"Success"})");
  CHECK(o.close_frame);
}

TEST_CASE("under v4 there is no CLOSE: [255, 0] is ignored and stdin stays open until the connection closes") {
  Cluster c;
  running_pod(c, "p");
  ExecClient e = exec(c, "p", {"sh", "-c", "cat; echo eof"}, true, {"v4.channel.k8s.io"});
  CHECK(e.protocol() == "v4.channel.k8s.io");
  e.send(0, "abc");
  e.close_stdin();
  e.send(0, "def");  // still delivered: the CLOSE byte named no channel under v4
  std::string out;
  while (out.find("abcdef") == std::string::npos) {
    auto m = e.read();
    REQUIRE_MESSAGE(m, "the stream ended before stdin came back: " << out);
    if (m->channel == 1) out += m->data;
  }
  CHECK(out == "abcdef");  // no "eof": cat still reads
  e.close();
}

TEST_CASE("tty=true: a terminal of the command's own, stderr merged into stdout, sized from channel 4, Ctrl-C a key") {
  Cluster c;
  running_pod(c, "p");
  // WINCH's trap runs between short sleeps; the long sleep is a foreground job of its own
  // that only the terminal's SIGINT ends early (status 130), before 30 s.
  ExecClient e = exec(c, "p",
                      {"sh", "-c",
                       "echo \"tty=$(tty)\"; test -t 0 && test -t 1 && test -t 2 && echo on-a-terminal; "
                       "echo \"size=$(stty size)\"; echo to-stderr >&2; "
                       "trap 'echo \"resized=$(stty size)\"; r=1' WINCH; r=0; i=0; echo ready; "
                       "while [ $r = 0 ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; "
                       "trap 'echo caught-int' INT; sh -c 'echo waiting; exec sleep 30'; echo \"job=$?\"; exit 4"},
                      true, {"v5.channel.k8s.io"}, true);
  REQUIRE(read_until(e, "ready"));
  // One TerminalSize in two messages, after one with a zero dimension (skipped).
  e.send(4, R"({"Width":0,"Height":5})");
  e.send(4, R"({"Width":91,)");
  e.send(4, R"("Height":27})" "\n");
  REQUIRE(read_until(e, "waiting"));
  e.send(0, "\x03");  // Ctrl-C, typed
  ExecOutcome o = e.finish();
  CHECK(o.out.find("tty=/dev/pts/") != std::string::npos);
  CHECK(o.out.find("on-a-terminal") != std::string::npos);
  CHECK(o.out.find("size=0 0\r\n") != std::string::npos);  // unsized until the client says, as runc's console
  CHECK(o.out.find("to-stderr\r\n") != std::string::npos);  // through the terminal: "\n" became "\r\n"
  CHECK(o.out.find("resized=27 91") != std::string::npos);
  CHECK(o.out.find("caught-int") != std::string::npos);
  CHECK(o.out.find("job=130") != std::string::npos);
  for (const Message& m : o.messages) CHECK(m.channel != 2);  // no stderr stream: the kubelet bypasses it
  REQUIRE(o.status);
  CHECK(string_at(parse(*o.status), {"reason"}) == "NonZeroExitCode");
  CHECK(string_at(parse(*o.status)["details"]["causes"][0], {"message"}) == "4");
}

TEST_CASE("the resize channel is read as the kubelet reads it: a stream of TerminalSize values, ended by one that is none") {
  using corral::kubernetes::standin::TerminalSizeReader;
  TerminalSizeReader r;
  CHECK(r.take(R"({"Width":91,)").empty());  // the rest comes later
  auto sizes = r.take(R"("Height":27})" "\n" R"({"Width":80,"Height":24}{"Width":0,"Height":9})");
  REQUIRE(sizes.size() == 2u);  // the zero width skipped
  CHECK(sizes[0].cols == 91);
  CHECK(sizes[0].rows == 27);
  CHECK(sizes[1].cols == 80);
  CHECK(sizes[1].rows == 24);
  CHECK_FALSE(r.broken());
  CHECK(r.take(R"({"Width":70000,"Height":5})").empty());  // no uint16
  CHECK(r.broken());
  CHECK(r.take(R"({"Width":100,"Height":30})").empty());  // nothing read after it
  TerminalSizeReader other;
  CHECK(other.take("[1,2]").empty());
  CHECK(other.broken());
}

TEST_CASE("a program that is not in the pod: an InternalError Status on channel 3, in containerd's words") {
  Cluster c;
  running_pod(c, "p");
  ExecOutcome o = exec(c, "p", {"no-such-tool", "--help"}).finish();
  REQUIRE(o.status);
  json::Document s = parse(*o.status);
  CHECK(string_at(s, {"reason"}) == "InternalError");
  CHECK(int_at(s, {"code"}) == 500);
  CHECK(string_at(s, {"message"}).find("exec: \"no-such-tool\": executable file not found in $PATH") != std::string::npos);
}

TEST_CASE("exec is refused before the upgrade as the API server refuses it") {
  Cluster c;
  // The upgrade request as a WebSocket client sends it; the refusal is a plain HTTP answer.
  auto refused = [&](const std::string& target, const std::string& protocol = "v5.channel.k8s.io") {
    Answer a = c.api.get(target, {"Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13",
                                  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol: " + protocol});
    CHECK(string_at(a.json(), {"kind"}) == "Status");
    return std::pair<int, std::string>(static_cast<int>(a.status), string_at(a.json(), {"message"}));
  };
  CHECK(refused(exec_target(c.ns, "ghost", {"true"})) == std::pair<int, std::string>(404, "pods \"ghost\" not found"));
  c.server.with([](auto& s) { s.faults.unschedulable_message = "0/3 nodes are available: 3 Insufficient cpu."; });
  c.create_pod("pending");
  CHECK(refused(exec_target(c.ns, "pending", {"true"})) ==
        std::pair<int, std::string>(400, "pod pending does not have a host assigned"));
  c.server.with([](auto& s) { s.faults.unschedulable_message.clear(); });
  running_pod(c, "p");
  CHECK(refused("/api/v1/namespaces/corral/pods/p/exec?stdout=true").second == "you must specify at least 1 command");
  CHECK(refused(exec_target(c.ns, "p", {"true"}), "v3.channel.k8s.io").first == 400);
  // And through the WebSocket client: the upgrade is declined.
  CHECK_THROWS_AS(exec(c, "ghost", {"true"}), UpgradeRefused);
  c.create_pod("done", {.command = {"true"}});
  c.watch_pod("done", [](const json::Value& p) { return string_at(p, {"status", "phase"}) == "Succeeded"; });
  CHECK(refused(exec_target(c.ns, "done", {"true"})) ==
        std::pair<int, std::string>(400, "cannot exec into a container in a completed pod; current phase is Succeeded"));
}

TEST_CASE("faults: an exec stream cut mid-output, with or without a close frame, never gets its status") {
  Cluster c;
  running_pod(c, "p");
  for (const bool close_frame : {false, true}) {
  CAPTURE(close_frame);
  c.server.with([&](auto& s) {
    s.faults.exec_cut_times = 1;
    s.faults.exec_cut_after_bytes = 4;
    s.faults.exec_cut_with_close_frame = close_frame;
  });
  ExecOutcome o = exec(c, "p", {"sh", "-c", "echo one; sleep 0.2; echo two; sleep 0.2; echo three"}).finish();
  CHECK_FALSE(o.status);
  CHECK(o.close_frame == close_frame);
  CHECK(o.out.find("three") == std::string::npos);
  }
}

TEST_CASE("a pod evicted mid-command: Failed, reason Evicted; the stream gets exit 137, or no status at all") {
  for (const bool dropped : {false, true}) {
  CAPTURE(dropped);
  Cluster c;
  running_pod(c, "p");
  ExecClient e = exec(c, "p", {"sh", "-c", "echo started; sleep 600"});
  std::string out;
  while (out.find("started") == std::string::npos) {
    auto m = e.read();
    REQUIRE(m);
    if (m->channel == 1) out += m->data;
  }
  REQUIRE(c.server.evict("corral", "p", dropped ? kubernetes::standin::ExecEnding::dropped : kubernetes::standin::ExecEnding::killed));
  ExecOutcome o = e.finish();
  if (dropped) {
    CHECK_FALSE(o.status);
    CHECK_FALSE(o.close_frame);
  } else {
    REQUIRE(o.status);
    CHECK(string_at(parse(*o.status)["details"]["causes"][0], {"message"}) == "137");
  }
  json::Document pod = c.api.get(c.pod("p")).json();
  CHECK(string_at(pod, {"status", "phase"}) == "Failed");
  CHECK(string_at(pod, {"status", "reason"}) == "Evicted");
  CHECK(string_at(pod, {"status", "message"}).find("The node was low on resource: memory.") == 0);
  CHECK(condition(pod, "DisruptionTarget") == "True");
  auto reasons = c.event_reasons("p");
  CHECK(std::find(reasons.begin(), reasons.end(), "Evicted") != reasons.end());
  }
}

TEST_CASE("a NetworkPolicy that denies egress cuts the pod's commands off; one allowing 127.0.0.1/32 lets them through") {
  Cluster c;
  running_pod(c, "p", {.labels = R"({"corral-sandbox":"s1"})"});
  corral::test::LoopbackListener listener;
  auto probe = [&] { return exec(c, "p", {"sh", "-c", listener.probe_script()}).finish().out; };
  CHECK(probe() == "reached\n");  // no policy: the pod's network is open
  Answer deny = c.api.post("/apis/networking.k8s.io/v1/namespaces/corral/networkpolicies",
                           R"({"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"name":"s1-egress"},)"
                           R"("spec":{"podSelector":{"matchLabels":{"corral-sandbox":"s1"}},"policyTypes":["Egress"]}})");
  REQUIRE_MESSAGE(deny.status == 201, deny.body);
  CHECK(probe() == "unreachable\n");
  Answer allow = c.api.put("/apis/networking.k8s.io/v1/namespaces/corral/networkpolicies/s1-egress",
                           R"({"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"name":"s1-egress","resourceVersion":")" +
                               string_at(deny.json(), {"metadata", "resourceVersion"}) +
                               R"("},"spec":{"podSelector":{"matchLabels":{"corral-sandbox":"s1"}},"policyTypes":["Egress"],)"
                               R"("egress":[{"to":[{"ipBlock":{"cidr":"10.0.0.0/8"}},{"ipBlock":{"cidr":"127.0.0.1/32"}}]}]}})");
  REQUIRE_MESSAGE(allow.status == 200, allow.body);
  CHECK(probe() == "reached\n");
  // A pod the policy does not select keeps its network.
  running_pod(c, "other");
  CHECK(exec(c, "other", {"sh", "-c", listener.probe_script()}).finish().out == "reached\n");
}

TEST_CASE("a NetworkPolicy is validated and defaulted as the API server does") {
  Cluster c;
  const std::string path = "/apis/networking.k8s.io/v1/namespaces/corral/networkpolicies";
  Answer bad = c.api.post(path, R"({"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"name":"x"},)"
                                R"("spec":{"egress":[{"to":[{"ipBlock":{"cidr":"10.0.0.0/33"}}]},{"to":[{}]}]}})");
  REQUIRE(bad.status == 422);
  const std::string message = string_at(bad.json(), {"message"});
  CHECK(message.find("spec.egress[0].to[0].ipBlock.cidr: Invalid value: \"10.0.0.0/33\": must be a valid CIDR value") != std::string::npos);
  CHECK(message.find("spec.egress[1].to[0]: Required value: must specify a peer") != std::string::npos);
  Answer types = c.api.post(path, R"({"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"name":"x"},)"
                                  R"("spec":{"policyTypes":["Outbound"]}})");
  CHECK(types.status == 422);
  Answer ok = c.api.post(path, R"({"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"name":"x"},)"
                               R"("spec":{"egress":[{"ports":[{"port":443}],"to":[{"ipBlock":{"cidr":"0.0.0.0/0","except":["10.0.0.0/8"]}}]}]}})");
  REQUIRE_MESSAGE(ok.status == 201, ok.body);
  json::Document np = ok.json();
  CHECK(np["spec"]["policyTypes"].Size() == 2);  // Ingress, and Egress since it has egress rules
  CHECK(np["spec"]["egress"][0]["ports"][0]["protocol"] == "TCP");
  CHECK(np["spec"].HasMember("podSelector"));
  Answer list = c.api.get(path);
  CHECK(string_at(list.json(), {"kind"}) == "NetworkPolicyList");
  Answer gone = c.api.del(path + "/x");
  CHECK(gone.status == 200);
  CHECK(string_at(gone.json(), {"status"}) == "Success");
}
