#include "warm_pool.hpp"

#include <chrono>

#include "api_answers.hpp"
#include "api_errors.hpp"
#include "corral/sdk/printable.hpp"
#include "corral/json.hpp"
#include "corral/os/wait.hpp"
#include "pod.hpp"
#include "spec.hpp"

namespace corral::kubernetes {
namespace {

using Clock = std::chrono::steady_clock;

// The claim's Ready condition: its status and reason, with its message.
struct ClaimState {
  bool ready = false;
  std::string reason, message, sandbox;
};

ClaimState state_of(const json::Value& claim) {
  ClaimState s;
  const json::Value* status = json::find(claim, "status");
  if (!status) return s;
  if (const json::Value* sandbox = json::find(*status, "sandbox")) s.sandbox = json::get_string(*sandbox, "name");
  if (const json::Value* conditions = json::find(*status, "conditions"); conditions && conditions->IsArray())
    for (const json::Value& c : conditions->GetArray())
      if (json::get_string(c, "type") == "Ready") {
        s.ready = json::get_string(c, "status") == "True";
        s.reason = json::get_string(c, "reason");
        s.message = json::get_string(c, "message");
      }
  return s;
}

// What `fields` reads of the `kind` at `path`; a failed answer is api_error, one that is
// no `kind` the server's fault (api_answers.hpp).
template <class Read>
auto read(Api& api, const std::string& path, const std::string& what, const char* kind, const sdk::Host& host,
          Read&& fields) {
  Call call;
  call.path = path;
  call.what = what;
  sdk::http::Response r = api.send(call, host);
  if (!r.ok()) throw api_error(r, what);
  return read_answer(r, call, kind, std::forward<Read>(fields));
}

}  // namespace

std::string claims_path(const std::string& ns, const std::string& name) {
  std::string path = "/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/" + ns + "/sandboxclaims";
  if (!name.empty()) path += "/" + name;
  return path;
}

std::string claim_manifest(const std::string& name, const std::string& ns, const std::string& pool,
                           const StringMap& labels) {
  rapidjson::StringBuffer buf;
  json::Writer w(buf);
  w.StartObject();
  json::write_string(w, "apiVersion", "extensions.agents.x-k8s.io/v1beta1");
  json::write_string(w, "kind", "SandboxClaim");
  json::write_key(w, "metadata");
  write_metadata(w, name, ns, labels, {});
  json::write_key(w, "spec");
  w.StartObject();
  json::write_key(w, "warmPoolRef");
  w.StartObject();
  json::write_string(w, "name", pool);
  w.EndObject();
  w.EndObject();
  w.EndObject();
  return buf.GetString();
}

std::string claim_pod(Api& api, const std::string& ns, const std::string& name, const std::string& pool,
                      const StringMap& labels, std::int64_t timeout_seconds, const sdk::Host& host) {
  Call create;
  create.method = "POST";
  create.path = claims_path(ns);
  create.body = claim_manifest(name, ns, pool, labels);
  create.what = "Kubernetes create SandboxClaim " + name;
  sdk::http::Response r = api.send(create, host);
  if (!r.ok() && !(r.status == 409 && r.sent > 1)) throw api_error(r, create.what);
  // Claims are few and bind in moments: a bounded poll serves.
  const auto deadline = Clock::now() + std::chrono::seconds(timeout_seconds);
  ClaimState state;
  for (auto pause = std::chrono::milliseconds(100);; pause = std::min(pause * 2, std::chrono::milliseconds(2000))) {
    state = read(api, claims_path(ns, name), "Kubernetes read SandboxClaim " + name, "SandboxClaim", host, state_of);
    if (state.reason == "WarmPoolNotFound")
      throw Error(ErrorCode::not_found, "Kubernetes warm pool '" + pool + "' does not exist in namespace " + ns,
                  "list the pools with `kubectl get sandboxwarmpools -n " + ns + "`, or check " +
                      identity().settings.either("warm-pool"));
    if (state.ready && !state.sandbox.empty()) break;
    if (Clock::now() >= deadline)
      throw Error(ErrorCode::unavailable,
                  "Kubernetes SandboxClaim " + name + " was not Ready within " + format_duration(timeout_seconds) +
                      (state.reason.empty() ? ""
                                            : ": " + sdk::printable(state.reason) + " (" +
                                                  sdk::printable(state.message) + ")"),
                  "raise " + identity().settings.either("start-timeout") + ", or check the warm pool's template");
    if (!os::sleep_unless_stopped(pause, [&] { return host.cancelled(); }))
      throw Error(ErrorCode::cancelled, "Kubernetes wait for SandboxClaim " + name + ": cancelled");
  }
  auto pod_of = [&](const json::Value& sandbox) {
    std::string pod_name = state.sandbox;  // a Sandbox that made its own Pod names it after itself
    if (const json::Value* meta = json::find(sandbox, "metadata"))
      if (const json::Value* annotations = json::find(*meta, "annotations"))
        pod_name = json::get_string(*annotations, "agents.x-k8s.io/pod-name", pod_name);
    return pod_name;
  };
  const std::string pod = read(api, "/apis/agents.x-k8s.io/v1beta1/namespaces/" + ns + "/sandboxes/" + state.sandbox,
                               "Kubernetes read Sandbox " + state.sandbox, "Sandbox", host, pod_of);
  check_name(pod, "Pod");
  return pod;
}

}  // namespace corral::kubernetes
