#include "pod_status.hpp"

#include <openssl/sha.h>

#include "pod_admission.hpp"

namespace corral::kubernetes::standin {
namespace {

using Stage = PodRuntime::Stage;

json::Value condition(const char* type, bool status, Clock::time_point since, const std::string& reason,
                      const std::string& message, Allocator& a) {
  json::Value c(rapidjson::kObjectType);
  set_string(c, "type", type, a);
  set_string(c, "status", status ? "True" : "False", a);
  set_member(c, "lastProbeTime", json::Value(), a);
  set_string(c, "lastTransitionTime", rfc3339(since), a);
  if (!reason.empty()) set_string(c, "reason", reason, a);
  if (!message.empty()) set_string(c, "message", message, a);
  return c;
}

// "sha256:..." of an image's name: a stable, made-up digest.
std::string digest_of(const std::string& image) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(image.data()), image.size(), md);
  std::string hex;
  char b[3];
  for (unsigned char c : md) {
    std::snprintf(b, sizeof b, "%02x", c);
    hex += b;
  }
  return hex;
}

std::string image_id(const std::string& image) {
  std::string repo = normalized_image(image);
  const size_t at = repo.find('@');
  if (at != std::string::npos) return repo;
  const size_t colon = repo.rfind(':');
  const size_t slash = repo.rfind('/');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) repo = repo.substr(0, colon);
  return repo + "@sha256:" + digest_of(normalized_image(image));
}

bool pulled(const PodRuntime& rt) { return rt.stage == Stage::creating || rt.stage == Stage::running || rt.stage == Stage::finished; }

json::Value terminated(const ContainerRuntime& c, Allocator& a) {
  json::Value t(rapidjson::kObjectType);
  set_member(t, "exitCode", json::Value(*c.exit_code), a);
  set_string(t, "reason", c.term_reason, a);
  if (!c.term_message.empty()) set_string(t, "message", c.term_message, a);
  set_string(t, "startedAt", rfc3339(c.started_at), a);
  set_string(t, "finishedAt", rfc3339(c.finished_at), a);
  if (!c.container_id.empty()) set_string(t, "containerID", c.container_id, a);
  return t;
}

json::Value container_status(const PodRuntime& rt, const ContainerRuntime& c, Allocator& a) {
  json::Value s(rapidjson::kObjectType);
  set_string(s, "name", c.name, a);
  json::Value state(rapidjson::kObjectType), last(rapidjson::kObjectType);
  auto waiting = [&](const std::string& reason, const std::string& message) {
    json::Value w(rapidjson::kObjectType);
    set_string(w, "reason", reason, a);
    if (!message.empty()) set_string(w, "message", message, a);
    set_member(state, "waiting", std::move(w), a);
  };
  bool started = false, ready = false;
  if (rt.stage == Stage::pull_failed) {
    waiting(rt.image_backoff ? "ImagePullBackOff" : "ErrImagePull",
            rt.image_backoff ? "Back-off pulling image \"" + c.image + "\": ErrImagePull: " + rt.image_error : rt.image_error);
  } else if (rt.stage == Stage::pulling || rt.stage == Stage::creating) {
    waiting("ContainerCreating", "");
  } else if (c.running) {
    json::Value r(rapidjson::kObjectType);
    set_string(r, "startedAt", rfc3339(c.started_at), a);
    set_member(state, "running", std::move(r), a);
    if (c.exit_code) set_member(last, "terminated", terminated(c, a), a);
    started = true;
    ready = rt.ready && rt.stage == Stage::running;
  } else if (c.restart_at && rt.stage == Stage::running) {
    waiting("CrashLoopBackOff", "back-off 10s restarting failed container=" + c.name + " pod=" + rt.name + "_" + rt.ns +
                                    "(" + rt.uid + ")");
    if (c.exit_code) set_member(last, "terminated", terminated(c, a), a);
  } else if (c.exit_code) {
    set_member(state, "terminated", terminated(c, a), a);
  } else {
    waiting("ContainerCreating", "");
  }
  set_member(s, "state", std::move(state), a);
  set_member(s, "lastState", std::move(last), a);
  set_member(s, "ready", json::Value(ready), a);
  set_member(s, "restartCount", json::Value(c.restarts), a);
  set_string(s, "image", pulled(rt) ? normalized_image(c.image) : c.image, a);
  set_string(s, "imageID", pulled(rt) ? image_id(c.image) : "", a);
  if (!c.container_id.empty()) set_string(s, "containerID", c.container_id, a);
  set_member(s, "started", json::Value(started), a);
  return s;
}

