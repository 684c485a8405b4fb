#include "pod_admission.hpp"

#include <climits>
#include <set>

#include "names.hpp"
#include "quantity.hpp"

namespace corral::kubernetes::standin {
namespace {

using T = FieldError::Type;

// "cpu", "memory", ... of `map` ({"requests": {...}}) with their text.
std::map<std::string, std::string> quantities(const json::Value* map) {
  std::map<std::string, std::string> out;
  if (map && map->IsObject())
    for (const auto& m : map->GetObject()) {
      if (m.value.IsString()) out[m.name.GetString()] = m.value.GetString();
      else if (m.value.IsNumber()) out[m.name.GetString()] = corral::json::dump(m.value);
    }
  return out;
}

bool has_tag_or_digest(const std::string& image) {
  if (image.find('@') != std::string::npos) return true;
  const size_t slash = image.rfind('/');
  return image.find(':', slash == std::string::npos ? 0 : slash) != std::string::npos;
}

void validate_resources(const json::Value& container, const std::string& path, std::vector<FieldError>& out) {
  const json::Value* resources = json::find(container, "resources");
  if (!resources) return;
  auto requests = quantities(json::find(*resources, "requests"));
  auto limits = quantities(json::find(*resources, "limits"));
  for (const auto* group : {&requests, &limits})
    for (const auto& [name, text] : *group) {
      const std::string where = path + ".resources." + (group == &requests ? "requests" : "limits") + "[" + name + "]";
      if (name != "cpu" && name != "memory" && name != "ephemeral-storage" && name.rfind("hugepages-", 0) != 0 &&
          name.find('/') == std::string::npos)
        out.push_back({T::invalid, where, go_quote(name), "must be a standard resource type or fully qualified"});
      auto value = parse_quantity(text);
      if (!value) out.push_back({T::invalid, where, go_quote(text), kQuantityFormatError});
      else if (*value < 0) out.push_back({T::invalid, where, go_quote(text), "must be greater than or equal to 0"});
    }
  for (const auto& [name, text] : requests) {
    auto limit = limits.find(name);
    if (limit == limits.end()) continue;
    auto r = parse_quantity(text), l = parse_quantity(limit->second);
    if (r && l && *r > *l)
      out.push_back({T::invalid, path + ".resources.requests", go_quote(text),
                     "must be less than or equal to " + name + " limit of " + limit->second});
  }
}

void default_container(json::Value& c, Allocator& a) {
  if (!json::find(c, "terminationMessagePath")) set_string(c, "terminationMessagePath", "/dev/termination-log", a);
  if (!json::find(c, "terminationMessagePolicy")) set_string(c, "terminationMessagePolicy", "File", a);
  const std::string image = string_at(c, {"image"});
  if (!json::find(c, "imagePullPolicy")) {
    const bool latest = !has_tag_or_digest(image) || (image.size() >= 7 && image.substr(image.size() - 7) == ":latest");
    set_string(c, "imagePullPolicy", latest ? "Always" : "IfNotPresent", a);
  }
  json::Value& resources = object_member(c, "resources", a);
  // Requests default to the limits a container sets without requests.
  if (const json::Value* limits = json::find(resources, "limits"); limits && limits->IsObject()) {
    json::Value& requests = object_member(resources, "requests", a);
    for (const auto& m : limits->GetObject())
      if (!json::find(requests, m.name.GetString()))
        requests.AddMember(json::Value(m.name, a), json::Value(m.value, a), a);
  }
}

}  // namespace

std::string normalized_image(const std::string& image) {
  std::string out = image;
  const size_t slash = out.find('/');
  const std::string first = slash == std::string::npos ? "" : out.substr(0, slash);
  if (slash == std::string::npos) out = "docker.io/library/" + out;
  else if (first.find('.') == std::string::npos && first.find(':') == std::string::npos && first != "localhost")
    out = "docker.io/" + out;
  if (!has_tag_or_digest(out)) out += ":latest";
  return out;
}

std::string qos_class(const json::Value& pod) {
  const json::Value* containers = at(pod, {"spec", "containers"});
  if (!containers || !containers->IsArray()) return "BestEffort";
  bool any = false, guaranteed = true;
  for (const auto& c : containers->GetArray()) {
    auto requests = quantities(at(c, {"resources", "requests"}));
    auto limits = quantities(at(c, {"resources", "limits"}));
    if (!requests.empty() || !limits.empty()) any = true;
    for (const char* r : {"cpu", "memory"}) {
      auto l = limits.find(r);
      auto q = requests.find(r);
      if (l == limits.end() || (q != requests.end() && parse_quantity(q->second) != parse_quantity(l->second)))
        guaranteed = false;
    }
  }
  if (!any) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

Requests requests_of(const json::Value& pod) {
  Requests total;
  const json::Value* containers = at(pod, {"spec", "containers"});
  if (!containers || !containers->IsArray()) return total;
  for (const auto& c : containers->GetArray()) {
    auto requests = quantities(at(c, {"resources", "requests"}));
    if (auto cpu = requests.find("cpu"); cpu != requests.end()) total.cpu += parse_quantity(cpu->second).value_or(0);
    if (auto mem = requests.find("memory"); mem != requests.end()) total.memory += parse_quantity(mem->second).value_or(0);
  }
  return total;
}

void default_pod(json::Document& pod) {
  auto& a = pod.GetAllocator();
  json::Value& spec = object_member(pod, "spec", a);
  auto set_default = [&](const char* key, json::Value value) {
    if (!json::find(spec, key)) set_member(spec, key, std::move(value), a);
  };
  set_default("restartPolicy", string_value("Always", a));
  set_default("terminationGracePeriodSeconds", json::Value(30));
  set_default("dnsPolicy", string_value("ClusterFirst", a));
  set_default("securityContext", json::Value(rapidjson::kObjectType));
  set_default("schedulerName", string_value("default-scheduler", a));
  set_default("serviceAccountName", string_value(string_at(spec, {"serviceAccount"}, "default"), a));
  set_member(spec, "serviceAccount", string_value(string_at(spec, {"serviceAccountName"}), a), a);
  set_default("enableServiceLinks", json::Value(true));
  set_default("priority", json::Value(0));
  set_default("preemptionPolicy", string_value("PreemptLowerPriority", a));
  if (!json::find(spec, "tolerations")) {
    json::Value tolerations(rapidjson::kArrayType);
    for (const char* key : {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}) {
      json::Value t(rapidjson::kObjectType);
      set_string(t, "key", key, a);
      set_string(t, "operator", "Exists", a);
      set_string(t, "effect", "NoExecute", a);
      set_member(t, "tolerationSeconds", json::Value(300), a);
      tolerations.PushBack(t, a);
    }
    set_member(spec, "tolerations", std::move(tolerations), a);
  }
  const json::Value* automount = json::find(spec, "automountServiceAccountToken");
  const bool mount_token = !(automount && automount->IsBool() && !automount->GetBool());
  const std::string volume = "kube-api-access-" + random_suffix(5);
  if (mount_token) {
    // The ServiceAccount admission plug-in's projected volume: token, ca.crt, namespace.
    json::Document v;
    v.Parse((R"({"name":")" + volume + R"(","projected":{"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},)"
             R"({"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},)"
             R"({"downwardAPI":{"items":[{"path":"namespace","fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"}}]}}],)"
             R"("defaultMode":420}})").c_str());
    json::Value& volumes = spec.HasMember("volumes") && spec["volumes"].IsArray()
                               ? spec["volumes"]
                               : (set_member(spec, "volumes", json::Value(rapidjson::kArrayType), a), spec["volumes"]);
    volumes.PushBack(json::Value(v, a), a);
  }
  if (json::Value* containers = spec.HasMember("containers") ? &spec["containers"] : nullptr; containers && containers->IsArray())
    for (auto& c : containers->GetArray()) {
      if (!c.IsObject()) continue;
      default_container(c, a);
      if (mount_token) {
        json::Value mount(rapidjson::kObjectType);
        set_string(mount, "name", volume, a);
        set_member(mount, "readOnly", json::Value(true), a);
        set_string(mount, "mountPath", "/var/run/secrets/kubernetes.io/serviceaccount", a);
        if (!c.HasMember("volumeMounts") || !c["volumeMounts"].IsArray())
          set_member(c, "volumeMounts", json::Value(rapidjson::kArrayType), a);
        c["volumeMounts"].PushBack(mount, a);
      }
    }
  json::Value status(rapidjson::kObjectType);
  set_string(status, "phase", "Pending", a);
  set_string(status, "qosClass", qos_class(pod), a);
  set_member(pod, "status", std::move(status), a);
}

