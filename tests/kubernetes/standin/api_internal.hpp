// What the stand-in API's handlers share: one parsed REST call and the verb handlers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "answers.hpp"
#include "http_types.hpp"
#include "state.hpp"

namespace corral::kubernetes::standin {

struct Call {
  const ResourceType* type = nullptr;
  std::string ns;    // "" for cluster scope (or every namespace, on a list)
  std::string name;  // "" on a collection
  std::string subresource;
  std::string verb;  // create, get, list, watch, update, patch, delete, deletecollection
  Identity who;
  std::string route() const { return verb + " " + type->resource + (subresource.empty() ? "" : "/" + subresource); }
};

// 422 Invalid for an object of type `t`.
ApiError invalid_error(const ResourceType& t, const std::string& name, const std::vector<FieldError>& errors);

// Stores a Namespace (and its default service account), as the cluster starts with.
void seed_namespace(State& state, const std::string& name);

// The REST verbs; each answers with the mutex held by the caller.
Outcome handle_call(State& state, const Call& call, HttpRequest& request);

// Discovery (/api, /apis, ...), /version and the health checks; nullopt for other paths.
std::optional<HttpResponse> handle_discovery(State& state, const HttpRequest& request);

}  // namespace corral::kubernetes::standin
