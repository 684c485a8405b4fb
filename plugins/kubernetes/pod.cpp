#include "pod.hpp"

#include <algorithm>
#include <cctype>

#include "command_line.hpp"
#include "corral/sdk/http.hpp"
#include "corral/os/random.hpp"
#include "network_policy.hpp"

namespace corral::kubernetes {
namespace {

void write_labels(json::Writer& w, const StringMap& labels, const std::string& name) {
  json::write_key(w, "labels");
  w.StartObject();
  json::write_string(w, kSandboxLabel, name);
  for (const auto& [key, value] : labels)
    if (is_label_text(key, true) && is_label_text(value, false) && key != kSandboxLabel)
      json::write_string(w, key.c_str(), value);
  json::write_string(w, "app.kubernetes.io/managed-by", "corral");
  w.EndObject();
}

std::string labels_json(const StringMap& labels) {
  rapidjson::StringBuffer buf;
  json::Writer w(buf);
  w.StartObject();
  for (const auto& [key, value] : labels) json::write_string(w, key.c_str(), value);
  w.EndObject();
  return buf.GetString();
}

}  // namespace

bool is_label_text(const std::string& text, bool key) {
  if (text.empty()) return !key;
  std::string name = text;
  if (key) {
    const size_t slash = text.find('/');
    if (slash != std::string::npos) {
      const std::string prefix = text.substr(0, slash);
      if (prefix.empty() || prefix.size() > 253) return false;
      for (char c : prefix)
        if (!std::islower(static_cast<unsigned char>(c)) && !std::isdigit(static_cast<unsigned char>(c)) && c != '-' &&
            c != '.')
          return false;
      name = text.substr(slash + 1);
    }
  }
  if (name.empty() || name.size() > 63) return false;
  if (!std::isalnum(static_cast<unsigned char>(name.front())) || !std::isalnum(static_cast<unsigned char>(name.back())))
    return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

void check_name(const std::string& name, const char* what) {
  bool ok = !name.empty() && name.size() <= 63 && std::isalnum(static_cast<unsigned char>(name.front())) &&
            std::isalnum(static_cast<unsigned char>(name.back()));
  for (char c : name)
    ok = ok && ((c >= 'a' && c <= 'z') || std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.');
  if (!ok) throw Error(ErrorCode::invalid_argument, "'" + name + "' is not a Kubernetes " + what + " name");
}

std::string pods_path(const std::string& ns, const std::string& name) {
  std::string path = "/api/v1/namespaces/" + ns + "/pods";
  if (!name.empty()) path += "/" + name;
  return path;
}

std::string new_pod_name() { return "corral-" + os::random_hex(6); }

void write_metadata(json::Writer& w, const std::string& name, const std::string& ns, const StringMap& labels,
                    const StringMap& annotations) {
  w.StartObject();
  json::write_string(w, "name", name);
  json::write_string(w, "namespace", ns);
  write_labels(w, labels, name);
  StringMap all = annotations;
  all[kLabelsAnnotation] = labels_json(labels);
  json::write_map(w, "annotations", all);
  w.EndObject();
}

std::string pod_manifest(const Settings& settings, const std::string& name, const std::string& ns,
                         const StringMap& labels, const StringMap& annotations) {
  rapidjson::StringBuffer buf;
  json::Writer w(buf);
  w.StartObject();
  json::write_string(w, "apiVersion", "v1");
  json::write_string(w, "kind", "Pod");
  json::write_key(w, "metadata");
  write_metadata(w, name, ns, labels, annotations);

  json::write_key(w, "spec");
  w.StartObject();
  json::write_string(w, "restartPolicy", "Never");
  // The hard end, whatever happens to corral; the lifetime proper is the keep-alive loop's.
  json::write_key(w, "activeDeadlineSeconds");
  w.Int64(std::max(settings.lifetime_seconds, settings.max_lifetime_seconds));
  json::write_key(w, "terminationGracePeriodSeconds");
  w.Int64(5);
  // Commands in the sandbox get no credentials to the cluster unless an account is asked for.
  json::write_key(w, "automountServiceAccountToken");
  w.Bool(!settings.service_account.empty());
  if (!settings.service_account.empty()) json::write_string(w, "serviceAccountName", settings.service_account);
  if (!settings.node_selector.empty()) json::write_map(w, "nodeSelector", settings.node_selector);
  json::write_key(w, "containers");
  w.StartArray();
  w.StartObject();
  json::write_string(w, "name", kContainer);
  json::write_string(w, "image", settings.image);
  json::write_strings(w, "command", {"/bin/sh", "-c", keep_alive_script()});
  json::write_key(w, "env");
  w.StartArray();
  w.StartObject();
  json::write_string(w, "name", "CORRAL_WORKDIR");
  json::write_string(w, "value", settings.workdir);
  w.EndObject();
  w.StartObject();
  json::write_string(w, "name", "CORRAL_LIFETIME");
  json::write_string(w, "value", std::to_string(settings.lifetime_seconds));
  w.EndObject();
  w.EndArray();
  if (!settings.cpu.empty() || !settings.memory.empty()) {
    StringMap amounts;
    if (!settings.cpu.empty()) amounts["cpu"] = settings.cpu;
    if (!settings.memory.empty()) amounts["memory"] = settings.memory;
    json::write_key(w, "resources");
    w.StartObject();
    json::write_map(w, "requests", amounts);
    json::write_map(w, "limits", amounts);
    w.EndObject();
  }
  w.EndObject();
  w.EndArray();
  w.EndObject();
  w.EndObject();
  return buf.GetString();
}

std::string label_selector(const StringMap& labels) {
  std::string selector;
  for (const auto& [key, value] : labels) {
    if (!is_label_text(key, true) || !is_label_text(value, false)) continue;
    if (!selector.empty()) selector += ",";
    selector += key + "=" + value;
  }
  return sdk::http::url_encode(selector);
}

Sandbox sandbox_of(const json::Value& pod, const std::string& workdir) {
  Sandbox s;
  const json::Value* meta = json::find(pod, "metadata");
  const json::Value* status = json::find(pod, "status");
  const json::Value* spec = json::find(pod, "spec");
  if (!pod.IsObject()) throw Error(ErrorCode::invalid_argument, "it is not a JSON object");
  if (!meta) throw Error(ErrorCode::invalid_argument, "metadata is missing");
  if (!meta->IsObject()) throw Error(ErrorCode::invalid_argument, "metadata is not an object");
  s.id = json::get_string(*meta, "name");
  if (s.id.empty()) throw Error(ErrorCode::invalid_argument, "metadata.name is missing");
  std::string phase = status ? json::get_string(*status, "phase", "Pending") : "Pending";
  for (char& c : phase) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  s.state = json::find(*meta, "deletionTimestamp") ? "terminating" : phase;
  const json::Value* annotations = json::find(*meta, "annotations");
  const std::string stored = annotations ? json::get_string(*annotations, kLabelsAnnotation) : "";
  if (!stored.empty()) {
    try {
      json::Document doc = json::parse(stored, "labels annotation");
      if (doc.IsObject())
        for (const auto& member : doc.GetObject())
          if (member.value.IsString()) s.labels[member.name.GetString()] = member.value.GetString();
    } catch (const Error&) {
      s.labels.clear();  // not corral's: listed by nobody
    }
  }
  s.details["namespace"] = json::get_string(*meta, "namespace");
  if (annotations) {
    if (std::string network = json::get_string(*annotations, kNetworkAnnotation); !network.empty())
      s.details["network"] = network;
    if (std::string claim = json::get_string(*annotations, kClaimAnnotation); !claim.empty())
      s.details["claim"] = claim;
  }
  s.details["workdir"] = workdir;
  if (spec) {
    if (const json::Value* deadline = json::find(*spec, "activeDeadlineSeconds"); deadline && deadline->IsInt64())
      s.details["activeDeadlineSeconds"] = std::to_string(deadline->GetInt64());
    if (std::string node = json::get_string(*spec, "nodeName"); !node.empty()) s.details["node"] = node;
    if (const json::Value* containers = json::find(*spec, "containers");
        containers && containers->IsArray() && !containers->Empty()) {
      s.details["image"] = json::get_string((*containers)[0], "image");
      s.details["container"] = json::get_string((*containers)[0], "name");
    }
  }
  if (status) {
    if (std::string start = json::get_string(*status, "startTime"); !start.empty()) s.details["startedAt"] = start;
    if (std::string reason = json::get_string(*status, "reason"); !reason.empty()) s.details["reason"] = reason;
  }
  return s;
}

}  // namespace corral::kubernetes