std::vector<FieldError> validate_pod(const json::Value& pod) {
  std::vector<FieldError> out;
  const json::Value* containers = at(pod, {"spec", "containers"});
  if (!containers || !containers->IsArray() || containers->Empty()) {
    out.push_back({T::required, "spec.containers", "", ""});
  } else {
    std::set<std::string> names;
    for (rapidjson::SizeType i = 0; i < containers->Size(); ++i) {
      const json::Value& c = (*containers)[i];
      const std::string path = "spec.containers[" + std::to_string(i) + "]";
      const std::string name = string_at(c, {"name"});
      if (name.empty()) out.push_back({T::required, path + ".name", "", ""});
      else {
        for (const auto& e : dns1123_label_errors(name)) out.push_back({T::invalid, path + ".name", go_quote(name), e});
        if (!names.insert(name).second) out.push_back({T::duplicate, path + ".name", go_quote(name), ""});
      }
      const std::string image = string_at(c, {"image"});
      if (image.empty()) out.push_back({T::required, path + ".image", "", ""});
      else if (image.front() == ' ' || image.back() == ' ')
        out.push_back({T::invalid, path + ".image", go_quote(image), "must not have leading or trailing whitespace"});
      validate_resources(c, path, out);
    }
  }
  const std::string restart = string_at(pod, {"spec", "restartPolicy"});
  if (!restart.empty() && restart != "Always" && restart != "OnFailure" && restart != "Never")
    out.push_back({T::not_supported, "spec.restartPolicy", go_quote(restart),
                   "supported values: \"Always\", \"OnFailure\", \"Never\""});
  if (auto deadline = int_at(pod, {"spec", "activeDeadlineSeconds"}); deadline && (*deadline < 1 || *deadline > INT_MAX))
    out.push_back({T::invalid, "spec.activeDeadlineSeconds", std::to_string(*deadline),
                   "must be between 1 and 2147483647, inclusive"});
  const std::string account = string_at(pod, {"spec", "serviceAccountName"});
  for (const auto& e : dns1123_subdomain_errors(account))
    out.push_back({T::invalid, "spec.serviceAccountName", go_quote(account), e});
  for (const auto& [key, value] : labels_at(pod, {"spec", "nodeSelector"})) {
    for (const auto& e : qualified_name_errors(key)) out.push_back({T::invalid, "spec.nodeSelector", go_quote(key), e});
    for (const auto& e : label_value_errors(value)) out.push_back({T::invalid, "spec.nodeSelector", go_quote(value), e});
  }
  return out;
}

