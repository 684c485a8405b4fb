// The stand-in's etcd: every object by resource, namespace and name, one revision counter
// for all of them (what metadata.resourceVersion is), and the history of changes that
// watches replay from a resourceVersion, until it is compacted away (then 410 Expired).
// Not locked itself: State's mutex guards it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "corral/json.hpp"
#include "resources.hpp"

namespace corral::kubernetes::standin {

// A stored object: immutable once stored; a change stores a new one.
using ObjectPtr = std::shared_ptr<const json::Document>;

struct Change {
  std::int64_t revision = 0;
  std::string type;  // ADDED, MODIFIED, DELETED
  const ResourceType* resource = nullptr;
  ObjectPtr object;    // the object after the change (before it, for DELETED)
  ObjectPtr previous;  // the object before the change (null for ADDED)
};

class Store {
 public:
  std::int64_t revision() const { return revision_; }
  // The oldest revision a watch may resume after; older ones answer 410 Expired.
  std::int64_t oldest() const { return oldest_; }

  ObjectPtr get(const ResourceType& type, const std::string& ns, const std::string& name) const;
  // Objects of `type` in `ns` (every namespace when empty), by namespace and name.
  std::vector<ObjectPtr> list(const ResourceType& type, const std::string& ns) const;

  // Stores `object` as new (ADDED) or as the next state of an existing one (MODIFIED),
  // setting its metadata.resourceVersion to the new revision. Returns what was stored.
  ObjectPtr put(const ResourceType& type, json::Document object);
  // Removes the object (DELETED); returns its last state, its resourceVersion the
  // deletion's revision, or null when there was none.
  ObjectPtr remove(const ResourceType& type, const std::string& ns, const std::string& name);

  // Changes after `revision`, oldest first.
  std::vector<Change> changes_after(std::int64_t revision) const;
  // Forgets the history up to now: a watch from an older resourceVersion gets 410.
  void compact();

  // Notified on every change; wait on it with State's mutex.
  std::condition_variable& changed() { return changed_; }

 private:
  using Key = std::tuple<std::string, std::string, std::string>;  // resource key, namespace, name
  std::map<Key, ObjectPtr> objects_;
  std::deque<Change> history_;
  std::int64_t revision_ = 1000;
  std::int64_t oldest_ = 1000;
  std::condition_variable changed_;
  void record(Change change);
};

// Which of ADDED/MODIFIED/DELETED a watch with a filter sees for `change`: an object that
// starts to match is ADDED, one that stops matching DELETED, as the API server's watch
// cache does; "" when the watch sees nothing of it.
template <class Matches>
std::string filtered_type(const Change& change, const Matches& matches) {
  const bool now = change.type != "DELETED" && matches(*change.object);
  const bool before = change.type == "DELETED" ? matches(*change.object) : change.previous && matches(*change.previous);
  if (change.type == "DELETED") return before ? "DELETED" : "";
  if (now && before) return "MODIFIED";
  if (now) return "ADDED";
  if (before) return "DELETED";
  return "";
}

}  // namespace corral::kubernetes::standin
