#include "api.hpp"

#include <cctype>
#include <mutex>

#include "api_internal.hpp"

namespace corral::kubernetes::standin {
namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  for (size_t at = 0; at < path.size();) {
    size_t slash = path.find('/', at);
    if (slash == std::string::npos) slash = path.size();
    if (slash > at) out.push_back(path.substr(at, slash - at));
    at = slash + 1;
  }
  return out;
}

ApiError path_not_found() {
  ApiError e{404, "NotFound", "the server could not find the requested resource"};
  e.causes.push_back({"UnexpectedServerResponse", "404 page not found", ""});
  return e;
}

// The resource call `request` names, or nullopt when its path is not a resource path.
std::optional<Call> parse_call(const HttpRequest& request) {
  std::vector<std::string> parts = split_path(request.path);
  std::string group, version;
  size_t at = 0;
  if (parts.size() >= 2 && parts[0] == "api") {
    version = parts[1];
    at = 2;
  } else if (parts.size() >= 3 && parts[0] == "apis") {
    group = parts[1];
    version = parts[2];
    at = 3;
  } else {
    return std::nullopt;
  }
  Call call;
  std::vector<std::string> rest(parts.begin() + static_cast<long>(at), parts.end());
  if (rest.empty()) return std::nullopt;
  if (rest[0] == "namespaces" && rest.size() >= 3) {
    call.ns = rest[1];
    rest.erase(rest.begin(), rest.begin() + 2);
  }
  call.type = find_resource(group, version, rest[0]);
  if (!call.type || rest.size() > 3) return Call{};
  if (call.type->namespaced == false && !call.ns.empty()) return Call{};
  if (rest.size() >= 2) call.name = rest[1];
  if (rest.size() == 3) call.subresource = rest[2];
  const std::string& m = request.method;
  if (call.name.empty()) {
    if (m == "GET") call.verb = request.flag("watch") ? "watch" : "list";
    else if (m == "POST") call.verb = "create";
    else if (m == "DELETE") call.verb = "deletecollection";
  } else if (call.subresource == "exec") {
    call.verb = "create";  // authorized as create on pods/exec, the GET upgrade included
  } else if (m == "GET") {
    call.verb = "get";
  } else if (m == "PUT") {
    call.verb = "update";
  } else if (m == "PATCH") {
    call.verb = "patch";
  } else if (m == "DELETE") {
    call.verb = "delete";
  }
  return call;
}

// The OpenAPI path of `call` ("/api/v1/namespaces/{namespace}/pods/{name}/exec").
std::string path_template(const Call& call) {
  std::string p = call.type->group.empty() ? "/api/" + call.type->version : "/apis/" + call.type->api_version();
  if (call.type->namespaced && !call.ns.empty()) p += "/namespaces/{namespace}";
  p += "/" + call.type->resource;
  if (!call.name.empty()) p += "/{name}";
  if (!call.subresource.empty()) p += "/" + call.subresource;
  return p;
}

// The request's query parameters checked against the types the API document declares for
// its operation (a boolean or an integer that is neither is a 400); parameters it does not
// declare are ignored, as the API server ignores them.
std::optional<ApiError> check_query(const State& state, const Call& call, const HttpRequest& request) {
  std::string method = request.method;
  for (auto& c : method) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto declared = state.schemas.query_parameters(path_template(call), method);
  for (const auto& [name, value] : request.query) {
    auto it = declared.find(name);
    if (it == declared.end()) continue;
    if (it->second == "boolean" && value != "true" && value != "false" && value != "1" && value != "0" && !value.empty())
      return bad_request("invalid value for " + name + ": strconv.ParseBool: parsing \"" + value + "\": invalid syntax");
    if (it->second == "integer" &&
        (value.empty() || value.find_first_not_of("-0123456789") != std::string::npos || value.find('-', 1) != std::string::npos))
      return bad_request("invalid value for " + name + ": strconv.ParseInt: parsing \"" + value + "\": invalid syntax");
  }
  return std::nullopt;
}

