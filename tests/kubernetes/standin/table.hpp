// meta.k8s.io/v1 Table: the server-side printing `kubectl get` asks for (Accept:
// application/json;as=Table;v=v1;g=meta.k8s.io), with the columns the API server prints
// for pods (NAME READY STATUS RESTARTS AGE ...) and NAME/AGE for everything else.
#pragma once

#include <string>
#include <vector>

#include "store.hpp"

namespace corral::kubernetes::standin {

// Whether the Accept header asks for a Table.
bool wants_table(const std::string& accept);
// The Table of `objects`; `include_object` is the includeObject parameter (None,
// Metadata (the default) or Object).
std::string table_of(const ResourceType& type, const std::vector<ObjectPtr>& objects, std::int64_t revision,
                     const std::string& include_object);

}  // namespace corral::kubernetes::standin
