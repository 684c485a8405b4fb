// metav1.Status: how the API server reports every failure (and how exec reports an exit
// status), with the reasons, messages and details the real one gives, so clients that
// branch on them (client-go's IsNotFound, IsConflict, retry on 429) behave as they would.
#pragma once

#include <string>
#include <vector>

namespace corral::kubernetes::standin {

// A resource with its API group: "pods" (group ""), "networkpolicies.networking.k8s.io".
struct GroupResource {
  std::string group;
  std::string resource;
  std::string qualified() const { return group.empty() ? resource : resource + "." + group; }
};

// One validation error as k8s.io/apimachinery/pkg/util/validation/field reports it.
struct FieldError {
  enum class Type { required, invalid, not_supported, forbidden, duplicate, type_invalid, too_long };
  Type type = Type::invalid;
  std::string field;   // "spec.containers[0].image"
  std::string value;   // rendered as Go prints it: "\"abc\"", "3601"; unused for required
  std::string detail;  // what is wrong
  // "Invalid value: \"abc\": must be ..." (ErrorBody)
  std::string body() const;
  // "spec.x: Invalid value: ..." (Error)
  std::string text() const;
  // StatusCause.reason: FieldValueRequired, FieldValueInvalid, ...
  const char* cause_type() const;
};

struct StatusCause {
  std::string type;  // serialised as "reason"
  std::string message;
  std::string field;
};

// A metav1.Status of status Failure.
struct ApiError {
  int code = 500;
  std::string reason;
  std::string message;
  std::string name;   // details.name
  std::string group;  // details.group
  std::string kind;   // details.kind
  std::vector<StatusCause> causes;
  int retry_after_seconds = 0;  // details.retryAfterSeconds and the Retry-After header
  bool has_details() const { return !name.empty() || !group.empty() || !kind.empty() || !causes.empty() || retry_after_seconds; }
  // The Status JSON: with kind and apiVersion, as every REST answer carries it, or without
  // (`type_meta` false), as the exec status channel carries it. A code of 0 is left out.
  std::string json(bool type_meta = true) const;
};

ApiError not_found(const GroupResource& gr, const std::string& name);
ApiError already_exists(const GroupResource& gr, const std::string& name);
// 409 Conflict: "Operation cannot be fulfilled on pods \"x\": <detail>".
ApiError conflict(const GroupResource& gr, const std::string& name, const std::string& detail);
// 422 Invalid: "Pod \"x\" is invalid: <errors>".
ApiError invalid(const std::string& group, const std::string& kind, const std::string& name,
                 const std::vector<FieldError>& errors);
ApiError bad_request(const std::string& message);
ApiError unauthorized();
// 403 for `user` asking to `verb` `resource` (with subresource, "pods/exec").
ApiError forbidden(const std::string& user, const std::string& verb, const GroupResource& gr,
                   const std::string& subresource, const std::string& ns, const std::string& name);
ApiError too_many_requests(int retry_after_seconds);
ApiError internal_error(const std::string& message);
// 410 Expired: a resourceVersion older than the server keeps.
ApiError expired(const std::string& message);
ApiError method_not_allowed(const GroupResource& gr, const std::string& verb);
// 415: a body in a format the call does not take; `accepted` lists those it does.
ApiError unsupported_media_type(const std::string& accepted);

// The exec status channel's Status (no kind or apiVersion, as the kubelet writes it):
// Success for exit 0, NonZeroExitCode with an ExitCode cause otherwise, its message the
// code or `cause` when given (the exec_exit_cause fault).
std::string exec_exit_status(int exit_code, const std::vector<std::string>& command, const std::string& cause = {});
// The exec status channel's Status for a command that could not run at all (InternalError).
std::string exec_error_status(const std::string& message);

}  // namespace corral::kubernetes::standin
