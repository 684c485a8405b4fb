#include "corral/sdk/remote/ownership.hpp"

#include <algorithm>

#include "corral/wire.hpp"

namespace corral::sdk::remote {

StringMap creation_labels(const CreateRequest& request) {
  StringMap labels = request.labels;
  // The marks `corral list` and cleanup rely on, whatever the engine passed.
  labels[wire::kOwnerLabel] = wire::kOwnerValue;
  if (!request.lease_id.empty()) labels[wire::kLeaseLabel] = request.lease_id;
  if (!request.slug.empty()) labels[wire::kSlugLabel] = request.slug;
  return labels;
}

StringMap owned_filter(const StringMap& labels) {
  StringMap filter = labels;
  filter[wire::kOwnerLabel] = wire::kOwnerValue;
  return filter;
}

std::vector<Sandbox> only_matching(std::vector<Sandbox> sandboxes, const StringMap& filter) {
  // A provider's own filter may be looser (prefixes, case) or ignored: a sandbox is only
  // ours when every label matches exactly.
  std::erase_if(sandboxes, [&filter](const Sandbox& s) { return !wire::labels_match(s.labels, filter); });
  return sandboxes;
}

}  // namespace corral::sdk::remote