std::vector<FieldError> validate_pod_update(const json::Value& old_pod, const json::Value& new_pod) {
  std::vector<FieldError> out;
  const auto old_deadline = int_at(old_pod, {"spec", "activeDeadlineSeconds"});
  const auto new_deadline = int_at(new_pod, {"spec", "activeDeadlineSeconds"});
  if (new_deadline) {
    if (*new_deadline < 0 || *new_deadline > INT_MAX) {
      out.push_back({T::invalid, "spec.activeDeadlineSeconds", std::to_string(*new_deadline),
                     "must be between 0 and 2147483647, inclusive"});
      return out;
    }
    if (old_deadline && *old_deadline < *new_deadline) {
      out.push_back({T::invalid, "spec.activeDeadlineSeconds", std::to_string(*new_deadline),
                     "must be less than or equal to previous value"});
      return out;
    }
  } else if (old_deadline) {
    out.push_back({T::invalid, "spec.activeDeadlineSeconds", "null", "must not update from a positive integer to nil value"});
  }
  const json::Value* old_containers = at(old_pod, {"spec", "containers"});
  const json::Value* new_containers = at(new_pod, {"spec", "containers"});
  if (!old_containers || !new_containers || !new_containers->IsArray() || !old_containers->IsArray() ||
      old_containers->Size() != new_containers->Size()) {
    out.push_back({T::forbidden, "spec.containers", "", "pod updates may not add or remove containers"});
    return out;
  }
  // Everything else of the spec must be as it was, once the fields that may change are
  // set back to their old values (the munging ValidatePodUpdate does).
  json::Document munged = copy_of(*json::find(new_pod, "spec"));
  auto& a = munged.GetAllocator();
  const json::Value& old_spec = *json::find(old_pod, "spec");
  for (rapidjson::SizeType i = 0; i < munged["containers"].Size(); ++i)
    if (munged["containers"][i].IsObject())
      set_member(munged["containers"][i], "image", json::Value(old_spec["containers"][i]["image"], a), a);
  for (const char* key : {"activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds"}) {
    if (const json::Value* was = json::find(old_spec, key)) set_member(munged, key, json::Value(*was, a), a);
    else remove_member(munged, key);
  }
  if (munged != old_spec)
    out.push_back({T::forbidden, "spec", "",
                   "pod updates may not change fields other than `spec.containers[*].image`,"
                   "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions "
                   "to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
                   "previously negative)"});
  for (rapidjson::SizeType i = 0; i < new_containers->Size(); ++i)
    if (string_at((*new_containers)[i], {"image"}).empty())
      out.push_back({T::required, "spec.containers[" + std::to_string(i) + "].image", "", ""});
  return out;
}

}  // namespace corral::kubernetes::standin