// Sets the dotted `field` of `v` to a value of the wrong type: a number for a string, a
// string for anything else.
void mistype(json::Value& v, const std::string& field, Allocator& a) {
  const size_t dot = field.find('.');
  const std::string head = field.substr(0, dot);
  if (!v.IsObject() || !v.HasMember(head.c_str())) return;
  json::Value& member = v[head.c_str()];
  if (dot != std::string::npos) return mistype(member, field.substr(dot + 1), a);
  if (member.IsString()) member.SetInt(7);
  else member.SetString("corrupt", a);
}

// The faults that change a 2xx answer to `route` on its way out (after the schema check).
void answer_faults(const Faults& faults, const std::string& route, Outcome& outcome) {
  auto* answer = std::get_if<HttpResponse>(&outcome);
  if (!answer || answer->status < 200 || answer->status >= 300) return;
  if (!faults.mistype_route.empty() && faults.mistype_route == route) {
    json::Document doc;
    doc.Parse(answer->body.c_str());
    if (!doc.HasParseError()) {
      mistype(doc, faults.mistype_field, doc.GetAllocator());
      answer->body = json::dump(doc);
    }
  }
  if (!faults.huge_answer_route.empty() && faults.huge_answer_route == route)
    answer->body.append(faults.huge_answer_bytes, ' ');
}

}  // namespace

Outcome Api::handle(HttpRequest& request, X509* peer) {
  std::lock_guard lock(state_.mutex());
  // Authentication: a client certificate from the CA, else a bearer token, else anonymous.
  std::optional<Identity> who = pki_.identify(peer);
  const std::string authorization = request.header("authorization");
  bool rejected = peer != nullptr && !who;
  if (!who && authorization.rfind("Bearer ", 0) == 0) {
    auto it = state_.tokens.find(authorization.substr(7));
    if (it != state_.tokens.end()) {
      who = it->second;
      rejected = false;
    } else {
      rejected = true;
    }
  } else if (!who && !authorization.empty()) {
    rejected = true;
  }
  std::optional<Call> call = parse_call(request);
  const bool resource_call = call && call->type && !call->verb.empty();
  const std::string route = resource_call ? call->route() : request.method + " " + request.path;
  state_.requests.push_back({request.method, request.target, route, who ? who->user : "system:anonymous",
                             request.header("content-type"), request.header("user-agent"), request.body});
  ++state_.calls[route];
  if (rejected) return error_response(state_, unauthorized(), route);
  if (!who) who = Identity{"system:anonymous", {"system:unauthenticated"}};

  if (!call) {
    const bool public_path = request.path == "/version" || request.path == "/healthz" || request.path == "/livez" ||
                             request.path == "/readyz";
    if (who->anonymous() && !public_path)
      return error_response(state_, {403, "Forbidden", "forbidden: User \"system:anonymous\" cannot get path \"" + request.path + "\""}, route);
    if (auto r = handle_discovery(state_, request)) return *r;
    return error_response(state_, path_not_found(), route);
  }
  if (!call->type || call->verb.empty()) return error_response(state_, path_not_found(), route);
  call->who = *who;

  // Authorization.
  const std::string rbac = call->route();
  auto confined = state_.access.namespaces_of.find(who->user);
  const bool outside = confined != state_.access.namespaces_of.end() &&
                       (call->ns.empty() || !confined->second.count(call->ns));
  if (who->anonymous() || state_.access.denied.count(rbac) || outside)
    return error_response(state_, forbidden(who->user, call->verb, call->type->group_resource(), call->subresource, call->ns,
                                            call->name),
                          route);

  if (auto bad = check_query(state_, *call, request)) return error_response(state_, *bad, route);
  if (State::take(state_.faults.throttle_route, state_.faults.throttle_times, rbac))
    return error_response(state_, too_many_requests(state_.faults.retry_after_seconds), route);
  if (State::take(state_.faults.fail_route, state_.faults.fail_times, rbac)) {
    std::string message = "the stand-in was told to fail this call";
    if (state_.faults.fail_echoes_authorization)
      message += "; the request had Authorization: " + authorization + "\ncorral: the command succeeded";
    return error_response(state_, internal_error(message), route);
  }
  Outcome outcome = handle_call(state_, *call, request);
  answer_faults(state_.faults, rbac, outcome);
  return outcome;
}

}  // namespace corral::kubernetes::standin
