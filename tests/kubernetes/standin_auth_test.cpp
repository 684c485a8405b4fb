// Who may talk to the stand-in, as the API server decides it: its bearer token, a client
// certificate its CA signed (and no other), service account tokens, anonymous requests
// (403), access rules (403 in RBAC's words); and the client configuration it writes:
// kubeconfigs, an exec credential plugin, the in-cluster service account folder.
#include <doctest/doctest.h>

#include <fstream>

#include "cli.hpp"
#include "cluster_fixture.hpp"
#include "corral/os/process.hpp"
#include "exec_client.hpp"
#include "object.hpp"

using namespace corral;
using namespace corral::kubernetes::test;
using corral::kubernetes::standin::string_at;

namespace {

HttpsClient client_of(Cluster& c) { return HttpsClient(c.server.url(), c.server.ca_pem()); }

std::string last_user(Cluster& c) {
  return c.server.with([](auto& s) { return s.requests.back().user; });
}

}  // namespace

TEST_CASE("a bearer token: the right one is let in, a wrong or revoked one is 401, none at all is anonymous and 403") {
  Cluster c;
  CHECK(c.api.get(c.pods()).status == 200);
  CHECK(last_user(c) == "corral-test");
  Answer wrong = client_of(c).token("not-the-token").get(c.pods());
  CHECK(wrong.status == 401);
  CHECK(wrong.body == R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401})");
  Answer anonymous = client_of(c).get(c.pods());
  CHECK(anonymous.status == 403);
  CHECK(string_at(anonymous.json(), {"message"}) ==
        "pods is forbidden: User \"system:anonymous\" cannot list resource \"pods\" in API group \"\" in the namespace \"corral\"");
  CHECK(client_of(c).get("/version").status == 200);  // public, as on a real cluster
  c.server.add_token("second", "bob");
  CHECK(client_of(c).token("second").get(c.pods()).status == 200);
  c.server.revoke_token("second");
  CHECK(client_of(c).token("second").get(c.pods()).status == 401);
}

TEST_CASE("a client certificate the stand-in's CA signed names the user; a foreign or expired one is 401") {
  Cluster c;
  auto alice = c.server.issue_client_certificate("alice", {"developers"});
  HttpsClient as_alice = client_of(c);
  as_alice.certificate(alice.cert_pem, alice.key_pem);
  CHECK(as_alice.get(c.pods()).status == 200);
  CHECK(last_user(c) == "alice");
  auto stranger = kubernetes::standin::Pki::foreign_client("mallory");
  HttpsClient as_stranger = client_of(c);
  as_stranger.certificate(stranger.cert_pem, stranger.key_pem);
  CHECK(as_stranger.get(c.pods()).status == 401);
  auto expired = c.server.issue_client_certificate("alice", {}, -60);
  HttpsClient as_expired = client_of(c);
  as_expired.certificate(expired.cert_pem, expired.key_pem);
  CHECK(as_expired.get(c.pods()).status == 401);
}

TEST_CASE("access rules: a denied verb and a namespace outside a user's are 403 in RBAC's words") {
  Cluster c;
  c.server.add_namespace("other");
  c.server.with([](auto& s) {
    s.access.denied.insert("create pods/exec");
    s.access.namespaces_of["corral-test"] = {"corral"};
  });
  Answer outside = c.api.get("/api/v1/namespaces/other/pods");
  CHECK(outside.status == 403);
  CHECK(string_at(outside.json(), {"reason"}) == "Forbidden");
  c.create_pod("p");
  c.wait_ready("p");
  Answer exec = c.api.get(exec_target(c.ns, "p", {"true"}), {"Connection: Upgrade", "Upgrade: websocket",
                                                            "Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="});
  CHECK(exec.status == 403);
  CHECK(string_at(exec.json(), {"message"}) ==
        "pods \"p\" is forbidden: User \"corral-test\" cannot create resource \"pods/exec\" in API group \"\" in the namespace \"corral\"");
}

TEST_CASE("the kubeconfig it writes names its server and CA; an exec credential plugin's token and a tokenFile work") {
  Cluster c;
  const std::string config = corral::test::read_file(c.server.kubeconfig());
  CHECK(config.find("server: \"" + c.server.url() + "\"") != std::string::npos);
  CHECK(config.find("certificate-authority-data: " + kubernetes::standin::base64(c.server.ca_pem())) != std::string::npos);
  CHECK(config.find("token: \"" + c.server.token() + "\"") != std::string::npos);
  CHECK(corral::test::read_file(c.server.ca_file()) == c.server.ca_pem());
  CHECK(corral::test::read_file(c.server.token_file()) == c.server.token());

  corral::test::TempDir dir;
  const auto plugin = dir.path() / "credential-plugin";
  { std::ofstream(plugin) << kubernetes::standin::exec_plugin_script("from-plugin", "2099-01-01T00:00:00Z"); }
  std::filesystem::permissions(plugin, std::filesystem::perms::owner_all);
  kubernetes::standin::KubeconfigUser user;
  user.exec_command = plugin.string();
  const auto written = c.server.write_kubeconfig(dir.path() / "kubeconfig", user);
  CHECK(corral::test::read_file(written).find("apiVersion: client.authentication.k8s.io/v1") != std::string::npos);
  os::ProcessSpec run;
  run.argv = {plugin.string()};
  auto printed = os::capture_process(run, 30);
  REQUIRE(printed.exit_code == 0);
  json::Document credential = parse(printed.out);
  CHECK(string_at(credential, {"kind"}) == "ExecCredential");
  CHECK(string_at(credential, {"apiVersion"}) == "client.authentication.k8s.io/v1");
  const std::string token = string_at(credential, {"status", "token"});
  CHECK(client_of(c).token(token).get(c.pods()).status == 401);  // not until the cluster knows it
  c.server.add_token(token, "plugin-user");
  CHECK(client_of(c).token(token).get(c.pods()).status == 200);
  CHECK(corral::test::read_file(plugin.string() + ".calls") == "run\n");
}

TEST_CASE("in-cluster: a service account folder outside, and inside every pod, holds a token the cluster accepts") {
  Cluster c;
  corral::test::TempDir dir;
  const auto sa = c.server.write_service_account(dir.path() / "serviceaccount", "corral", "corral-runner");
  CHECK(corral::test::read_file(sa / "namespace") == "corral");
  CHECK(corral::test::read_file(sa / "ca.crt") == c.server.ca_pem());
  CHECK(client_of(c).token(corral::test::read_file(sa / "token")).get(c.pods()).status == 200);
  CHECK(last_user(c) == "system:serviceaccount:corral:corral-runner");
  c.create_pod("p");
  c.wait_ready("p");
  ExecClient e(c.server.url(), c.server.ca_pem(), c.server.token(),
               exec_target(c.ns, "p", {"sh", "-c", "cat /var/run/secrets/kubernetes.io/serviceaccount/token; echo; "
                                                   "echo $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT"}));
  const std::string out = e.finish().out;
  const std::string pod_token = out.substr(0, out.find('\n'));
  CHECK(client_of(c).token(pod_token).get(c.pods()).status == 200);
  CHECK(last_user(c) == "system:serviceaccount:corral:default");
  CHECK(c.server.url().find(out.substr(out.find('\n') + 1, out.size() - out.find('\n') - 2)) != std::string::npos);
}
