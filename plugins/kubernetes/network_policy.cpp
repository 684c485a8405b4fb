#include "network_policy.hpp"

#include "corral/json.hpp"

namespace corral::kubernetes {
namespace {

// An address or CIDR as an ipBlock's cidr: a single address becomes /32 or /128.
std::string cidr_of(const std::string& entry) {
  if (entry.find('/') != std::string::npos) return entry;
  return entry + (entry.find(':') != std::string::npos ? "/128" : "/32");
}

}  // namespace

std::string network_policies_path(const std::string& ns, const std::string& name) {
  std::string path = "/apis/networking.k8s.io/v1/namespaces/" + ns + "/networkpolicies";
  if (!name.empty()) path += "/" + name;
  return path;
}

std::string network_policy_manifest(const NetworkPolicy& policy, const std::string& ns, const std::string& pod,
                                    const std::string& pod_uid) {
  for (const std::string& entry : policy.allow)
    if (!is_ip_or_cidr(entry))
      throw Error(ErrorCode::invalid_argument,
                  "the kubernetes provider cannot allow the domain '" + entry +
                      "': a NetworkPolicy allows address blocks (ipBlock), not names",
                  "allow the addresses or CIDRs the domain resolves to instead (--network allow:203.0.113.0/24)");
  rapidjson::StringBuffer buf;
  json::Writer w(buf);
  w.StartObject();
  json::write_string(w, "apiVersion", "networking.k8s.io/v1");
  json::write_string(w, "kind", "NetworkPolicy");
  json::write_key(w, "metadata");
  w.StartObject();
  json::write_string(w, "name", pod);
  json::write_string(w, "namespace", ns);
  json::write_map(w, "labels", {{"app.kubernetes.io/managed-by", "corral"}});
  json::write_key(w, "ownerReferences");
  w.StartArray();
  w.StartObject();
  json::write_string(w, "apiVersion", "v1");
  json::write_string(w, "kind", "Pod");
  json::write_string(w, "name", pod);
  json::write_string(w, "uid", pod_uid);
  w.EndObject();
  w.EndArray();
  w.EndObject();
  json::write_key(w, "spec");
  w.StartObject();
  json::write_key(w, "podSelector");
  w.StartObject();
  json::write_map(w, "matchLabels", {{kSandboxLabel, pod}});
  w.EndObject();
  json::write_strings(w, "policyTypes", {"Egress"});
  json::write_key(w, "egress");
  w.StartArray();
  if (!policy.allow.empty()) {
    w.StartObject();
    json::write_key(w, "to");
    w.StartArray();
    for (const std::string& entry : policy.allow) {
      w.StartObject();
      json::write_key(w, "ipBlock");
      w.StartObject();
      json::write_string(w, "cidr", cidr_of(entry));
      w.EndObject();
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.EndObject();
  return buf.GetString();
}

}  // namespace corral::kubernetes
