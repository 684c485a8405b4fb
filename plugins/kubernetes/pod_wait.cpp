#include "pod_wait.hpp"

#include <chrono>

#include "api_answers.hpp"
#include "api_errors.hpp"
#include "corral/sdk/printable.hpp"
#include "corral/sdk/http.hpp"
#include "pod.hpp"
#include "spec.hpp"

namespace corral::kubernetes {
namespace {

using Clock = std::chrono::steady_clock;

// Thrown from the watch's body callback to end the stream once the Pod is Ready.
struct PodReady {};

bool is_pull_failure(const std::string& reason) {
  return reason == "ErrImagePull" || reason == "ImagePullBackOff" || reason == "InvalidImageName" ||
         reason == "ErrImageNeverPull";
}

bool is_start_failure(const std::string& reason) {
  return reason == "CrashLoopBackOff" || reason == "CreateContainerConfigError" || reason == "RunContainerError" ||
         reason == "CreateContainerError";
}

const json::Value* condition(const json::Value& status, const char* type) {
  const json::Value* conditions = json::find(status, "conditions");
  if (!conditions || !conditions->IsArray()) return nullptr;
  for (const json::Value& c : conditions->GetArray())
    if (json::get_string(c, "type") == type) return &c;
  return nullptr;
}

// The message of the latest Warning event about Pod `name`, or "".
std::string latest_warning(Api& api, const std::string& ns, const std::string& name, const sdk::Host& host) {
  try {
    Call call;
    call.path =
        "/api/v1/namespaces/" + ns + "/events?fieldSelector=" + sdk::http::url_encode("involvedObject.name=" + name);
    call.what = "Kubernetes list the Pod's events";
    sdk::http::Response r = api.send(call, host);
    if (!r.ok()) return {};
    json::Document doc = json::parse(r.body, "events");
    const json::Value* items = json::find(doc, "items");
    std::string message;
    if (items && items->IsArray())
      for (const json::Value& e : items->GetArray())
        if (json::get_string(e, "type") == "Warning")
          message = sdk::printable(json::get_string(e, "reason") + ": " + json::get_string(e, "message"));
    return message;
  } catch (const Error&) {
    return {};  // the events only add to the message
  }
}

}  // namespace

PodProgress progress_of(const json::Value& pod, const std::string& image) {
  PodProgress p;
  const json::Value* status = json::find(pod, "status");
  if (!status) {
    p.why = "Pending";
    return p;
  }
  // The server's words, on one line: they go into messages.
  auto text = [](const json::Value& v, const char* key, const char* fallback = "") {
    return sdk::printable(json::get_string(v, key, fallback));
  };
  const std::string phase = text(*status, "phase", "Pending");
  if (phase == "Failed" || phase == "Succeeded") {
    p.kind = PodProgress::Kind::failed;
    p.why = "the Pod ended (" + phase;
    if (std::string reason = text(*status, "reason"); !reason.empty()) p.why += ", " + reason;
    if (std::string message = text(*status, "message"); !message.empty()) p.why += ": " + message;
    p.why += ")";
    return p;
  }
  if (const json::Value* containers = json::find(*status, "containerStatuses"); containers && containers->IsArray())
    for (const json::Value& c : containers->GetArray()) {
      const json::Value* state = json::find(c, "state");
      const json::Value* waiting = state ? json::find(*state, "waiting") : nullptr;
      if (!waiting) continue;
      const std::string reason = text(*waiting, "reason");
      const std::string message = text(*waiting, "message");
      if (is_pull_failure(reason)) {
        p.kind = PodProgress::Kind::failed;
        p.code = ErrorCode::not_found;
        p.why = "image '" + image + "' cannot be pulled (" + reason + (message.empty() ? "" : ": " + message) + ")";
        return p;
      }
      if (is_start_failure(reason)) {
        p.kind = PodProgress::Kind::failed;
        p.why = "its container cannot start (" + reason + (message.empty() ? "" : ": " + message) + ")";
        return p;
      }
      if (!reason.empty()) p.why = phase + ", container " + reason;
    }
  if (const json::Value* ready = condition(*status, "Ready"); ready && json::get_string(*ready, "status") == "True") {
    p.kind = PodProgress::Kind::ready;
    return p;
  }
  if (const json::Value* scheduled = condition(*status, "PodScheduled");
      scheduled && json::get_string(*scheduled, "status") == "False") {
    p.why = "Pending, not scheduled (" + text(*scheduled, "reason") + ": " + text(*scheduled, "message") + ")";
    return p;
  }
  if (p.why.empty()) p.why = phase == "Running" ? "Running, not Ready yet" : phase;
  return p;
}

void wait_until_ready(Api& api, const std::string& ns, const std::string& name, const std::string& image,
                      std::int64_t timeout_seconds, const std::string& timeout_setting, const sdk::Host& host) {
  const auto deadline = Clock::now() + std::chrono::seconds(timeout_seconds);
  std::string last = "Pending";
  std::string resource_version;
  bool gone = false;
  // Reads what `pod`, a Pod object in `answer` (answer_to's words), says, noting its
  // resourceVersion; throws when it failed, PodReady when it is Ready.
  auto judge = [&](const json::Value& pod, const std::string& what, const std::string& answer) {
    PodProgress p = read_as(pod, what, answer, "Pod", [&](const json::Value& v) {
      if (const json::Value* meta = json::find(v, "metadata"))
        resource_version = json::get_string(*meta, "resourceVersion", resource_version);
      return progress_of(v, image);
    });
    if (p.kind == PodProgress::Kind::ready) throw PodReady{};
    if (p.kind == PodProgress::Kind::failed)
      throw Error(p.code, "Kubernetes Pod " + name + " did not start: " + p.why,
                  p.code == ErrorCode::not_found
                      ? "check " + identity().settings.either("image") +
                            ": the nodes must be able to pull it (name, tag, registry credentials)"
                      : "see `kubectl describe pod` for the Pod's events");
    last = p.why;
  };
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::seconds>(deadline - Clock::now()).count();
    if (left <= 0) break;
    if (resource_version.empty()) {
      // A fresh read: the first round, or after the watch said its version is too old.
      Call call;
      call.path = pods_path(ns, name);
      call.what = "Kubernetes read Pod " + name;
      sdk::http::Response r = api.send(call, host);
      if (r.status == 404) {
        gone = true;
        break;
      }
      if (!r.ok()) throw api_error(r, call.what);
      json::Document pod = parse_answer(r, call, "Pod");
      try {
        judge(pod, call.what, answer_to(call));
      } catch (const PodReady&) {
        return;
      }
    }
    Call watch;
    watch.path =
        pods_path(ns) +
        "?watch=true&allowWatchBookmarks=true&fieldSelector=" + sdk::http::url_encode("metadata.name=" + name) +
        "&resourceVersion=" + sdk::http::url_encode(resource_version) + "&timeoutSeconds=" + std::to_string(left);
    watch.what = "Kubernetes watch Pod " + name;
    const std::string event_of = "an event of " + answer_to(watch);
    std::string pending;
    bool too_old = false;
    auto on_body = [&](std::string_view chunk) {
      pending.append(chunk);
      for (size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
        const std::string line = pending.substr(0, nl);
        pending.erase(0, nl + 1);
        if (line.empty()) continue;
        json::Document event;
        try {
          event = json::parse(line, "the event");
        } catch (const Error& e) {
          throw not_a(watch.what, event_of, "WatchEvent", e.what());
        }
        const auto [type, object] = read_as(event, watch.what, event_of, "WatchEvent", [](const json::Value& v) {
          const json::Value* o = json::find(v, "object");
          if (o && !o->IsObject()) throw Error(ErrorCode::invalid_argument, "its object is not a JSON object");
          return std::pair(json::get_string(v, "type"), o);
        });
        if (!object) continue;
        if (type == "ERROR") {
          const auto [code, message] = read_as(*object, watch.what, event_of, "Status", [](const json::Value& v) {
            return std::pair(json::get_int(v, "code"), json::get_string(v, "message"));
          });
          too_old = code == 410;
          if (!too_old)
            throw Error(ErrorCode::unavailable, watch.what + ": " + sdk::printable(message));
          continue;
        }
        if (type == "DELETED") {
          gone = true;
          throw PodReady{};  // ends the stream; `gone` says why
        }
        if (type == "BOOKMARK") {
          read_as(*object, watch.what, event_of, "Pod", [&](const json::Value& v) {
            if (const json::Value* meta = json::find(v, "metadata"))
              resource_version = json::get_string(*meta, "resourceVersion", resource_version);
            return 0;
          });
          continue;
        }
        judge(*object, watch.what, event_of);
      }
      // A line without end is no event: what a server sends past the bound is not kept.
      if (pending.size() > kMaxAnswerBytes)
        throw sdk::http::unexpected_answer(watch.what, "a watch event is longer than " +
                                                           std::to_string(kMaxAnswerBytes / (1024 * 1024)) +
                                                           " MiB, the most corral reads of one");
    };
    sdk::http::Response r;
    try {
      r = api.stream(
          watch.path, static_cast<long>(left) + 5, on_body, [&] { return host.cancelled(); }, watch.what);
    } catch (const PodReady&) {
      if (gone) break;
      return;
    } catch (const sdk::http::ConnectionBroken&) {
      resource_version.clear();  // read it again and watch on
      continue;
    }
    if (r.status == 410)
      too_old = true;
    else if (!r.ok())
      throw api_error(r, watch.what);
    if (too_old) resource_version.clear();
  }
  if (gone)
    throw Error(ErrorCode::not_found, "Kubernetes Pod " + name + " was deleted while it started",
                "someone or something (a controller, a quota) deleted it; run again");
  std::string why = last;
  if (std::string warning = latest_warning(api, ns, name, host); !warning.empty()) why += "; last event: " + warning;
  throw Error(ErrorCode::unavailable,
              "Kubernetes Pod " + name + " was not Ready within " + format_duration(timeout_seconds) + ": " + why,
              "raise " + timeout_setting +
                  " if the cluster is just slow (a large image, a node scaling up); an "
                  "unschedulable Pod needs smaller " +
                  identity().settings.flag("cpu") + "/" + identity().settings.flag("memory") + ", another " +
                  identity().settings.flag("node-selector") + ", or more nodes");
}

}  // namespace corral::kubernetes
