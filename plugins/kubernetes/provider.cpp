#include "provider.hpp"

#include "api_answers.hpp"
#include "api_errors.hpp"
#include "command_line.hpp"
#include "corral/sdk/printable.hpp"
#include "corral/json.hpp"
#include "corral/sdk/download.hpp"
#include "corral/os/random.hpp"
#include "corral/sdk/remote/errors.hpp"
#include "corral/sdk/remote/ownership.hpp"
#include "corral/sdk/remote/process_group.hpp"
#include "corral/sdk/remote/command_hooks.hpp"
#include "corral/sdk/remote/paged_list.hpp"
#include "corral/sdk/remote/step_failure.hpp"
#include "corral/sdk/remote/strays.hpp"
#include "corral/sdk/sync.hpp"
#include "kubeconfig.hpp"
#include "network_policy.hpp"
#include "pod.hpp"
#include "pod_wait.hpp"
#include "spec.hpp"
#include "warm_pool.hpp"

namespace corral::kubernetes {
namespace {

// How long a deleted Pod's processes get to end after SIGTERM.
constexpr int kGraceSeconds = 5;

std::string delete_options(int grace_seconds) {
  return "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\",\"gracePeriodSeconds\":" + std::to_string(grace_seconds) +
         ",\"propagationPolicy\":\"Background\"}";
}

// The uid of the Pod in `response`, the answer to `call` ("" when it has none).
std::string uid_of(const sdk::http::Response& response, const Call& call) {
  return read_answer(response, call, "Pod", [](const json::Value& pod) {
    const json::Value* meta = json::find(pod, "metadata");
    return meta ? json::get_string(*meta, "uid") : std::string();
  });
}

}  // namespace

KubernetesProvider::KubernetesProvider(const sdk::Options& options) : settings_(Settings::from(options)) {}

std::string KubernetesProvider::target() const {
  try {
    const ClusterAccess a = find_cluster({settings_.kubeconfig, settings_.context, settings_.service_account_dir});
    return "server " + a.server + "; " + a.origin + "; namespace " + a.ns + "; " + a.account;
  } catch (const Error&) {
    return "";  // the first call that needs the cluster says what is wrong
  }
}

Api& KubernetesProvider::api(const sdk::Host& host) {
  if (!api_) {
    ClusterAccess access = find_cluster({settings_.kubeconfig, settings_.context, settings_.service_account_dir});
    if (access.tls.insecure)
      host.warn("the kubeconfig (" + access.origin +
                ") sets insecure-skip-tls-verify: the API server's certificate is not checked, so anyone on the "
                "network path could pose as the cluster and receive your credentials");
    api_.emplace(std::move(access), settings_.request_timeout_seconds, identity().settings.either("request-timeout"),
                 secrets());
  }
  return *api_;
}

Sandbox KubernetesProvider::masked(Sandbox sandbox) {
  for (auto& [key, value] : sandbox.details) value = secrets().apply(value);
  return sandbox;
}

const std::string& KubernetesProvider::ns(const sdk::Host& host) {
  if (ns_.empty()) {
    std::string chosen = settings_.ns;
    if (chosen.empty()) chosen = api(host).access().ns;
    if (chosen.empty()) chosen = "default";
    check_name(chosen, "namespace");  // the kubeconfig's too: it becomes part of every path
    ns_ = std::move(chosen);
  }
  return ns_;
}

std::string KubernetesProvider::ns_of(const Sandbox& sandbox, const sdk::Host& host) {
  auto it = sandbox.details.find("namespace");
  std::string result = it != sandbox.details.end() && !it->second.empty() ? it->second : ns(host);
  check_name(result, "namespace");
  return result;
}

std::vector<DoctorCheck> KubernetesProvider::doctor(const sdk::Host& host) {
  std::vector<DoctorCheck> checks;
  DoctorCheck cluster{"Kubernetes cluster", false, "", ""};
  try {
    Api& a = api(host);
    cluster.ok = true;
    cluster.detail = a.access().server + " (" + a.access().origin + ")";
  } catch (const Error& e) {
    cluster.detail = e.what();
    cluster.hint = e.hint();
    checks.push_back(cluster);
    return checks;
  }
  checks.push_back(cluster);
  DoctorCheck access{"Kubernetes API access", false, "", ""};
  try {
    Call call;
    call.path =
        pods_path(ns(host)) + "?limit=1&labelSelector=" + sdk::http::url_encode("app.kubernetes.io/managed-by=corral");
    call.what = "Kubernetes list Pods in namespace " + ns(host);
    sdk::http::Response r = api(host).send(call, host);
    if (!r.ok()) throw api_error(r, call.what);
    access.ok = true;
    access.detail = "the credentials are accepted and may list Pods in namespace " + ns(host);
  } catch (const Error& e) {
    access.detail = e.what();
    access.hint = e.hint();
  }
  checks.push_back(access);
  checks.push_back(
      {"Kubernetes network policies", true,
       "--network none and allow:CIDR become a NetworkPolicy per Pod; only a network plugin that "
       "enforces policies (Calico, Cilium, ...) makes them hold, and corral cannot tell whether this "
       "cluster has one",
       "ask the cluster's administrators, or check with a Pod that tries to reach an address it should not"});
  return checks;
}

void KubernetesProvider::delete_quietly(const std::string& path, const std::string& kind, const std::string& name,
                                        const sdk::Host& host) {
  try {
    Call call;
    call.method = "DELETE";
    call.path = path;
    call.body = delete_options(0);
    call.what = "Kubernetes delete " + kind + " " + name;
    sdk::http::Response r = api(host).send(call, host);
    if (!r.ok() && r.status != 404) throw api_error(r, call.what);
  } catch (const Error& e) {
    std::string lower = kind;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    host.warn("could not delete Kubernetes " + kind + " " + name + " in namespace " + ns(host) + ": " + e.what() +
              "; delete it with `kubectl delete " + lower + " -n " + ns(host) + " " + name + "`");
  }
}

Sandbox KubernetesProvider::finish_start(const std::string& pod, const std::string& uid, const CreateRequest& request,
                                         const sdk::Host& host) {
  const std::string& namespace_ = ns(host);
  if (request.network.mode != NetworkPolicy::Mode::open) {
    Call policy;
    policy.method = "POST";
    policy.path = network_policies_path(namespace_);
    policy.body = network_policy_manifest(request.network, namespace_, pod, uid);
    policy.what = "Kubernetes create NetworkPolicy " + pod;
    sdk::http::Response p = api(host).send(policy, host);
    const bool again = p.status == 409 && p.sent > 1;
    if (!p.ok() && !again) throw api_error(p, policy.what);
  }
  host.progress("waiting for Kubernetes Pod " + pod + " to be Ready");
  wait_until_ready(api(host), namespace_, pod, settings_.image, settings_.start_timeout_seconds,
                   identity().settings.either("start-timeout"), host);
  return get(pod, host);
}

Sandbox KubernetesProvider::start_claimed(const std::string& claim, const CreateRequest& request,
                                          const sdk::Host& host) {
  const std::string& namespace_ = ns(host);
  const StringMap labels = sdk::remote::creation_labels(request);
  host.progress("claiming a Pod of Kubernetes warm pool " + settings_.warm_pool + " in namespace " + namespace_);
  try {
    const std::string pod =
        claim_pod(api(host), namespace_, claim, settings_.warm_pool, labels, settings_.start_timeout_seconds, host);
    // The adopted Pod takes corral's labels, so list and cleanup find it, and names its claim.
    rapidjson::StringBuffer buf;
    json::Writer w(buf);
    w.StartObject();
    json::write_key(w, "metadata");
    write_metadata(w, pod, namespace_, labels,
                   {{kNetworkAnnotation, to_string(request.network)}, {kClaimAnnotation, claim}});
    w.EndObject();
    Call adopt;
    adopt.method = "PATCH";
    adopt.path = pods_path(namespace_, pod);
    adopt.body = buf.GetString();
    adopt.content_type = "application/merge-patch+json";
    adopt.what = "Kubernetes label Pod " + pod;
    sdk::http::Response r = api(host).send(adopt, host);
    if (!r.ok()) throw api_error(r, adopt.what);
    return finish_start(pod, uid_of(r, adopt), request, host);
  } catch (const Error&) {
    delete_quietly(claims_path(namespace_, claim), "SandboxClaim", claim, host);
    throw;
  }
}

Sandbox KubernetesProvider::start_pod(const std::string& name, const CreateRequest& request, const sdk::Host& host) {
  const std::string& namespace_ = ns(host);
  const StringMap labels = sdk::remote::creation_labels(request);
  Call create;
  create.method = "POST";
  create.path = pods_path(namespace_);
  create.body = pod_manifest(settings_, name, namespace_, labels, {{kNetworkAnnotation, to_string(request.network)}});
  create.what = "Kubernetes create Pod " + name;
  host.progress("creating Kubernetes Pod " + name + " in namespace " + namespace_);
  sdk::http::Response r = api(host).send(create, host);
  // A create sent again after a 429 or a broken connection finds the Pod the first made.
  const bool made_by_earlier_try = r.status == 409 && r.sent > 1 && status_reason(r) == "AlreadyExists";
  if (!r.ok() && !made_by_earlier_try) throw api_error(r, create.what);
  try {
    Call answered = create;
    if (made_by_earlier_try) {
      answered = Call{};
      answered.path = pods_path(namespace_, name);
      answered.what = "Kubernetes read Pod " + name;
      r = api(host).send(answered, host);
      if (!r.ok()) throw api_error(r, answered.what);
    }
    return finish_start(name, uid_of(r, answered), request, host);
  } catch (const Error&) {
    delete_quietly(pods_path(namespace_, name), "Pod", name, host);
    throw;
  }
}

Sandbox KubernetesProvider::create(const CreateRequest& request, const sdk::Host& host) {
  if (request.network.mode == NetworkPolicy::Mode::allow)
    network_policy_manifest(request.network, "check", "check", "check");  // refuses a domain before any Pod
  const std::string name = new_pod_name();
  return sdk::remote::create_or_sweep(identity(), *this, request, host, [&] {
    return settings_.warm_pool.empty() ? start_pod(name, request, host) : start_claimed(name, request, host);
  });
}

Sandbox KubernetesProvider::get(const std::string& id, const sdk::Host& host) {
  check_name(id, "Pod");
  Call call;
  call.path = pods_path(ns(host), id);
  call.what = "Kubernetes read Pod " + id;
  sdk::http::Response r = api(host).send(call, host);
  sdk::remote::expect_sandbox(identity(), r, call.what, id);
  return masked(read_answer(r, call, "Pod", [&](const json::Value& pod) { return sandbox_of(pod, settings_.workdir); }));
}

std::vector<Sandbox> KubernetesProvider::list(const StringMap& labels, const sdk::Host& host) {
  auto fetch = [&](const StringMap& filter) {
    std::vector<Sandbox> found;
    const std::string what = "Kubernetes list Pods in namespace " + ns(host);
    sdk::remote::for_each_page(what, [&](const std::string& token) {
      Call call;
      call.path = pods_path(ns(host)) + "?limit=100&labelSelector=" + label_selector(filter);
      if (!token.empty()) call.path += "&continue=" + sdk::http::url_encode(token);
      call.what = what;
      sdk::http::Response r = api(host).send(call, host);
      if (!r.ok()) throw api_error(r, what);
      return read_answer(r, call, "PodList", [&](const json::Value& doc) {
        if (const json::Value* items = json::find(doc, "items")) {
          std::size_t n = 0;
          for (const json::Value& pod : items->GetArray()) {
            try {
              found.push_back(masked(sandbox_of(pod, settings_.workdir)));
            } catch (const Error& e) {
              throw Error(e.code(), "item " + std::to_string(n) + ": " + e.what());
            }
            ++n;
          }
        }
        const json::Value* meta = json::find(doc, "metadata");
        return meta ? json::get_string(*meta, "continue") : std::string();
      });
    });
    return found;
  };
  return sdk::remote::list_owned(labels, fetch, [](Sandbox s) { return s; });
}

void KubernetesProvider::destroy(const Sandbox& sandbox, const sdk::Host& host) {
  check_name(sandbox.id, "Pod");
  const std::string namespace_ = ns_of(sandbox, host);
  Call call;
  call.method = "DELETE";
  call.body = delete_options(kGraceSeconds);
  auto claim = sandbox.details.find("claim");
  if (claim != sandbox.details.end() && !claim->second.empty()) {
    // The claim's deletion takes its Sandbox and Pod with it.
    check_name(claim->second, "SandboxClaim");
    call.path = claims_path(namespace_, claim->second);
    call.what = "Kubernetes delete SandboxClaim " + claim->second;
  } else {
    call.path = pods_path(namespace_, sandbox.id);
    call.what = "Kubernetes delete Pod " + sandbox.id;
  }
  sdk::remote::deleted(identity(), api(host).send(call, host), call.what);  // already gone counts as success
  auto network = sandbox.details.find("network");
  if (network != sandbox.details.end() && network->second != "open") {
    // Its ownerReference lets the garbage collector remove it too; this is sooner.
    Call policy;
    policy.method = "DELETE";
    policy.path = network_policies_path(namespace_, sandbox.id);
    policy.what = "Kubernetes delete NetworkPolicy " + sandbox.id;
    sdk::remote::deleted(identity(), api(host).send(policy, host), policy.what);
  }
}

void KubernetesProvider::throw_if_gone(const std::string& namespace_, const std::string& id, const sdk::Host& host) {
  Call call;
  call.path = pods_path(namespace_, id);
  call.what = "Kubernetes read Pod " + id;
  sdk::http::Response r;
  try {
    r = api(host).send(call, host);
  } catch (const Error&) {
    return;  // cannot tell: the caller's own error stands
  }
  if (r.status == 404) throw sdk::remote::sandbox_gone(identity(), id);
  if (!r.ok()) return;
  try {
    json::Document pod = json::parse(r.body, "Pod");
    const json::Value* meta = json::find(pod, "metadata");
    const json::Value* status = json::find(pod, "status");
    const std::string phase = status ? json::get_string(*status, "phase") : "";
    const bool ending = meta && json::find(*meta, "deletionTimestamp");
    if (phase != "Failed" && phase != "Succeeded" && !ending) return;
    Error gone = sdk::remote::sandbox_gone(identity(), id);
    std::string why = ending ? "it is being deleted" : "its Pod " + phase;
    if (status && !json::get_string(*status, "reason").empty())
      why += " (" + sdk::printable(json::get_string(*status, "reason")) + ": " +
             sdk::printable(json::get_string(*status, "message")) + ")";
    throw Error(gone.code(), std::string(gone.what()) + ": " + why, gone.hint());
  } catch (const Error& e) {
    if (e.code() == ErrorCode::not_found) throw;
  }
}

int KubernetesProvider::run_in(const Sandbox& sandbox, const std::vector<std::string>& argv,
                               const sdk::remote::CommandHooks& hooks, const ExecInput& input,
                               const std::string& what, const sdk::Host& host) {
  check_name(sandbox.id, "Pod");
  const std::string namespace_ = ns_of(sandbox, host);
  ExecEnd end;
  try {
    auto container = sandbox.details.find("container");
    const std::string name =
        container != sandbox.details.end() && !container->second.empty() ? container->second : std::string(kContainer);
    end = exec_in_pod(api(host), namespace_, sandbox.id, name, argv, hooks, input, what);
  } catch (const Error& e) {
    // Refused before the upgrade (404, a Pod that completed) or cut: say "gone" when it is.
    if (e.code() != ErrorCode::cancelled) throw_if_gone(namespace_, sandbox.id, host);
    throw;
  }
  exec_protocol_ = end.protocol;
  if (!end.exit_code) {
    throw_if_gone(namespace_, sandbox.id, host);
    throw sdk::http::connection_lost(what, "command", "the exec stream ended with no exit status");
  }
  return *end.exit_code;
}

void KubernetesProvider::kill_remote(const Sandbox& sandbox, const std::string& pid_file, const sdk::Host& host) {
  try {
    run_in(sandbox, sdk::remote::kill_group_argv(pid_file), sdk::remote::quiet_hooks(), {},
           "Kubernetes stop the command", host);
  } catch (const Error& e) {
    host.warn("the command may still be running in Kubernetes Pod " + sandbox.id + ": stopping it failed: " + e.what());
  }
}

void KubernetesProvider::signal_remote(const Sandbox& sandbox, const std::string& pid_file, int signal,
                                       const sdk::Host& host) {
  try {
    run_in(sandbox, sdk::remote::signal_group_argv(pid_file, signal), sdk::remote::quiet_hooks(), {},
           "Kubernetes pass the signal on", host);
  } catch (const Error& e) {
    host.warn("could not pass the signal on to the command in Kubernetes Pod " + sandbox.id + ": " + e.what() +
              "; it is killed once --stop-timeout has passed");
  }
}

bool KubernetesProvider::stdin_can_end(const Sandbox& sandbox, const sdk::Host& host) {
  if (exec_protocol_.empty())
    run_in(sandbox, {"true"}, sdk::remote::quiet_hooks(), {}, "Kubernetes try the exec protocol", host);
  if (exec_protocol_ == kExecV5) return true;
  char peek[1];
  if (host.read_input(peek, sizeof peek, 0) > 0)
    throw Error(ErrorCode::unsupported,
                "the Kubernetes API server speaks only " + exec_protocol_ +
                    " (Kubernetes before 1.30), which cannot end a command's stdin, and input is waiting there",
                "add --no-stdin to run it with an empty stdin, or use a cluster of Kubernetes 1.30 or later");
  return false;
}

ExecResult KubernetesProvider::exec(const Sandbox& sandbox, const Command& command, const sdk::Host& host) {
  const std::string folder = join_workspace_path(settings_.workdir, command.cwd);
  const std::string pid_file = "/tmp/corral-" + os::random_hex(8) + ".pid";
  const std::vector<std::string> argv = run_argv(command, folder, pid_file);
  ExecInput input;
  if (command.tty) {
    // A terminal's keys have no end to send: v4, which cannot close stdin, does as well.
    input.user = &host;
    input.terminal = true;
  } else if (command.forward_stdin && stdin_can_end(sandbox, host)) {
    input.user = &host;
  }
  sdk::CommandDeadline deadline(host, command.timeout_seconds);
  sdk::remote::CommandHooks hooks = sdk::remote::command_hooks(host, deadline);
  // The user's stop reaches the command as its signal (exec-signals); the host cancels the
  // call only when it has not ended by it within --stop-timeout, and the kill below follows.
  hooks.stop = [&, stop = hooks.stop] {
    if (const int signal = host.take_signal(); signal != 0) signal_remote(sandbox, pid_file, signal, host);
    return stop();
  };
  try {
    return ExecResult{run_in(sandbox, argv, hooks, input, "Kubernetes run the command", host)};
  } catch (const Error& e) {
    if (e.code() != ErrorCode::cancelled) throw;
    kill_remote(sandbox, pid_file, host);
    if (deadline.timed_out()) throw sdk::remote::command_timed_out(identity(), command.timeout_seconds, sandbox.id);
    throw;
  }
}

void KubernetesProvider::upload(const Sandbox& sandbox, const UploadRequest& request, const sdk::Host& host) {
  const std::string& workdir = settings_.workdir;
  host.progress("uploading the workspace (" + std::to_string((request.size + 512 * 1024) / (1024 * 1024)) +
                " MB) to Kubernetes Pod " + sandbox.id);
  sdk::remote::StepErrors errors;
  const sdk::remote::CommandHooks hooks = sdk::remote::step_hooks(host, errors.sink());
  int code = run_in(sandbox, unpack_argv(workdir, request.size), hooks, ExecInput{request.archive_path},
                    "Kubernetes unpack the workspace", host);
  if (code != 0)
    throw sdk::remote::step_failed(identity(), "unpacking the workspace into " + workdir, sandbox.id, code, errors,
                                   "the image needs sh, head, tar and gzip, and its user must be able to write " +
                                       workdir + "; see " + identity().settings.flag("image") + " and " +
                                       identity().settings.flag("workdir"));
  // Files deleted locally since the last sync leave the sandbox too.
  for (const std::vector<std::string>& batch : sdk::removal_batches(request.removed)) {
    std::vector<std::string> argv = {"/bin/sh", "-c",
                                     std::string("CORRAL_DIR=$1; shift; export CORRAL_DIR\n") + sdk::kRemovePathsScript,
                                     "sh", workdir};
    argv.insert(argv.end(), batch.begin(), batch.end());
    errors.clear();
    int rc = run_in(sandbox, argv, hooks, {}, "Kubernetes remove deleted files", host);
    if (rc != 0)
      throw sdk::remote::step_failed(identity(), "removing files deleted locally from " + workdir, sandbox.id, rc,
                                     errors);
  }
}

DownloadResult KubernetesProvider::download(const Sandbox& sandbox, const DownloadRequest& request,
                                            const sdk::Host& host) {
  const std::string folder = join_workspace_path(settings_.workdir, request.cwd);
  host.progress("downloading the files from Kubernetes Pod " + sandbox.id);
  sdk::ScriptRunner run = [&](const std::string& script, const sdk::OutputSink& on_stdout,
                              const sdk::OutputSink& on_stderr, const std::function<bool()>& stop) {
    sdk::remote::CommandHooks hooks;
    hooks.on_stdout = on_stdout;
    hooks.on_stderr = on_stderr;
    hooks.stop = stop;
    sdk::StreamedScript result;
    try {
      result.exit_code = run_in(sandbox, {"/bin/sh", "-c", script}, hooks, {}, "Kubernetes pack the downloads", host);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::cancelled) throw;
      result.cancelled = true;
    }
    return result;
  };
  return sdk::download_through_stdout(request, folder, run, [&] { return host.cancelled(); });
}

Sandbox KubernetesProvider::extend(const Sandbox& sandbox, std::int64_t seconds, const sdk::Host& host) {
  if (seconds <= 0 || seconds > 2147483647)
    throw Error(ErrorCode::invalid_argument, "a Kubernetes lifetime extension must be positive");
  if (seconds > settings_.max_lifetime_seconds)
    host.warn("Kubernetes Pod " + sandbox.id + " still ends at its " + identity().settings.flag("max-lifetime") + " (" +
              format_duration(settings_.max_lifetime_seconds) +
              " after it started): the API server never raises a "
              "Pod's activeDeadlineSeconds");
  sdk::remote::StepErrors errors;
  sdk::remote::CommandHooks hooks = sdk::remote::step_hooks(host, errors.sink());
  int rc = run_in(sandbox, extend_argv(seconds), hooks, {}, "Kubernetes extend the lifetime", host);
  if (rc != 0) throw sdk::remote::step_failed(identity(), "moving the lifetime's end", sandbox.id, rc, errors);
  return get(sandbox.id, host);
}

}  // namespace corral::kubernetes
