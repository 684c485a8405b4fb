#include "kubelet.hpp"

#include <sys/stat.h>

#include <dirent.h>
#include <signal.h>

#include <algorithm>
#include <fstream>

#include "admission.hpp"
#include "agent_sandbox.hpp"
#include "events.hpp"
#include "network_policy.hpp"
#include "pod_admission.hpp"
#include "pod_status.hpp"

namespace corral::kubernetes::standin {
namespace fs = std::filesystem;
namespace {

using Stage = PodRuntime::Stage;
using std::chrono::milliseconds;

const char* kServiceAccountDir = "var/run/secrets/kubernetes.io/serviceaccount";

ObjectPtr pod_object(const State& s, const PodRuntime& rt) { return s.store.get(pod_type(), rt.ns, rt.name); }

// Stores the pod's status as `rt` has it, when that changed anything.
void publish(State& s, const PodRuntime& rt) {
  ObjectPtr current = pod_object(s, rt);
  if (!current || string_at(*current, {"metadata", "uid"}) != rt.uid) return;
  json::Document updated = copy_of(*current);
  write_pod_status(updated, rt);
  const json::Value* old_status = json::find(*current, "status");
  const bool node_unchanged = string_at(*current, {"spec", "nodeName"}) == rt.node;
  if (old_status && *old_status == updated["status"] && node_unchanged) return;
  s.store.put(pod_type(), std::move(updated));
}

void event(State& s, const PodRuntime& rt, const EventSource& source, const std::string& type, const std::string& reason,
           const std::string& message, const std::string& container = {}) {
  ObjectPtr pod = pod_object(s, rt);
  if (pod) record_event(s, *pod, source, type, reason, message, container.empty() ? "" : "spec.containers{" + container + "}");
}

// The scheduler's verdict: the node to bind to, or why no node fits (its message).
std::string fit(const State& s, const json::Value& pod, std::string* chosen) {
  const Requests need = requests_of(pod);
  const Labels selector = labels_at(pod, {"spec", "nodeSelector"});
  std::map<std::string, int> reasons;
  int resource_failures = 0, other_failures = 0;
  double best_free = -1;
  for (const Node& node : s.nodes) {
    bool selected = std::all_of(selector.begin(), selector.end(), [&](const auto& kv) {
      auto it = node.labels.find(kv.first);
      return it != node.labels.end() && it->second == kv.second;
    });
    if (!selected) {
      ++reasons["node(s) didn't match Pod's node affinity/selector"];
      ++other_failures;
      continue;
    }
    Requests used;
    for (const auto& [key, other] : s.pods) {
      if (other.node != node.name || other.stage == Stage::finished) continue;
      if (ObjectPtr o = s.store.get(pod_type(), other.ns, other.name)) {
        const Requests r = requests_of(*o);
        used.cpu += r.cpu;
        used.memory += r.memory;
      }
    }
    const bool cpu = used.cpu + need.cpu <= node.cpu + 1e-9;
    const bool memory = used.memory + need.memory <= node.memory + 0.5;
    if (!cpu) ++reasons["Insufficient cpu"];
    if (!memory) ++reasons["Insufficient memory"];
    if (cpu && memory) {
      if (node.cpu - used.cpu > best_free) {
        best_free = node.cpu - used.cpu;
        *chosen = node.name;
      }
      continue;
    }
    ++resource_failures;
  }
  if (!chosen->empty()) return "";
  auto histogram = [](const std::map<std::string, int>& counts) {
    std::vector<std::string> parts;
    for (const auto& [reason, n] : counts) parts.push_back(std::to_string(n) + " " + reason);
    std::sort(parts.begin(), parts.end());
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
    return out;
  };
  std::map<std::string, int> preemption;
  if (resource_failures) preemption["No preemption victims found for incoming pod"] = resource_failures;
  if (other_failures) preemption["Preemption is not helpful for scheduling"] = other_failures;
  const std::string total = std::to_string(s.nodes.size());
  return "0/" + total + " nodes are available: " + histogram(reasons) + ". preemption: 0/" + total +
         " nodes are available: " + histogram(preemption) + ".";
}

void write_service_account(State& s, PodRuntime& rt, const json::Value& pod) {
  bool mounted = false;
  if (const json::Value* volumes = at(pod, {"spec", "volumes"}); volumes && volumes->IsArray())
    for (const auto& v : volumes->GetArray())
      if (string_at(v, {"name"}).rfind("kube-api-access-", 0) == 0) mounted = true;
  if (!mounted) return;
  const std::string account = string_at(pod, {"spec", "serviceAccountName"}, "default");
  rt.service_account_token = "eyJhbGciOiJSUzI1NiJ9." + random_hex(48) + "." + random_hex(64);
  s.tokens[rt.service_account_token] = {"system:serviceaccount:" + rt.ns + ":" + account,
                                        {"system:serviceaccounts", "system:serviceaccounts:" + rt.ns, "system:authenticated"}};
  const fs::path dir = rt.root / kServiceAccountDir;
  fs::create_directories(dir);
  std::ofstream(dir / "token") << rt.service_account_token;
  std::ofstream(dir / "ca.crt") << s.ca_pem;
  std::ofstream(dir / "namespace") << rt.ns;
}

void handle_exit(State& s, PodRuntime& rt, size_t index, int code);

void start_container(State& s, PodRuntime& rt, size_t index) {
  ContainerRuntime& c = rt.containers[index];
  c.container_id = "containerd://" + random_hex(64);
  c.started_at = Clock::now();
  c.restart_at.reset();
  if (c.argv.empty()) {  // the image's own long-running process, which the stand-in does not run
    c.running = true;
    return;
  }
  ObjectPtr pod = pod_object(s, rt);
  ProcessSpec spec;
  spec.root = rt.root;
  spec.hostname = rt.name;
  spec.working_dir = c.working_dir;
  spec.argv = c.argv;
  spec.env = pod_environment(s, rt, c);
  spec.no_network = pod && egress_denied(s.store, *pod);
  spec.log = rt.logs / (c.name + ".log");
  std::string failure;
  if (!find_in_pod(rt.root, c.argv[0])) {
    failure = c.argv[0].find('/') == std::string::npos
                  ? "exec: \"" + c.argv[0] + "\": executable file not found in $PATH"
                  : "exec: \"" + c.argv[0] + "\": stat " + c.argv[0] + ": no such file or directory";
  } else {
    try {
      StartedProcess p = s.spawner().start(spec);
      c.pid = p.pid;
      c.running = true;
      rt.groups.insert(p.pid);
      const std::string ns = rt.ns, name = rt.name, uid = rt.uid;
      const pid_t pid = p.pid;
      s.workers.start([&s, ns, name, uid, index, pid] {
        const int code = wait_exit_code(pid);
        std::lock_guard lock(s.mutex());
        auto it = s.pods.find({ns, name});
        if (it == s.pods.end() || it->second.uid != uid || index >= it->second.containers.size() ||
            it->second.containers[index].pid != pid)
          return;
        handle_exit(s, it->second, index, code);
      });
      return;
    } catch (const StartError& e) {
      failure = e.what();
    }
  }
  c.exit_code = 128;
  c.term_reason = "StartError";
  c.term_message = "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc "
                   "create failed: unable to start container process: " + failure + ": unknown";
  c.finished_at = Clock::now();
  event(s, rt, kubelet_source(rt.node), "Warning", "Failed", "Error: " + c.term_message, c.name);
  handle_exit(s, rt, index, 128);
}

// What the container's restart policy makes of an exit.
void handle_exit(State& s, PodRuntime& rt, size_t index, int code) {
  ContainerRuntime& c = rt.containers[index];
  const auto now = Clock::now();
  if (c.term_reason != "StartError" || c.running) {
    c.exit_code = code;
    c.term_reason = code == 0 ? "Completed" : "Error";
    c.term_message.clear();
    c.finished_at = now;
  }
  c.running = false;
  c.pid = -1;
  if (rt.ready) {
    rt.ready = false;
    rt.ready_changed_at = now;
  }
  if (rt.deleting || rt.stage == Stage::finished) {
    publish(s, rt);
    return;
  }
  ObjectPtr pod = pod_object(s, rt);
  const std::string policy = pod ? string_at(*pod, {"spec", "restartPolicy"}, "Always") : "Never";
  if (policy == "Always" || (policy == "OnFailure" && code != 0)) {
    // CrashLoopBackOff: 10 s, doubling, at most 5 minutes.
    const long delay = std::min(300L, 10L << std::min(c.restarts, 5));
    c.restart_at = now + std::chrono::seconds(delay);
    event(s, rt, kubelet_source(rt.node), "Warning", "BackOff",
          "Back-off restarting failed container " + c.name + " in pod " + rt.name + "_" + rt.ns + "(" + rt.uid + ")", c.name);
  } else if (std::none_of(rt.containers.begin(), rt.containers.end(), [](const auto& x) { return x.running || x.restart_at; })) {
    rt.stage = Stage::finished;
  }
  publish(s, rt);
}

// Every process whose root folder is the pod's: what a container's cgroup holds, however
// its processes regrouped themselves (a command started with setsid leaves the groups the
// pod tracks, not the container).
std::vector<pid_t> processes_rooted_at(const fs::path& root) {
  std::vector<pid_t> found;
  struct stat want {};
  if (root.empty() || ::stat(root.c_str(), &want) != 0) return found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    struct stat st {};
    if (::stat(("/proc/" + name + "/root").c_str(), &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino)
      found.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return found;
}

void signal_groups(PodRuntime& rt, int sig) {
  for (pid_t g : rt.groups) ::kill(-g, sig);
  for (pid_t p : processes_rooted_at(rt.root)) ::kill(p, sig);
}

bool any_alive(PodRuntime& rt) {
  for (auto it = rt.groups.begin(); it != rt.groups.end();) {
    if (group_alive(*it)) return true;
    it = rt.groups.erase(it);
  }
  return false;
}

// Ends the pod as a whole (evicted, past its deadline): its processes killed at once.
void fail_pod(State& s, PodRuntime& rt, const std::string& reason, const std::string& message) {
  const auto now = Clock::now();
  rt.reason = reason;
  rt.message = message;
  rt.stage = Stage::finished;
  rt.ready = false;
  rt.ready_changed_at = now;
  for (auto& c : rt.containers) {
    if (c.running) {
      c.exit_code = 137;
      c.term_reason = "Error";
      c.finished_at = now;
      event(s, rt, kubelet_source(rt.node), "Normal", "Killing", "Stopping container " + c.name, c.name);
    }
    c.running = false;
    c.pid = -1;
    c.restart_at.reset();
  }
  signal_groups(rt, SIGKILL);
  event(s, rt, kubelet_source(rt.node), "Warning", reason, message);
  publish(s, rt);
}

void remove_pod(State& s, PodRuntime& rt) {
  signal_groups(rt, SIGKILL);
  s.store.remove(pod_type(), rt.ns, rt.name);
  s.tokens.erase(rt.service_account_token);
  std::error_code ec;
  fs::remove_all(rt.folder, ec);
}

void step(State& s, PodRuntime& rt) {
  const auto now = Clock::now();
  ObjectPtr pod = pod_object(s, rt);
  if (!pod) return;
  const EventSource kubelet = kubelet_source(rt.node);
  switch (rt.stage) {
    case Stage::scheduling: {
      if (now < rt.due) return;
      std::string node;
      const std::string why = s.faults.unschedulable_message.empty() ? fit(s, *pod, &node) : s.faults.unschedulable_message;
      if (!why.empty()) {
        if (why != rt.unschedulable) {
          rt.unschedulable = why;
          event(s, rt, scheduler_source(), "Warning", "FailedScheduling", why);
          publish(s, rt);
        }
        rt.due = now + milliseconds(200);  // the scheduler tries again
        return;
      }
      rt.unschedulable.clear();
      rt.node = node;
      const size_t index = static_cast<size_t>(std::find_if(s.nodes.begin(), s.nodes.end(), [&](const Node& n) { return n.name == node; }) - s.nodes.begin());
      rt.host_ip = s.nodes[index].ip;
      rt.pod_ip = "10.244." + std::to_string(index + 1) + "." + std::to_string(2 + rt.ip_index % 250);
      rt.scheduled_at = rt.started_at = rt.ready_changed_at = now;
      rt.stage = Stage::pulling;
      rt.due = now + milliseconds(s.faults.pull_ms);
      publish(s, rt);
      event(s, rt, scheduler_source(), "Normal", "Scheduled", "Successfully assigned " + rt.ns + "/" + rt.name + " to " + node);
      for (const auto& c : rt.containers) event(s, rt, kubelet_source(rt.node), "Normal", "Pulling", "Pulling image \"" + c.image + "\"", c.name);
      return;
    }
    case Stage::pulling: {
      if (now < rt.due) return;
      for (const auto& c : rt.containers) {
        if (!s.faults.unpullable_images.count(c.image)) continue;
        const std::string ref = normalized_image(c.image);
        rt.image_error = "rpc error: code = NotFound desc = failed to pull and unpack image \"" + ref +
                         "\": failed to resolve reference \"" + ref + "\": " + ref + ": not found";
        rt.stage = Stage::pull_failed;
        rt.due = now + milliseconds(s.faults.image_backoff_ms);
        event(s, rt, kubelet, "Warning", "Failed", "Failed to pull image \"" + c.image + "\": " + rt.image_error, c.name);
        event(s, rt, kubelet, "Warning", "Failed", "Error: ErrImagePull", c.name);
        publish(s, rt);
        return;
      }
      for (const auto& c : rt.containers)
        event(s, rt, kubelet, "Normal", "Pulled",
              "Successfully pulled image \"" + c.image + "\" in " + std::to_string(s.faults.pull_ms) + "ms (" +
                  std::to_string(s.faults.pull_ms) + "ms including waiting). Image size: 4269743 bytes.", c.name);
      rt.stage = Stage::creating;
      rt.due = now + milliseconds(s.faults.start_ms);
      publish(s, rt);
      return;
    }
    case Stage::pull_failed:
      if (!rt.image_backoff && now >= rt.due) {
        rt.image_backoff = true;
        for (const auto& c : rt.containers)
          if (s.faults.unpullable_images.count(c.image)) {
            event(s, rt, kubelet, "Normal", "BackOff", "Back-off pulling image \"" + c.image + "\"", c.name);
            event(s, rt, kubelet, "Warning", "Failed", "Error: ImagePullBackOff", c.name);
          }
        publish(s, rt);
      }
      return;
    case Stage::creating: {
      if (now < rt.due) return;
      write_service_account(s, rt, *pod);
      rt.stage = Stage::running;
      if (s.faults.ready_ms >= 0) rt.ready_at = now + milliseconds(s.faults.ready_ms);
      for (size_t i = 0; i < rt.containers.size(); ++i) {
        event(s, rt, kubelet, "Normal", "Created", "Created container: " + rt.containers[i].name, rt.containers[i].name);
        start_container(s, rt, i);
        if (rt.containers[i].running)
          event(s, rt, kubelet, "Normal", "Started", "Started container " + rt.containers[i].name, rt.containers[i].name);
      }
      publish(s, rt);
      return;
    }
    case Stage::running: {
      for (size_t i = 0; i < rt.containers.size(); ++i)
        if (rt.containers[i].restart_at && now >= *rt.containers[i].restart_at) {
          ++rt.containers[i].restarts;
          start_container(s, rt, i);
        }
      const bool all_running = std::all_of(rt.containers.begin(), rt.containers.end(), [](const auto& c) { return c.running; });
      if (!rt.ready && all_running && rt.ready_at && now >= *rt.ready_at) {
        rt.ready = true;
        rt.ready_changed_at = now;
      }
      publish(s, rt);
      return;
    }
    case Stage::finished: return;
  }
}

}  // namespace

bool group_alive(pid_t pgid) {
  if (::kill(-pgid, 0) != 0) return false;
  // A group whose members are all zombies (children of a process that never reaps) is gone.
  DIR* proc = opendir("/proc");
  if (!proc) return true;
  bool alive = false;
  while (dirent* entry = readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    std::ifstream stat(std::string("/proc/") + entry->d_name + "/stat");
    std::string line;
    std::getline(stat, line);
    const size_t paren = line.rfind(')');
    if (paren == std::string::npos) continue;
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (std::sscanf(line.c_str() + paren + 1, " %c %ld %ld", &state, &ppid, &pgrp) == 3 && pgrp == pgid && state != 'Z') {
      alive = true;
      break;
    }
  }
  closedir(proc);
  return alive;
}

std::vector<std::string> pod_environment(const State& state, const PodRuntime& rt, const ContainerRuntime& c) {
  std::vector<std::string> env = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                                  "HOSTNAME=" + rt.name, "HOME=/root"};
  const size_t colon = state.server_url.rfind(':');
  if (colon != std::string::npos) {
    env.push_back("KUBERNETES_SERVICE_HOST=127.0.0.1");
    env.push_back("KUBERNETES_SERVICE_PORT=" + state.server_url.substr(colon + 1));
  }
  env.insert(env.end(), c.env.begin(), c.env.end());
  return env;
}

void kubelet_adopt(State& state, const json::Value& pod) {
  PodRuntime rt;
  rt.ns = string_at(pod, {"metadata", "namespace"});
  rt.name = string_at(pod, {"metadata", "name"});
  rt.uid = string_at(pod, {"metadata", "uid"});
  rt.folder = state.root() / "pods" / rt.ns / (rt.name + "-" + rt.uid.substr(0, 8));
  rt.root = rt.folder / "rootfs";
  rt.logs = rt.folder / "logs";
  rt.created = rt.ready_changed_at = Clock::now();
  rt.due = rt.created + milliseconds(state.faults.schedule_ms);
  rt.ip_index = state.pods_started++;
  fs::create_directories(rt.logs);
  if (const json::Value* containers = at(pod, {"spec", "containers"}); containers && containers->IsArray())
    for (const auto& c : containers->GetArray()) {
      ContainerRuntime cr;
      cr.name = string_at(c, {"name"});
      cr.image = string_at(c, {"image"});
      cr.working_dir = string_at(c, {"workingDir"}, "/");
      for (const char* part : {"command", "args"})
        if (const json::Value* list = json::find(c, part); list && list->IsArray() && json::find(c, "command"))
          for (const auto& a : list->GetArray())
            if (a.IsString()) cr.argv.push_back(a.GetString());
      if (const json::Value* env = json::find(c, "env"); env && env->IsArray())
        for (const auto& e : env->GetArray())
          if (json::find(e, "value")) cr.env.push_back(string_at(e, {"name"}) + "=" + string_at(e, {"value"}));
      prepare_pod_root(rt.root, cr.working_dir);
      rt.containers.push_back(std::move(cr));
    }
  state.pods[{rt.ns, rt.name}] = std::move(rt);
}

ObjectPtr create_pod(State& state, json::Document pod, const std::string& ns) {
  set_string(pod, "apiVersion", "v1", pod.GetAllocator());
  set_string(pod, "kind", "Pod", pod.GetAllocator());
  default_metadata(pod, ns);
  default_pod(pod);
  ObjectPtr stored = state.store.put(pod_type(), std::move(pod));
  kubelet_adopt(state, *stored);
  return stored;
}

void kubelet_tick(State& state) {
  const auto now = Clock::now();
  for (auto it = state.pods.begin(); it != state.pods.end();) {
    PodRuntime& rt = it->second;
    if (rt.deleting) {
      if (!any_alive(rt) || now >= rt.kill_at) {
        remove_pod(state, rt);
        it = state.pods.erase(it);
        continue;
      }
      ++it;
      continue;
    }
    step(state, rt);
    if (ObjectPtr pod = pod_object(state, rt); pod && !rt.node.empty() && rt.stage != Stage::finished) {
      if (auto deadline = int_at(*pod, {"spec", "activeDeadlineSeconds"});
          deadline && now >= rt.started_at + std::chrono::seconds(*deadline))
        fail_pod(state, rt, "DeadlineExceeded", "Pod was active on the node longer than the specified deadline");
    }
    ++it;
  }
  agent_sandbox_tick(state);
}

void kubelet_delete(State& state, const std::string& ns, const std::string& name, long grace_seconds) {
  auto it = state.pods.find({ns, name});
  ObjectPtr pod = state.store.get(pod_type(), ns, name);
  if (!pod) return;
  // A pod no node runs, or one that has finished, goes at once whatever the grace period.
  const bool immediate = grace_seconds <= 0 || it == state.pods.end() || it->second.node.empty() ||
                         it->second.stage == Stage::finished;
  if (immediate) {
    if (it != state.pods.end()) {
      remove_pod(state, it->second);
      state.pods.erase(it);
    } else {
      state.store.remove(pod_type(), ns, name);
    }
    return;
  }
  PodRuntime& rt = it->second;
  if (rt.deleting) return;
  const auto now = Clock::now();
  json::Document updated = copy_of(*pod);
  json::Value& meta = object_member(updated, "metadata", updated.GetAllocator());
  set_string(meta, "deletionTimestamp", rfc3339(now + std::chrono::seconds(grace_seconds)), updated.GetAllocator());
  set_member(meta, "deletionGracePeriodSeconds", json::Value(static_cast<int64_t>(grace_seconds)), updated.GetAllocator());
  state.store.put(pod_type(), std::move(updated));
  rt.deleting = true;
  rt.kill_at = now + std::chrono::seconds(grace_seconds);
  for (const auto& c : rt.containers)
    if (c.running) event(state, rt, kubelet_source(rt.node), "Normal", "Killing", "Stopping container " + c.name, c.name);
  signal_groups(rt, SIGTERM);
}

bool kubelet_evict(State& state, const std::string& ns, const std::string& name, ExecEnding ending) {
  auto it = state.pods.find({ns, name});
  if (it == state.pods.end() || it->second.node.empty() || it->second.stage == Stage::finished) return false;
  PodRuntime& rt = it->second;
  if (ending == ExecEnding::dropped)
    for (auto& weak : rt.exec_links)
      if (auto link = weak.lock()) link->drop();
  fail_pod(state, rt, "Evicted",
           "The node was low on resource: memory. Threshold quantity: 100Mi, available: 42Mi. Container " +
               (rt.containers.empty() ? std::string("main") : rt.containers[0].name) +
               " was using 3Gi, request is 0, has larger consumption of memory. ");
  return true;
}

void kubelet_kill_all(State& state) {
  for (auto& [key, rt] : state.pods) signal_groups(rt, SIGKILL);
}

}  // namespace corral::kubernetes::standin
