// How a remote provider marks the sandboxes it creates as corral's, and finds only those
// again: the corral-* labels of corral/wire.hpp go on at create, and every list filters
// by them, once at the provider (whose own filter may be looser, or ignored) and once
// more here by corral's exact rule (wire::labels_match).
#pragma once

#include <utility>
#include <vector>

#include "corral/types.hpp"

namespace corral::sdk::remote {

// The labels a sandbox made for `request` carries: its own, and the owner, lease and slug marks whatever it says.
StringMap creation_labels(const CreateRequest& request);

// `labels` and the owner mark: what a list call asks the provider to filter by.
StringMap owned_filter(const StringMap& labels);

// `sandboxes` without those whose labels do not match `filter` exactly (wire::labels_match).
std::vector<Sandbox> only_matching(std::vector<Sandbox> sandboxes, const StringMap& filter);

// What `fetch(owned_filter(labels))` finds, each made a Sandbox by `to_sandbox`, that matches the filter exactly.
template <class Fetch, class ToSandbox>
std::vector<Sandbox> list_owned(const StringMap& labels, Fetch&& fetch, ToSandbox&& to_sandbox) {
  const StringMap filter = owned_filter(labels);
  std::vector<Sandbox> found;
  for (const auto& item : fetch(filter)) found.push_back(to_sandbox(item));
  return only_matching(std::move(found), filter);
}

}  // namespace corral::sdk::remote
