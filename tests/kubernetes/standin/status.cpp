#include "status.hpp"

#include "corral/json.hpp"

namespace corral::kubernetes::standin {
namespace {

using corral::json::Writer;

void write_causes(Writer& w, const std::vector<StatusCause>& causes) {
  w.Key("causes");
  w.StartArray();
  for (const auto& c : causes) {
    w.StartObject();
    if (!c.type.empty()) json::write_string(w, "reason", c.type);
    if (!c.message.empty()) json::write_string(w, "message", c.message);
    if (!c.field.empty()) json::write_string(w, "field", c.field);
    w.EndObject();
  }
  w.EndArray();
}

// "[a, b]" for several errors, the one error alone otherwise (utilerrors.NewAggregate).
std::string aggregate(const std::vector<FieldError>& errors) {
  if (errors.size() == 1) return errors[0].text();
  std::string out = "[";
  for (size_t i = 0; i < errors.size(); ++i) out += (i ? ", " : "") + errors[i].text();
  return out + "]";
}

}  // namespace

std::string FieldError::body() const {
  switch (type) {
    case Type::required: return "Required value" + (detail.empty() ? "" : ": " + detail);
    case Type::forbidden: return "Forbidden" + (detail.empty() ? "" : ": " + detail);
    case Type::duplicate: return "Duplicate value: " + value;
    case Type::not_supported: return "Unsupported value: " + value + (detail.empty() ? "" : ": " + detail);
    case Type::too_long: return "Too long: " + detail;
    case Type::type_invalid: return "Invalid value: " + value + ": " + detail;
    case Type::invalid: break;
  }
  return "Invalid value: " + value + (detail.empty() ? "" : ": " + detail);
}

std::string FieldError::text() const { return field + ": " + body(); }

const char* FieldError::cause_type() const {
  switch (type) {
    case Type::required: return "FieldValueRequired";
    case Type::forbidden: return "FieldValueForbidden";
    case Type::duplicate: return "FieldValueDuplicate";
    case Type::not_supported: return "FieldValueNotSupported";
    case Type::too_long: return "FieldValueTooLong";
    case Type::type_invalid: return "FieldValueTypeInvalid";
    case Type::invalid: break;
  }
  return "FieldValueInvalid";
}

std::string ApiError::json(bool type_meta) const {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  if (type_meta) {
    json::write_string(w, "kind", "Status");
    json::write_string(w, "apiVersion", "v1");
  }
  w.Key("metadata");
  w.StartObject();
  w.EndObject();
  json::write_string(w, "status", "Failure");
  json::write_string(w, "message", message);
  json::write_string(w, "reason", reason);
  if (has_details()) {
    w.Key("details");
    w.StartObject();
    if (!name.empty()) json::write_string(w, "name", name);
    if (!group.empty()) json::write_string(w, "group", group);
    if (!kind.empty()) json::write_string(w, "kind", kind);
    if (!causes.empty()) write_causes(w, causes);
    if (retry_after_seconds) {
      w.Key("retryAfterSeconds");
      w.Int(retry_after_seconds);
    }
    w.EndObject();
  }
  if (code) {
    w.Key("code");
    w.Int(code);
  }
  w.EndObject();
  return buffer.GetString();
}

ApiError not_found(const GroupResource& gr, const std::string& name) {
  return {404, "NotFound", gr.qualified() + " \"" + name + "\" not found", name, gr.group, gr.resource};
}

ApiError already_exists(const GroupResource& gr, const std::string& name) {
  return {409, "AlreadyExists", gr.qualified() + " \"" + name + "\" already exists", name, gr.group, gr.resource};
}

ApiError conflict(const GroupResource& gr, const std::string& name, const std::string& detail) {
  return {409, "Conflict", "Operation cannot be fulfilled on " + gr.qualified() + " \"" + name + "\": " + detail, name,
          gr.group, gr.resource};
}

ApiError invalid(const std::string& group, const std::string& kind, const std::string& name,
                 const std::vector<FieldError>& errors) {
  ApiError e{422, "Invalid", kind + " \"" + name + "\" is invalid: " + aggregate(errors), name, group, kind};
  for (const auto& f : errors) e.causes.push_back({f.cause_type(), f.body(), f.field});
  return e;
}

ApiError bad_request(const std::string& message) { return {400, "BadRequest", message}; }

ApiError unauthorized() { return {401, "Unauthorized", "Unauthorized"}; }

ApiError forbidden(const std::string& user, const std::string& verb, const GroupResource& gr,
                   const std::string& subresource, const std::string& ns, const std::string& name) {
  const std::string resource = gr.resource + (subresource.empty() ? "" : "/" + subresource);
  std::string why = "User \"" + user + "\" cannot " + verb + " resource \"" + resource + "\" in API group \"" +
                    gr.group + "\"" + (ns.empty() ? " at the cluster scope" : " in the namespace \"" + ns + "\"");
  std::string subject = name.empty() ? gr.qualified() : gr.qualified() + " \"" + name + "\"";
  return {403, "Forbidden", subject + " is forbidden: " + why, name, gr.group, gr.resource};
}

ApiError too_many_requests(int retry_after_seconds) {
  ApiError e{429, "TooManyRequests", "Too many requests, please try again later."};
  e.retry_after_seconds = retry_after_seconds;
  return e;
}

ApiError internal_error(const std::string& message) {
  ApiError e{500, "InternalError", "Internal error occurred: " + message};
  e.causes.push_back({"", message, ""});
  return e;
}

ApiError expired(const std::string& message) { return {410, "Expired", message}; }

ApiError method_not_allowed(const GroupResource& gr, const std::string& verb) {
  return {405, "MethodNotAllowed", verb + " is not supported on resources of kind \"" + gr.qualified() + "\"", "",
          gr.group, gr.resource};
}

ApiError unsupported_media_type(const std::string& accepted) {
  return {415, "UnsupportedMediaType",
          "the body of the request was in an unknown format - accepted media types include: " + accepted};
}

std::string exec_exit_status(int exit_code, const std::vector<std::string>& command, const std::string& cause) {
  if (exit_code == 0) return R"({"metadata":{},"status":"Success"})";
  // containerd's streaming exec reports "error executing command [argv], exit code N"; the
  // kubelet prefixes it, and gives no code.
  std::string argv;
  for (const auto& arg : command) argv += (argv.empty() ? "" : " ") + arg;
  ApiError e{0, "NonZeroExitCode",
             "command terminated with non-zero exit code: error executing command [" + argv + "], exit code " +
                 std::to_string(exit_code)};
  e.causes.push_back({"ExitCode", cause.empty() ? std::to_string(exit_code) : cause, ""});
  return e.json(false);
}

std::string exec_error_status(const std::string& message) { return internal_error(message).json(false); }

}  // namespace corral::kubernetes::standin
