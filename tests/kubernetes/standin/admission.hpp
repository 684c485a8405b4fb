// What the API server checks and fills in on the metadata of every object it stores.
#pragma once

#include <string>
#include <vector>

#include "object.hpp"
#include "status.hpp"

namespace corral::kubernetes::standin {

// metadata.name (a DNS-1123 subdomain, or generateName), label keys and values, annotation keys.
std::vector<FieldError> validate_metadata(const json::Value& object);
// A new object's server-set metadata: its name from generateName, namespace (when
// namespaced), uid and creationTimestamp; what only the server may set is dropped.
void default_metadata(json::Document& object, const std::string& ns);
// On an update: what may not change (name, namespace, uid, creationTimestamp) is taken
// from `old`, as is status (changed only through the status subresource).
void keep_immutable_metadata(json::Document& updated, const json::Value& old);

}  // namespace corral::kubernetes::standin
