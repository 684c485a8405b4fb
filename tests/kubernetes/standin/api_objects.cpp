// The REST verbs on the stand-in's resources: create, get, list (labelSelector,
// fieldSelector, limit and continue, Table), watch (the plan the server streams), update,
// patch, delete (grace periods, preconditions), deletecollection, and the pods' exec and
// log subresources.
#include <algorithm>
#include <fstream>
#include <sstream>

#include "admission.hpp"
#include "api_internal.hpp"
#include "kubelet.hpp"
#include "network_policy.hpp"
#include "patch.hpp"
#include "pod_admission.hpp"
#include "table.hpp"

namespace corral::kubernetes::standin {
namespace {

// A handler's early answer.
struct Refusal {
  ApiError error;
};

HttpResponse refuse(State& s, const Call& call, const ApiError& e) { return error_response(s, e, call.route()); }

bool built_in(const ResourceType& t) { return t.group.empty() || t.group == "networking.k8s.io"; }

std::vector<std::string> selectable_fields(const ResourceType& t) {
  if (t.resource == "pods")
    return {"metadata.name",       "metadata.namespace", "spec.nodeName",   "spec.restartPolicy", "spec.schedulerName",
            "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP",       "status.nominatedNodeName"};
  if (t.resource == "events")
    return {"metadata.name",          "metadata.namespace",        "involvedObject.kind",
            "involvedObject.namespace", "involvedObject.name",     "involvedObject.uid",
            "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
            "reason",                  "reportingComponent",       "source",
            "type"};
  return {"metadata.name", "metadata.namespace"};
}

// The selectors of a list or watch; throws Refusal for a bad one.
std::pair<LabelSelector, FieldSelector> selectors_of(const Call& call, const HttpRequest& request) {
  std::pair<LabelSelector, FieldSelector> out;
  try {
    out.first = LabelSelector::parse(request.param("labelSelector"));
    out.second = FieldSelector::parse(request.param("fieldSelector"));
  } catch (const SelectorError& e) {
    throw Refusal{bad_request(e.what())};
  }
  const auto known = selectable_fields(*call.type);
  for (const auto& r : out.second.requirements)
    if (std::find(known.begin(), known.end(), r.field) == known.end()) {
      if (built_in(*call.type)) throw Refusal{bad_request("field label not supported: " + r.field)};
      throw Refusal{bad_request("\"" + r.field + "\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"")};
    }
  return out;
}

// The request body as an object of `call`'s type: JSON, the right apiVersion and kind,
// checked against the schema (unknown fields pruned and reported in `warnings`, or
// refused when the client asked for strict validation). Throws Refusal.
json::Document decode(State& s, const Call& call, const HttpRequest& request, std::vector<std::string>& warnings,
                      std::vector<FieldError>& invalid) {
  json::Document doc;
  doc.Parse(request.body.c_str());
  if (doc.HasParseError() || !doc.IsObject())
    throw Refusal{bad_request("couldn't get version/kind; json parse error: the request body is not a JSON object")};
  const ResourceType& t = *call.type;
  // The path names the type: a body may leave apiVersion and kind out (client libraries
  // do), but may not name another.
  if (string_at(doc, {"kind"}).empty()) set_string(doc, "kind", t.kind, doc.GetAllocator());
  if (string_at(doc, {"apiVersion"}).empty()) set_string(doc, "apiVersion", t.api_version(), doc.GetAllocator());
  const std::string kind = string_at(doc, {"kind"});
  const std::string version = string_at(doc, {"apiVersion"});
  if (version != t.api_version() || kind != t.kind)
    throw Refusal{bad_request("the API version in the data (" + version + ") does not match the expected API version (" +
                              t.api_version() + ")")};
  const std::string validation = request.param("fieldValidation");
  for (const auto& issue : s.schemas.check(doc, doc.GetAllocator(), t.schema, validation != "Strict")) {
    using K = SchemaIssue::Kind;
    switch (issue.kind) {
      case K::type:
      case K::format:
        throw Refusal{bad_request(t.kind + " in version \"" + t.version + "\" cannot be handled as a " + t.kind + ": " +
                                  issue.message)};
      case K::unknown_field:
        if (validation == "Strict") throw Refusal{bad_request("strict decoding error: " + issue.message)};
        if (validation != "Ignore") warnings.push_back(issue.message);
        break;
      case K::required: invalid.push_back({FieldError::Type::required, issue.path, "", ""}); break;
      case K::enum_value:
        invalid.push_back({FieldError::Type::not_supported, issue.path, "", "supported values: " + issue.expected});
        break;
    }
  }
  return doc;
}

void add_warnings(HttpResponse& r, const std::vector<std::string>& warnings) {
  // RFC 7234 warn-text: a quoted string, its quotes and backslashes escaped.
  for (const auto& w : warnings) {
    std::string text;
    for (char ch : w) {
      if (ch == '"' || ch == '\\') text += '\\';
      text += ch;
    }
    r.headers.emplace_back("Warning", "299 - \"" + text + "\"");
  }
}

std::vector<FieldError> validate_kind(const ResourceType& t, const json::Value& object) {
  if (&t == &pod_type()) return validate_pod(object);
  if (&t == &network_policy_type()) return validate_network_policy(object);
  return {};
}

void check_namespace(State& s, const Call& call) {
  if (!call.type->namespaced) return;
  if (!s.store.get(namespace_type(), "", call.ns)) throw Refusal{not_found(namespace_type().group_resource(), call.ns)};
}

json::Document new_namespace_object(const std::string& name) {
  json::Document ns(rapidjson::kObjectType);
  auto& a = ns.GetAllocator();
  set_string(ns, "apiVersion", "v1", a);
  set_string(ns, "kind", "Namespace", a);
  set_string(object_member(ns, "metadata", a), "name", name, a);
  return ns;
}

void default_namespace(json::Document& ns) {
  auto& a = ns.GetAllocator();
  json::Value& meta = object_member(ns, "metadata", a);
  set_string(object_member(meta, "labels", a), "kubernetes.io/metadata.name", string_at(ns, {"metadata", "name"}), a);
  json::Value finalizers(rapidjson::kArrayType);
  finalizers.PushBack(string_value("kubernetes", a), a);
  set_member(object_member(ns, "spec", a), "finalizers", std::move(finalizers), a);
  set_string(object_member(ns, "status", a), "phase", "Active", a);
}

HttpResponse create(State& s, const Call& call, const HttpRequest& request) {
  const ResourceType& t = *call.type;
  std::vector<std::string> warnings;
  std::vector<FieldError> invalid;
  json::Document doc = decode(s, call, request, warnings, invalid);
  const std::string body_ns = string_at(doc, {"metadata", "namespace"});
  if (t.namespaced && !body_ns.empty() && body_ns != call.ns)
    throw Refusal{bad_request("the namespace of the provided object does not match the namespace sent on the request")};
  check_namespace(s, call);
  default_metadata(doc, t.namespaced ? call.ns : "");
  if (&t == &pod_type()) default_pod(doc);
  if (&t == &network_policy_type()) default_network_policy(doc);
  if (&t == &namespace_type()) default_namespace(doc);
  for (auto& e : validate_metadata(doc)) invalid.push_back(std::move(e));
  for (auto& e : validate_kind(t, doc)) invalid.push_back(std::move(e));
  const std::string name = string_at(doc, {"metadata", "name"});
  if (!invalid.empty()) throw Refusal{invalid_error(t, name, invalid)};
  if (&t == &pod_type()) {
    const std::string account = string_at(doc, {"spec", "serviceAccountName"});
    if (!s.service_accounts.count(call.ns + "/" + account))
      throw Refusal{{403, "Forbidden", "pods \"" + name + "\" is forbidden: error looking up service account " + call.ns +
                                           "/" + account + ": serviceaccount \"" + account + "\" not found",
                     name, "", "pods"}};
  }
  if (s.store.get(t, t.namespaced ? call.ns : "", name)) throw Refusal{already_exists(t.group_resource(), name)};
  if (request.param("dryRun") == "All") {
    HttpResponse r = object_response(s, 201, doc, t.schema, call.route());
    add_warnings(r, warnings);
    return r;
  }
  ObjectPtr stored = s.store.put(t, std::move(doc));
  if (&t == &pod_type()) kubelet_adopt(s, *stored);
  if (&t == &namespace_type()) s.service_accounts.insert(name + "/default");
  HttpResponse r = object_response(s, 201, *stored, t.schema, call.route());
  add_warnings(r, warnings);
  return r;
}

ObjectPtr existing(State& s, const Call& call) {
  ObjectPtr o = s.store.get(*call.type, call.ns, call.name);
  if (!o) throw Refusal{not_found(call.type->group_resource(), call.name)};
  return o;
}

// The stored list's items as the API answers them (built-in types without their own
// apiVersion and kind).
std::string list_text(State& s, const Call& call, const std::vector<ObjectPtr>& items, const std::string& next,
                      long remaining) {
  json::Document list(rapidjson::kObjectType);
  auto& a = list.GetAllocator();
  set_string(list, "kind", call.type->kind + "List", a);
  set_string(list, "apiVersion", call.type->api_version(), a);
  json::Value& meta = object_member(list, "metadata", a);
  set_string(meta, "resourceVersion", std::to_string(s.store.revision()), a);
  if (!next.empty()) {
    set_string(meta, "continue", next, a);
    set_member(meta, "remainingItemCount", json::Value(static_cast<int64_t>(remaining)), a);
  }
  json::Value array(rapidjson::kArrayType);
  for (const auto& o : items) {
    json::Value item(*o, a);
    if (built_in(*call.type)) {
      item.RemoveMember("apiVersion");
      item.RemoveMember("kind");
    }
    array.PushBack(item, a);
  }
  set_member(list, "items", std::move(array), a);
  return answer_text(s, list, call.type->list_schema, call.route());
}

HttpResponse list(State& s, const Call& call, const HttpRequest& request) {
  auto [labels, fields] = selectors_of(call, request);
  std::vector<ObjectPtr> items;
  for (const auto& o : s.store.list(*call.type, call.ns))
    if (selected(*o, labels, fields)) items.push_back(o);
  // limit and continue: the token is the revision of the first page and the offset.
  size_t offset = 0;
  if (request.has("continue")) {
    const std::string token = request.param("continue");
    const size_t colon = token.find(':');
    std::int64_t revision = 0;
    try {
      revision = std::stoll(token.substr(0, colon));
      offset = std::stoul(token.substr(colon + 1));
    } catch (const std::exception&) {
      throw Refusal{bad_request("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")};
    }
    if (revision < s.store.oldest())
      throw Refusal{expired("The provided continue parameter is too old to display a consistent list result. You can "
                            "start a new list without the continue parameter, or use the continue token in this "
                            "response to retrieve the remainder of the results. Continuing with the provided token "
                            "results in an inconsistent list - objects that were created, modified, or deleted between "
                            "the time the first chunk was returned and now may show up in the list.")};
  }
  offset = std::min(offset, items.size());
  items.erase(items.begin(), items.begin() + static_cast<long>(offset));
  std::string next;
  long remaining = 0;
  const long limit = request.has("limit") ? std::atol(request.param("limit").c_str()) : 0;
  if (limit > 0 && items.size() > static_cast<size_t>(limit)) {
    remaining = static_cast<long>(items.size()) - limit;
    items.resize(static_cast<size_t>(limit));
    next = std::to_string(s.store.revision()) + ":" + std::to_string(offset + static_cast<size_t>(limit));
  }
  HttpResponse r;
  if (wants_table(request.header("accept"))) {
    r.body = table_of(*call.type, items, s.store.revision(), request.param("includeObject"));
    return r;
  }
  r.body = list_text(s, call, items, next, remaining);
  return r;
}

WatchPlan watch(State& s, const Call& call, const HttpRequest& request) {
  WatchPlan plan;
  plan.type = call.type;
  plan.ns = call.ns;
  std::tie(plan.labels, plan.fields) = selectors_of(call, request);
  plan.route = call.route();
  plan.bookmarks = request.flag("allowWatchBookmarks");
  plan.initial_events_end = request.flag("sendInitialEvents");
  const std::string rv = request.param("resourceVersion");
  if (!rv.empty() && rv != "0" && !plan.initial_events_end) {
    try {
      plan.from_revision = std::stoll(rv);
    } catch (const std::exception&) {
      throw Refusal{bad_request("invalid resource version: " + rv)};
    }
  }
  if (request.has("timeoutSeconds")) plan.timeout_seconds = std::max(0, std::atoi(request.param("timeoutSeconds").c_str()));
  if (s.faults.watch_gone_times > 0) {
    --s.faults.watch_gone_times;
    plan.gone = true;
  } else if (s.faults.watch_end_times > 0) {
    --s.faults.watch_end_times;
    plan.end_after_events = s.faults.watch_end_after_events;
  }
  return plan;
}

HttpResponse get(State& s, const Call& call, const HttpRequest& request) {
  ObjectPtr o = existing(s, call);
  if (wants_table(request.header("accept"))) {
    HttpResponse r;
    r.body = table_of(*call.type, {o}, s.store.revision(), request.param("includeObject"));
    return r;
  }
  return object_response(s, 200, *o, call.type->schema, call.route());
}

// Stores `updated` as the next state of `old` (an update or a patch), after the checks
// the API server makes of a change.
HttpResponse store_update(State& s, const Call& call, const ObjectPtr& old, json::Document updated,
                          std::vector<std::string> warnings) {
  const ResourceType& t = *call.type;
  keep_immutable_metadata(updated, *old);
  std::vector<FieldError> invalid;
  for (const auto& issue : s.schemas.check(updated, updated.GetAllocator(), t.schema, true)) {
    if (issue.kind == SchemaIssue::Kind::type || issue.kind == SchemaIssue::Kind::format)
      throw Refusal{bad_request(t.kind + " in version \"" + t.version + "\" cannot be handled as a " + t.kind + ": " + issue.message)};
    if (issue.kind == SchemaIssue::Kind::unknown_field) warnings.push_back(issue.message);
    if (issue.kind == SchemaIssue::Kind::required) invalid.push_back({FieldError::Type::required, issue.path, "", ""});
    if (issue.kind == SchemaIssue::Kind::enum_value)
      invalid.push_back({FieldError::Type::not_supported, issue.path, "", "supported values: " + issue.expected});
  }
  for (auto& e : validate_metadata(updated)) invalid.push_back(std::move(e));
  for (auto& e : validate_kind(t, updated)) invalid.push_back(std::move(e));
  if (&t == &pod_type())
    for (auto& e : validate_pod_update(*old, updated)) invalid.push_back(std::move(e));
  if (!invalid.empty()) throw Refusal{invalid_error(t, call.name, invalid)};
  // resourceVersion is the server's: a change that changes nothing stores nothing.
  set_string(object_member(updated, "metadata", updated.GetAllocator()), "resourceVersion",
             string_at(*old, {"metadata", "resourceVersion"}), updated.GetAllocator());
  if (updated == *old) {
    HttpResponse r = object_response(s, 200, *old, t.schema, call.route());
    add_warnings(r, warnings);
    return r;
  }
  if (json::find(updated, "spec") && json::find(*old, "spec") && updated["spec"] != (*old)["spec"]) {
    const auto generation = int_at(*old, {"metadata", "generation"});
    if (generation)
      set_member(updated["metadata"], "generation", json::Value(static_cast<int64_t>(*generation + 1)), updated.GetAllocator());
  }
  ObjectPtr stored = s.store.put(t, std::move(updated));
  HttpResponse r = object_response(s, 200, *stored, t.schema, call.route());
  add_warnings(r, warnings);
  return r;
}

HttpResponse update(State& s, const Call& call, const HttpRequest& request) {
  ObjectPtr old = existing(s, call);
  std::vector<std::string> warnings;
  std::vector<FieldError> invalid;
  json::Document doc = decode(s, call, request, warnings, invalid);
  const std::string name = string_at(doc, {"metadata", "name"});
  if (name != call.name)
    throw Refusal{bad_request("the name of the object (" + name + ") does not match the name on the URL (" + call.name + ")")};
  const std::string rv = string_at(doc, {"metadata", "resourceVersion"});
  if (rv.empty())
    throw Refusal{invalid_error(*call.type, call.name, {{FieldError::Type::invalid, "metadata.resourceVersion", "0x0",
                                                         "must be specified for an update"}})};
  if (rv != string_at(*old, {"metadata", "resourceVersion"}))
    throw Refusal{conflict(call.type->group_resource(), call.name,
                           "the object has been modified; please apply your changes to the latest version and try again")};
  return store_update(s, call, old, std::move(doc), warnings);
}

HttpResponse patch(State& s, const Call& call, const HttpRequest& request) {
  ObjectPtr old = existing(s, call);
  const std::string content_type = request.header("content-type");
  json::Document doc = copy_of(*old);
  const std::string before_rv = string_at(doc, {"metadata", "resourceVersion"});
  try {
    if (!built_in(*call.type) && content_type.rfind("application/strategic-merge-patch+json", 0) == 0)
      throw std::invalid_argument(content_type);
    apply_patch(doc, content_type, request.body);
  } catch (const std::invalid_argument&) {
    throw Refusal{unsupported_media_type(built_in(*call.type)
                                             ? "application/json-patch+json, application/merge-patch+json, "
                                               "application/apply-patch+yaml, application/strategic-merge-patch+json"
                                             : "application/json-patch+json, application/merge-patch+json, "
                                               "application/apply-patch+yaml")};
  } catch (const PatchError& e) {
    throw Refusal{{422, "Invalid", e.what()}};
  }
  // A resourceVersion the patch sets is a precondition.
  const std::string wanted_rv = string_at(doc, {"metadata", "resourceVersion"});
  if (wanted_rv != before_rv)
    throw Refusal{conflict(call.type->group_resource(), call.name,
                           "the object has been modified; please apply your changes to the latest version and try again")};
  return store_update(s, call, old, std::move(doc), {});
}

// gracePeriodSeconds and preconditions from the query or a DeleteOptions body.
struct DeleteOptions {
  std::optional<long> grace;
  std::string uid, resource_version;
};

DeleteOptions delete_options(State& s, const HttpRequest& request) {
  DeleteOptions o;
  if (request.has("gracePeriodSeconds")) o.grace = std::atol(request.param("gracePeriodSeconds").c_str());
  if (request.body.empty()) return o;
  json::Document body;
  body.Parse(request.body.c_str());
  if (body.HasParseError() || !body.IsObject()) throw Refusal{bad_request("the body of the request was in an unknown format")};
  for (const auto& issue : s.schemas.check(body, "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"))
    if (issue.kind == SchemaIssue::Kind::type) throw Refusal{bad_request(issue.message)};
  if (auto g = int_at(body, {"gracePeriodSeconds"})) o.grace = *g;
  o.uid = string_at(body, {"preconditions", "uid"});
  o.resource_version = string_at(body, {"preconditions", "resourceVersion"});
  return o;
}

HttpResponse status_success(State& s, const Call& call, const json::Value& object) {
  json::Document st(rapidjson::kObjectType);
  auto& a = st.GetAllocator();
  set_string(st, "kind", "Status", a);
  set_string(st, "apiVersion", "v1", a);
  object_member(st, "metadata", a);
  set_string(st, "status", "Success", a);
  json::Value& details = object_member(st, "details", a);
  set_string(details, "name", call.name, a);
  if (!call.type->group.empty()) set_string(details, "group", call.type->group, a);
  set_string(details, "kind", call.type->resource, a);
  set_string(details, "uid", string_at(object, {"metadata", "uid"}), a);
  return object_response(s, 200, st, "io.k8s.apimachinery.pkg.apis.meta.v1.Status", call.route());
}

// Deletes one object; returns what the API answers for it.
ObjectPtr delete_one(State& s, const ResourceType& t, const std::string& ns, const std::string& name, const DeleteOptions& o) {
  ObjectPtr object = s.store.get(t, ns, name);
  if (&t == &pod_type()) {
    kubelet_delete(s, ns, name, o.grace.value_or(int_at(*object, {"spec", "terminationGracePeriodSeconds"}).value_or(30)));
    ObjectPtr after = s.store.get(t, ns, name);
    return after ? after : object;
  }
  if (&t == &namespace_type()) {
    for (const auto& type : resource_types())
      if (type.namespaced)
        for (const auto& o2 : s.store.list(type, name)) {
          const std::string n = string_at(*o2, {"metadata", "name"});
          if (&type == &pod_type()) kubelet_delete(s, name, n, 0);
          else s.store.remove(type, name, n);
        }
  }
  return s.store.remove(t, ns, name);
}

HttpResponse remove(State& s, const Call& call, const HttpRequest& request) {
  ObjectPtr old = existing(s, call);
  const DeleteOptions o = delete_options(s, request);
  if (!o.uid.empty() && o.uid != string_at(*old, {"metadata", "uid"}))
    throw Refusal{conflict(call.type->group_resource(), call.name,
                           "Precondition failed: UID in precondition: " + o.uid + ", UID in object meta: " +
                               string_at(*old, {"metadata", "uid"}))};
  if (!o.resource_version.empty() && o.resource_version != string_at(*old, {"metadata", "resourceVersion"}))
    throw Refusal{conflict(call.type->group_resource(), call.name,
                           "Precondition failed: ResourceVersion in precondition: " + o.resource_version +
                               ", ResourceVersion in object meta: " + string_at(*old, {"metadata", "resourceVersion"}))};
  ObjectPtr answer = delete_one(s, *call.type, call.ns, call.name, o);
  if (call.type == &pod_type() || call.type == &namespace_type())
    return object_response(s, 200, *answer, call.type->schema, call.route());
  return status_success(s, call, *answer);
}

HttpResponse remove_collection(State& s, const Call& call, const HttpRequest& request) {
  auto [labels, fields] = selectors_of(call, request);
  const DeleteOptions o = delete_options(s, request);
  std::vector<ObjectPtr> deleted;
  for (const auto& object : s.store.list(*call.type, call.ns))
    if (selected(*object, labels, fields))
      deleted.push_back(delete_one(s, *call.type, string_at(*object, {"metadata", "namespace"}),
                                   string_at(*object, {"metadata", "name"}), o));
  HttpResponse r;
  r.body = list_text(s, call, deleted, "", 0);
  return r;
}

Outcome exec(State& s, const Call& call, const HttpRequest& request) {
  ObjectPtr pod = existing(s, call);
  ExecPlan plan;
  plan.ns = call.ns;
  plan.pod = call.name;
  plan.command = request.params("command");
  plan.in = request.flag("stdin");
  plan.out = request.flag("stdout");
  plan.err = request.flag("stderr");
  plan.tty = request.flag("tty");
  if (plan.command.empty()) throw Refusal{bad_request("you must specify at least 1 command")};
  if (!plan.in && !plan.out && !plan.err) throw Refusal{bad_request("you must specify at least one of stdin, stdout, stderr")};
  // The kubelet's words for it: "Access to exec with tty and stderr is not supported,
  // bypassing stderr" (a terminal merges stderr into stdout).
  if (plan.tty) plan.err = false;
  const std::string phase = string_at(*pod, {"status", "phase"});
  if (phase == "Succeeded" || phase == "Failed")
    throw Refusal{bad_request("cannot exec into a container in a completed pod; current phase is " + phase)};
  std::vector<std::string> names;
  if (const json::Value* containers = at(*pod, {"spec", "containers"}); containers && containers->IsArray())
    for (const auto& c : containers->GetArray()) names.push_back(string_at(c, {"name"}));
  plan.container = request.param("container");
  if (plan.container.empty()) {
    if (names.size() != 1) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : " ") + n;
      throw Refusal{bad_request("a container name must be specified for pod " + call.name + ", choose one of: [" + list + "]")};
    }
    plan.container = names[0];
  } else if (std::find(names.begin(), names.end(), plan.container) == names.end()) {
    throw Refusal{bad_request("container " + plan.container + " is not valid for pod " + call.name)};
  }
  if (string_at(*pod, {"spec", "nodeName"}).empty())
    throw Refusal{bad_request("pod " + call.name + " does not have a host assigned")};
  auto rt = s.pods.find({call.ns, call.name});
  bool running = false;
  if (rt != s.pods.end())
    for (const auto& c : rt->second.containers)
      if (c.name == plan.container) running = c.running;
  if (!running) throw Refusal{bad_request("unable to upgrade connection: container not found (\"" + plan.container + "\")")};
  std::string upgrade = request.header("upgrade");
  std::transform(upgrade.begin(), upgrade.end(), upgrade.begin(), ::tolower);
  if (upgrade != "websocket") throw Refusal{bad_request("Upgrade request required")};
  // The protocols the client offers, best first; the first one served wins.
  std::stringstream offered(request.header("sec-websocket-protocol"));
  for (std::string p; std::getline(offered, p, ',');) {
    p.erase(0, p.find_first_not_of(' '));
    p.erase(p.find_last_not_of(' ') + 1);
    if ((p == "v5.channel.k8s.io" && !s.faults.exec_v4_only) || p == "v4.channel.k8s.io") {
      plan.protocol = p;
      break;
    }
  }
  if (plan.protocol.empty())
    throw Refusal{bad_request("unable to upgrade connection: requested protocol(s) are not supported: [" +
                              request.header("sec-websocket-protocol") + "]; supports [" +
                              (s.faults.exec_v4_only ? "" : "v5.channel.k8s.io ") + "v4.channel.k8s.io]")};
  return plan;
}

HttpResponse log(State& s, const Call& call, const HttpRequest& request) {
  ObjectPtr pod = existing(s, call);
  auto rt = s.pods.find({call.ns, call.name});
  std::string container = request.param("container");
  if (container.empty() && rt != s.pods.end() && rt->second.containers.size() == 1) container = rt->second.containers[0].name;
  const ContainerRuntime* c = nullptr;
  if (rt != s.pods.end())
    for (const auto& x : rt->second.containers)
      if (x.name == container) c = &x;
  if (!c) throw Refusal{bad_request("container " + container + " is not valid for pod " + call.name)};
  if (c->container_id.empty())
    throw Refusal{bad_request("container \"" + container + "\" in pod \"" + call.name + "\" is waiting to start: ContainerCreating")};
  std::ifstream in(rt->second.logs / (container + ".log"), std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  HttpResponse r;
  r.content_type = "text/plain";
  r.body = text.str();
  return r;
}

}  // namespace

ApiError invalid_error(const ResourceType& t, const std::string& name, const std::vector<FieldError>& errors) {
  return invalid(t.group, t.kind, name, errors);
}

Outcome handle_call(State& s, const Call& call, HttpRequest& request) {
  try {
    if (call.subresource == "exec" && call.type == &pod_type()) return exec(s, call, request);
    if (call.subresource == "log" && call.type == &pod_type() && call.verb == "get") return log(s, call, request);
    if (call.subresource == "status" && call.verb == "get") return get(s, call, request);
    if (!call.subresource.empty()) return refuse(s, call, method_not_allowed(call.type->group_resource(), call.verb));
    if (call.verb == "create") return create(s, call, request);
    if (call.verb == "list") return list(s, call, request);
    if (call.verb == "watch") return watch(s, call, request);
    if (call.verb == "get") return get(s, call, request);
    if (call.verb == "update") return update(s, call, request);
    if (call.verb == "patch") return patch(s, call, request);
    if (call.verb == "delete") return remove(s, call, request);
    if (call.verb == "deletecollection") return remove_collection(s, call, request);
    return refuse(s, call, method_not_allowed(call.type->group_resource(), call.verb));
  } catch (const Refusal& r) {
    return refuse(s, call, r.error);
  }
}

void seed_namespace(State& s, const std::string& name) {
  json::Document ns = new_namespace_object(name);
  default_metadata(ns, "");
  default_namespace(ns);
  s.store.put(namespace_type(), std::move(ns));
  s.service_accounts.insert(name + "/default");
}

}  // namespace corral::kubernetes::standin