std::string unready_list(const PodRuntime& rt) {
  std::string names;
  for (const auto& c : rt.containers)
    if (!(c.running && rt.ready)) names += (names.empty() ? "" : " ") + c.name;
  return "[" + names + "]";
}

}  // namespace

std::string pod_phase(const PodRuntime& rt) {
  if (rt.stage == Stage::running) return "Running";
  if (rt.stage != Stage::finished) return "Pending";
  if (!rt.reason.empty()) return "Failed";
  for (const auto& c : rt.containers)
    if (!c.exit_code || *c.exit_code != 0) return "Failed";
  return "Succeeded";
}

void write_pod_status(json::Document& pod, const PodRuntime& rt) {
  auto& a = pod.GetAllocator();
  if (!rt.node.empty()) set_string(object_member(pod, "spec", a), "nodeName", rt.node, a);
  json::Value status(rapidjson::kObjectType);
  const std::string phase = pod_phase(rt);
  set_string(status, "phase", phase, a);
  if (!rt.reason.empty()) set_string(status, "reason", rt.reason, a);
  if (!rt.message.empty()) set_string(status, "message", rt.message, a);
  json::Value conditions(rapidjson::kArrayType);
  if (rt.node.empty()) {
    conditions.PushBack(condition("PodScheduled", false, rt.created, rt.unschedulable.empty() ? "" : "Unschedulable",
                                  rt.unschedulable, a),
                        a);
  } else {
    const bool finished = rt.stage == Stage::finished;
    if (rt.reason == "Evicted")
      conditions.PushBack(condition("DisruptionTarget", true, rt.ready_changed_at, "TerminationByKubelet", rt.message, a), a);
    conditions.PushBack(condition("PodReadyToStartContainers", !finished, rt.scheduled_at, "", "", a), a);
    conditions.PushBack(condition("Initialized", true, rt.scheduled_at, "", "", a), a);
    const bool ready = rt.ready && rt.stage == Stage::running;
    const std::string why = finished ? "PodCompleted" : ready ? "" : "ContainersNotReady";
    const std::string what = ready || finished ? "" : "containers with unready status: " + unready_list(rt);
    conditions.PushBack(condition("Ready", ready, rt.ready_changed_at, why, what, a), a);
    conditions.PushBack(condition("ContainersReady", ready, rt.ready_changed_at, why, what, a), a);
    conditions.PushBack(condition("PodScheduled", true, rt.scheduled_at, "", "", a), a);
  }
  set_member(status, "conditions", std::move(conditions), a);
  if (!rt.host_ip.empty()) {
    set_string(status, "hostIP", rt.host_ip, a);
    json::Value ips(rapidjson::kArrayType), ip(rapidjson::kObjectType);
    set_string(ip, "ip", rt.host_ip, a);
    ips.PushBack(ip, a);
    set_member(status, "hostIPs", std::move(ips), a);
  }
  if (!rt.pod_ip.empty() && rt.stage != Stage::finished) {
    set_string(status, "podIP", rt.pod_ip, a);
    json::Value ips(rapidjson::kArrayType), ip(rapidjson::kObjectType);
    set_string(ip, "ip", rt.pod_ip, a);
    ips.PushBack(ip, a);
    set_member(status, "podIPs", std::move(ips), a);
  }
  if (!rt.node.empty()) {
    set_string(status, "startTime", rfc3339(rt.started_at), a);
    json::Value statuses(rapidjson::kArrayType);
    for (const auto& c : rt.containers) statuses.PushBack(container_status(rt, c, a), a);
    set_member(status, "containerStatuses", std::move(statuses), a);
  }
  set_string(status, "qosClass", qos_class(pod), a);
  set_member(pod, "status", std::move(status), a);
}

}  // namespace corral::kubernetes::standin
