#include "agent_sandbox.hpp"

#include "admission.hpp"
#include "kubelet.hpp"

namespace corral::kubernetes::standin {
namespace {

json::Value owner_reference(const json::Value& owner, Allocator& a) {
  json::Value ref(rapidjson::kObjectType);
  set_string(ref, "apiVersion", string_at(owner, {"apiVersion"}), a);
  set_string(ref, "kind", string_at(owner, {"kind"}), a);
  set_string(ref, "name", string_at(owner, {"metadata", "name"}), a);
  set_string(ref, "uid", string_at(owner, {"metadata", "uid"}), a);
  set_member(ref, "controller", json::Value(true), a);
  set_member(ref, "blockOwnerDeletion", json::Value(true), a);
  return ref;
}

void set_owner(json::Value& meta, const json::Value& owner, Allocator& a) {
  json::Value refs(rapidjson::kArrayType);
  refs.PushBack(owner_reference(owner, a), a);
  set_member(meta, "ownerReferences", std::move(refs), a);
}

bool pod_ready(const json::Value& pod) {
  const json::Value* conditions = at(pod, {"status", "conditions"});
  if (!conditions || !conditions->IsArray()) return false;
  for (const auto& c : conditions->GetArray())
    if (string_at(c, {"type"}) == "Ready") return string_at(c, {"status"}) == "True";
  return false;
}

bool deleting(const json::Value& object) { return at(object, {"metadata", "deletionTimestamp"}) != nullptr; }

// A Pod from a template's podTemplate ({metadata: {labels, annotations}, spec}).
json::Document pod_from(const json::Value& pod_template, const std::string& name, const json::Value& owner,
                        const Labels& extra_labels) {
  json::Document pod(rapidjson::kObjectType);
  auto& a = pod.GetAllocator();
  json::Value& meta = object_member(pod, "metadata", a);
  set_string(meta, "name", name, a);
  json::Value& labels = object_member(meta, "labels", a);
  for (const auto& [k, v] : labels_at(pod_template, {"metadata", "labels"})) set_string(labels, k.c_str(), v, a);
  for (const auto& [k, v] : extra_labels) set_string(labels, k.c_str(), v, a);
  json::Value& annotations = object_member(meta, "annotations", a);
  for (const auto& [k, v] : labels_at(pod_template, {"metadata", "annotations"})) set_string(annotations, k.c_str(), v, a);
  set_owner(meta, owner, a);
  if (const json::Value* spec = json::find(pod_template, "spec")) set_member(pod, "spec", json::Value(*spec, a), a);
  // The controller's secure default when the template does not say.
  json::Value& spec = object_member(pod, "spec", a);
  if (!json::find(spec, "automountServiceAccountToken")) set_member(spec, "automountServiceAccountToken", json::Value(false), a);
  return pod;
}

// Replaces `object`'s status.conditions entry of `type` (metav1.Condition), keeping its
// lastTransitionTime when the status did not change.
void set_condition(json::Value& status, const json::Value* previous, const std::string& type, bool ok,
                   const std::string& reason, const std::string& message, Allocator& a) {
  std::string since = rfc3339(Clock::now());
  if (previous && previous->IsArray())
    for (const auto& c : previous->GetArray())
      if (string_at(c, {"type"}) == type && string_at(c, {"status"}) == (ok ? "True" : "False"))
        since = string_at(c, {"lastTransitionTime"}, since);
  json::Value conditions(rapidjson::kArrayType);
  json::Value c(rapidjson::kObjectType);
  set_string(c, "type", type, a);
  set_string(c, "status", ok ? "True" : "False", a);
  set_member(c, "observedGeneration", json::Value(1), a);
  set_string(c, "lastTransitionTime", since, a);
  set_string(c, "reason", reason, a);
  set_string(c, "message", message, a);
  conditions.PushBack(c, a);
  set_member(status, "conditions", std::move(conditions), a);
}

// Stores `updated` when its status differs from `current`'s.
void put_if_changed(State& s, const ResourceType& type, const ObjectPtr& current, json::Document updated) {
  const json::Value* before = json::find(*current, "status");
  const json::Value* after = json::find(updated, "status");
  if (before && after && *before == *after && json::find(*current, "metadata") &&
      (*current)["metadata"] == updated["metadata"])
    return;
  s.store.put(type, std::move(updated));
}

json::Document new_object(const ResourceType& type, const std::string& ns, const std::string& name) {
  json::Document o(rapidjson::kObjectType);
  auto& a = o.GetAllocator();
  set_string(o, "apiVersion", type.api_version(), a);
  set_string(o, "kind", type.kind, a);
  set_string(object_member(o, "metadata", a), "name", name, a);
  default_metadata(o, ns);
  return o;
}

void reconcile_warm_pool(State& s, const ObjectPtr& pool) {
  const std::string ns = string_at(*pool, {"metadata", "namespace"});
  const std::string name = string_at(*pool, {"metadata", "name"});
  const long replicas = int_at(*pool, {"spec", "replicas"}).value_or(1);
  ObjectPtr tmpl = s.store.get(sandbox_template_type(), ns, string_at(*pool, {"spec", "sandboxTemplateRef", "name"}));
  std::vector<ObjectPtr> warm;
  for (const auto& pod : s.store.list(pod_type(), ns))
    if (!deleting(*pod) && labels_of(*pod).count(kWarmPoolLabel) && labels_of(*pod).at(kWarmPoolLabel) == name)
      warm.push_back(pod);
  if (tmpl)
    for (long i = static_cast<long>(warm.size()); i < replicas; ++i) {
      const json::Value* pod_template = at(*tmpl, {"spec", "podTemplate"});
      if (!pod_template) break;
      warm.push_back(create_pod(s, pod_from(*pod_template, name + "-" + random_suffix(5), *pool, {{kWarmPoolLabel, name}}), ns));
    }
  while (static_cast<long>(warm.size()) > replicas) {
    kubelet_delete(s, ns, string_at(*warm.back(), {"metadata", "name"}), 0);
    warm.pop_back();
  }
  long ready = 0;
  for (const auto& pod : warm) ready += pod_ready(*pod) ? 1 : 0;
  json::Document updated = copy_of(*pool);
  auto& a = updated.GetAllocator();
  json::Value status(rapidjson::kObjectType);
  set_member(status, "replicas", json::Value(static_cast<int>(warm.size())), a);
  set_member(status, "readyReplicas", json::Value(static_cast<int>(ready)), a);
  set_string(status, "selector", std::string(kWarmPoolLabel) + "=" + name, a);
  set_member(updated, "status", std::move(status), a);
  put_if_changed(s, warm_pool_type(), pool, std::move(updated));
}

void reconcile_sandbox(State& s, const ObjectPtr& sandbox) {
  if (deleting(*sandbox)) return;
  const std::string ns = string_at(*sandbox, {"metadata", "namespace"});
  const std::string name = string_at(*sandbox, {"metadata", "name"});
  const std::string pod_name = string_at(*sandbox, {"metadata", "annotations", kPodNameAnnotation}, name);
  ObjectPtr pod = s.store.get(pod_type(), ns, pod_name);
  if (!pod && pod_name == name) {
    if (const json::Value* pod_template = at(*sandbox, {"spec", "podTemplate"}))
      pod = create_pod(s, pod_from(*pod_template, name, *sandbox, {}), ns);
  }
  json::Document updated = copy_of(*sandbox);
  auto& a = updated.GetAllocator();
  json::Value status(rapidjson::kObjectType);
  const json::Value* previous = at(*sandbox, {"status", "conditions"});
  if (!pod) {
    set_condition(status, previous, "Ready", false, "DependenciesNotReady", "Pod " + pod_name + " does not exist", a);
  } else {
    const bool ready = pod_ready(*pod);
    const std::string phase = string_at(*pod, {"status", "phase"});
    set_condition(status, previous, "Ready", ready, ready ? "DependenciesReady" : "DependenciesNotReady",
                  ready ? "Pod is Ready" : "Pod exists with phase: " + phase, a);
    if (const std::string node = string_at(*pod, {"spec", "nodeName"}); !node.empty()) set_string(status, "nodeName", node, a);
    if (const std::string ip = string_at(*pod, {"status", "podIP"}); !ip.empty()) {
      json::Value ips(rapidjson::kArrayType);
      ips.PushBack(string_value(ip, a), a);
      set_member(status, "podIPs", std::move(ips), a);
    }
  }
  set_member(updated, "status", std::move(status), a);
  put_if_changed(s, sandbox_type(), sandbox, std::move(updated));
}

void reconcile_claim(State& s, const ObjectPtr& claim) {
  if (deleting(*claim)) return;
  const std::string ns = string_at(*claim, {"metadata", "namespace"});
  const std::string name = string_at(*claim, {"metadata", "name"});
  const std::string pool_name = string_at(*claim, {"spec", "warmPoolRef", "name"});
  json::Document updated = copy_of(*claim);
  auto& a = updated.GetAllocator();
  json::Value status(rapidjson::kObjectType);
  const json::Value* previous = at(*claim, {"status", "conditions"});
  std::string sandbox_name = string_at(*claim, {"status", "sandbox", "name"});
  ObjectPtr sandbox = sandbox_name.empty() ? nullptr : s.store.get(sandbox_type(), ns, sandbox_name);
  ObjectPtr pool = s.store.get(warm_pool_type(), ns, pool_name);
  if (!sandbox) {
    ObjectPtr tmpl = pool ? s.store.get(sandbox_template_type(), ns, string_at(*pool, {"spec", "sandboxTemplateRef", "name"})) : nullptr;
    if (!pool) {
      set_condition(status, previous, "Ready", false, "WarmPoolNotFound", "SandboxWarmPool \"" + pool_name + "\" not found", a);
    } else if (!tmpl) {
      set_condition(status, previous, "Ready", false, "TemplateNotFound",
                    "SandboxTemplate \"" + string_at(*pool, {"spec", "sandboxTemplateRef", "name"}) + "\" not found", a);
    } else {
      json::Document sb = new_object(sandbox_type(), ns, name);
      auto& sa = sb.GetAllocator();
      set_owner(object_member(sb, "metadata", sa), *claim, sa);
      json::Value& spec = object_member(sb, "spec", sa);
      set_member(spec, "podTemplate", json::Value((*tmpl)["spec"]["podTemplate"], sa), sa);
      // Adopt a ready warm pod of the pool when there is one.
      for (const auto& pod : s.store.list(pod_type(), ns)) {
        const Labels labels = labels_of(*pod);
        auto warm = labels.find(kWarmPoolLabel);
        if (warm == labels.end() || warm->second != pool_name || deleting(*pod) || !pod_ready(*pod)) continue;
        set_string(object_member(object_member(sb, "metadata", sa), "annotations", sa), kPodNameAnnotation,
                   string_at(*pod, {"metadata", "name"}), sa);
        break;
      }
      ObjectPtr stored = s.store.put(sandbox_type(), std::move(sb));
      const std::string adopted = string_at(*stored, {"metadata", "annotations", kPodNameAnnotation});
      if (ObjectPtr pod = adopted.empty() ? nullptr : s.store.get(pod_type(), ns, adopted)) {
        json::Document p = copy_of(*pod);
        auto& pa = p.GetAllocator();
        json::Value& meta = object_member(p, "metadata", pa);
        json::Value& labels = object_member(meta, "labels", pa);
        labels.RemoveMember(kWarmPoolLabel);
        set_string(labels, kClaimUidLabel, string_at(*claim, {"metadata", "uid"}), pa);
        set_owner(meta, *stored, pa);
        s.store.put(pod_type(), std::move(p));
      }
      sandbox = stored;
      sandbox_name = name;
    }
  }
  if (sandbox) {
    json::Value& sandbox_status = object_member(status, "sandbox", a);
    set_string(sandbox_status, "name", sandbox_name, a);
    if (const json::Value* ips = at(*sandbox, {"status", "podIPs"})) set_member(sandbox_status, "podIPs", json::Value(*ips, a), a);
    const json::Value* conditions = at(*sandbox, {"status", "conditions"});
    bool forwarded = false;
    if (conditions && conditions->IsArray())
      for (const auto& c : conditions->GetArray())
        if (string_at(c, {"type"}) == "Ready") {
          json::Value list(rapidjson::kArrayType);
          list.PushBack(json::Value(c, a), a);
          set_member(status, "conditions", std::move(list), a);
          forwarded = true;
        }
    if (!forwarded) set_condition(status, previous, "Ready", false, "SandboxNotReady", "Sandbox is not ready", a);
  }
  set_member(updated, "status", std::move(status), a);
  put_if_changed(s, claim_type(), claim, std::move(updated));
}

// Whether the owner an ownerReference names still exists.
bool owner_exists(const State& s, const std::string& ns, const json::Value& ref) {
  const std::string kind = string_at(ref, {"kind"});
  for (const auto& type : resource_types()) {
    if (type.kind != kind) continue;
    ObjectPtr owner = s.store.get(type, ns, string_at(ref, {"name"}));
    return owner && string_at(*owner, {"metadata", "uid"}) == string_at(ref, {"uid"});
  }
  return true;  // an owner of a kind the stand-in does not serve: never collected
}

bool orphaned(const State& s, const json::Value& object) {
  const json::Value* refs = at(object, {"metadata", "ownerReferences"});
  if (!refs || !refs->IsArray() || refs->Empty()) return false;
  const std::string ns = string_at(object, {"metadata", "namespace"});
  for (const auto& ref : refs->GetArray())
    if (owner_exists(s, ns, ref)) return false;
  return true;
}

void collect_garbage(State& s) {
  for (const auto& sandbox : s.store.list(sandbox_type(), ""))
    if (orphaned(s, *sandbox))
      s.store.remove(sandbox_type(), string_at(*sandbox, {"metadata", "namespace"}), string_at(*sandbox, {"metadata", "name"}));
  for (const auto& pod : s.store.list(pod_type(), ""))
    if (!deleting(*pod) && orphaned(s, *pod))
      kubelet_delete(s, string_at(*pod, {"metadata", "namespace"}), string_at(*pod, {"metadata", "name"}),
                     int_at(*pod, {"spec", "terminationGracePeriodSeconds"}).value_or(30));
}

}  // namespace

void agent_sandbox_tick(State& state) {
  collect_garbage(state);
  for (const auto& pool : state.store.list(warm_pool_type(), "")) reconcile_warm_pool(state, pool);
  for (const auto& claim : state.store.list(claim_type(), "")) reconcile_claim(state, claim);
  for (const auto& sandbox : state.store.list(sandbox_type(), "")) reconcile_sandbox(state, sandbox);
}

}  // namespace corral::kubernetes::standin
