// The three patch formats the API server takes on PATCH: JSON Patch (RFC 6902), JSON Merge
// Patch (RFC 7386) and strategic merge patch (a merge patch whose lists of named items,
// containers and the like, merge by name instead of being replaced).
#pragma once

#include <stdexcept>
#include <string>

#include "object.hpp"

namespace corral::kubernetes::standin {

// A patch that cannot be applied (the API server answers it with this message).
class PatchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Applies `patch` (the request body) of media type `content_type` to `target`; throws
// PatchError for a malformed patch or one that does not apply, std::invalid_argument for
// a media type that is none of the three.
void apply_patch(json::Document& target, const std::string& content_type, const std::string& patch);

}  // namespace corral::kubernetes::standin
