#include "api_errors.hpp"

#include "corral/json.hpp"
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
  std::string hint;
  switch (response.status) {
    case 401:
      hint =
          "the cluster refused the credentials of the kubeconfig's user: log in again (your cloud's CLI "
          "refreshes them), or check the token with `kubectl auth whoami`";
      break;
    case 403:
      hint =
          "the user needs a Role granting pods (create, get, list, watch, delete), pods/exec (create, get), events "
          "(list) "
          "and networkpolicies in the namespace; docs/providers/kubernetes.md has one ready to apply";
      break;
    case 429:
      return sdk::http::rate_limited(response, what, "the API server's rate limit (API Priority and Fairness)",
                                     sdk::http::error_message(response.body),
                                     "ask the cluster's administrators for a higher priority level for this user");
    case 422:
      hint = "the cluster refused the Pod's settings; check " + identity().settings.flag("image") + ", " +
             identity().settings.flag("cpu") + ", " + identity().settings.flag("memory") + " and " +
             identity().settings.flag("node-selector");
      break;
    default:
      if (response.status >= 500) hint = "the API server is having trouble; retry in a moment";
      break;
  }
  return sdk::http::status_error(response, what, hint);
}

}  // namespace corral::kubernetes
