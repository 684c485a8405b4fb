// Names of the sandboxes corral creates: `corral-<slug>-<hex>`. sbx has no labels, so
// the name alone carries ownership (the prefix), the slug and the lease id: whole for
// corral's own 12-hex-digit ids, else an 8-digit fingerprint of it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "corral/types.hpp"

namespace corral::docker_sandbox {

// The slug reduced to what sbx accepts in a name (lower-case letters, digits, '-'),
// at most 40 characters; "run" when nothing is left.
std::string clean_slug(std::string_view slug);

// The lease id itself when it is corral's form (12 lower-case hex digits), else eight hex
// digits derived from it (FNV-1a), so a lease filter can be checked from the name alone.
std::string lease_tag(std::string_view lease_id);

// `corral-<clean slug>-<lease tag>`.
std::string sandbox_name(std::string_view slug, std::string_view lease_id);

struct NameParts {
  std::string slug;
  std::string tag;
};

// The parts of a corral-made name, or nullopt for any other sandbox.
std::optional<NameParts> parse_sandbox_name(std::string_view name);

// The corral labels a name proves: corral-owner, corral-slug, and corral-lease when the
// name carries the whole lease id.
StringMap labels_of(const NameParts& parts);

// True when every label in `wanted` is proven by the name. Labels the name cannot carry
// never match, so a filter never touches a sandbox it cannot vouch for.
bool name_matches(const NameParts& parts, const StringMap& wanted);

}  // namespace corral::docker_sandbox
