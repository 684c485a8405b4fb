#include "api_errors.hpp"

#include "corral/json.hpp"
#include "corral/sdk/remote/error_table.hpp"
#include "spec.hpp"

namespace corral::kubernetes {

std::string status_reason(const sdk::http::Response& response) {
  try {
    json::Document doc = json::parse(response.body, "Status");
    return json::get_string(doc, "reason");
  } catch (const Error&) {
    return {};
  }
}

Error api_error(const sdk::http::Response& response, const std::string& what) {
  static const std::string pod_settings = "the cluster refused the Pod's settings; check " +
                                          identity().settings.flag("image") + ", " +
                                          identity().settings.flag("cpu") + ", " + identity().settings.flag("memory") +
                                          " and " + identity().settings.flag("node-selector");
  static const sdk::remote::ErrorTable table{
      .rate_limit = "the API server's rate limit (API Priority and Fairness)",
      .rate_limit_advice = "ask the cluster's administrators for a higher priority level for this user",
      .rows = {{401, 401,
                "the cluster refused the credentials of the kubeconfig's user: log in again (your cloud's CLI "
                "refreshes them), or check the token with `kubectl auth whoami`"},
               {403, 403,
                "the user needs a Role granting pods (create, get, list, watch, delete), pods/exec (create, get), "
                "events (list) and networkpolicies in the namespace; docs/providers/kubernetes.md has one ready to "
                "apply"},
               {422, 422, pod_settings},
               {500, sdk::remote::kLastStatus, "the API server is having trouble; retry in a moment"}}};
  return sdk::remote::table_error(table, response, what);
}

}  // namespace corral::kubernetes
