// The resources the stand-in serves, with what discovery and the REST paths say of each:
// core/v1 pods, events and namespaces, networking.k8s.io/v1 networkpolicies, and the
// agent-sandbox CRDs (agents.x-k8s.io and extensions.agents.x-k8s.io, v1beta1).
#pragma once

#include <string>
#include <vector>

#include "status.hpp"

namespace corral::kubernetes::standin {

struct ResourceType {
  std::string group;
  std::string version;
  std::string resource;  // plural, as in the path
  std::string singular;
  std::string kind;
  bool namespaced = true;
  std::string schema;       // its OpenAPI schema name
  std::string list_schema;  // its list's
  std::vector<std::string> short_names;
  std::vector<std::string> verbs;
  std::vector<std::string> subresources;  // "exec", "status"

  std::string api_version() const { return group.empty() ? version : group + "/" + version; }
  GroupResource group_resource() const { return {group, resource}; }
  // The key objects of this type are stored under ("pods", "networkpolicies.networking.k8s.io").
  std::string key() const { return group_resource().qualified(); }
};

const std::vector<ResourceType>& resource_types();
// The type served at /api[s]/`group`/`version`/.../`resource`, or nullptr.
const ResourceType* find_resource(const std::string& group, const std::string& version, const std::string& resource);
const ResourceType& pod_type();
const ResourceType& event_type();
const ResourceType& namespace_type();
const ResourceType& network_policy_type();
const ResourceType& sandbox_type();
const ResourceType& sandbox_template_type();
const ResourceType& warm_pool_type();
const ResourceType& claim_type();

}  // namespace corral::kubernetes::standin
