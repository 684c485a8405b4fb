#include "resources.hpp"

#include <stdexcept>

namespace corral::kubernetes::standin {
namespace {

const std::vector<std::string> kAllVerbs = {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"};

std::vector<ResourceType> make_types() {
  const std::string core = "io.k8s.api.core.v1.";
  const std::string net = "io.k8s.api.networking.v1.";
  const std::string agents = "io.x-k8s.agents.v1beta1.";
  const std::string ext = "io.x-k8s.agents.extensions.v1beta1.";
  return {
      {"", "v1", "pods", "pod", "Pod", true, core + "Pod", core + "PodList", {"po"}, kAllVerbs, {"exec", "status"}},
      {"", "v1", "events", "event", "Event", true, core + "Event", core + "EventList", {"ev"}, kAllVerbs, {}},
      {"", "v1", "namespaces", "namespace", "Namespace", false, core + "Namespace", core + "NamespaceList", {"ns"},
       {"create", "delete", "get", "list", "patch", "update", "watch"}, {}},
      {"networking.k8s.io", "v1", "networkpolicies", "networkpolicy", "NetworkPolicy", true, net + "NetworkPolicy",
       net + "NetworkPolicyList", {"netpol"}, kAllVerbs, {}},
      {"agents.x-k8s.io", "v1beta1", "sandboxes", "sandbox", "Sandbox", true, agents + "Sandbox", agents + "SandboxList",
       {"sandbox"}, kAllVerbs, {"status"}},
      {"extensions.agents.x-k8s.io", "v1beta1", "sandboxtemplates", "sandboxtemplate", "SandboxTemplate", true,
       ext + "SandboxTemplate", ext + "SandboxTemplateList", {"sandboxtemplate"}, kAllVerbs, {}},
      {"extensions.agents.x-k8s.io", "v1beta1", "sandboxwarmpools", "sandboxwarmpool", "SandboxWarmPool", true,
       ext + "SandboxWarmPool", ext + "SandboxWarmPoolList", {"swp"}, kAllVerbs, {"status"}},
      {"extensions.agents.x-k8s.io", "v1beta1", "sandboxclaims", "sandboxclaim", "SandboxClaim", true,
       ext + "SandboxClaim", ext + "SandboxClaimList", {"sandboxclaim"}, kAllVerbs, {"status"}},
  };
}

const ResourceType& by_resource(const char* resource) {
  for (const auto& t : resource_types())
    if (t.resource == resource) return t;
  throw std::logic_error(resource);
}

}  // namespace

const std::vector<ResourceType>& resource_types() {
  static const std::vector<ResourceType> types = make_types();
  return types;
}

const ResourceType* find_resource(const std::string& group, const std::string& version, const std::string& resource) {
  for (const auto& t : resource_types())
    if (t.group == group && t.version == version && t.resource == resource) return &t;
  return nullptr;
}

const ResourceType& pod_type() { return by_resource("pods"); }
const ResourceType& event_type() { return by_resource("events"); }
const ResourceType& namespace_type() { return by_resource("namespaces"); }
const ResourceType& network_policy_type() { return by_resource("networkpolicies"); }
const ResourceType& sandbox_type() { return by_resource("sandboxes"); }
const ResourceType& sandbox_template_type() { return by_resource("sandboxtemplates"); }
const ResourceType& warm_pool_type() { return by_resource("sandboxwarmpools"); }
const ResourceType& claim_type() { return by_resource("sandboxclaims"); }

}  // namespace corral::kubernetes::standin
