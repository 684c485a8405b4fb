#include "store.hpp"

#include "object.hpp"

#include <algorithm>

namespace corral::kubernetes::standin {
namespace {

// The history kept for watches; older changes are compacted, as etcd and the watch cache do.
constexpr size_t kHistoryLimit = 20000;

}  // namespace

ObjectPtr Store::get(const ResourceType& type, const std::string& ns, const std::string& name) const {
  auto it = objects_.find({type.key(), ns, name});
  return it == objects_.end() ? nullptr : it->second;
}

std::vector<ObjectPtr> Store::list(const ResourceType& type, const std::string& ns) const {
  std::vector<ObjectPtr> out;
  for (auto it = objects_.lower_bound({type.key(), ns, ""}); it != objects_.end(); ++it) {
    if (std::get<0>(it->first) != type.key() || (!ns.empty() && std::get<1>(it->first) != ns)) break;
    out.push_back(it->second);
  }
  return out;
}

ObjectPtr Store::put(const ResourceType& type, json::Document object) {
  ++revision_;
  json::Value& meta = object_member(object, "metadata", object.GetAllocator());
  set_string(meta, "resourceVersion", std::to_string(revision_), object.GetAllocator());
  const std::string ns = type.namespaced ? string_at(object, {"metadata", "namespace"}) : "";
  const std::string name = string_at(object, {"metadata", "name"});
  auto stored = std::make_shared<const json::Document>(std::move(object));
  ObjectPtr& slot = objects_[{type.key(), ns, name}];
  Change change{revision_, slot ? "MODIFIED" : "ADDED", &type, stored, slot};
  slot = stored;
  record(std::move(change));
  return stored;
}

ObjectPtr Store::remove(const ResourceType& type, const std::string& ns, const std::string& name) {
  auto it = objects_.find({type.key(), ns, name});
  if (it == objects_.end()) return nullptr;
  ++revision_;
  json::Document last = copy_of(*it->second);
  set_string(object_member(last, "metadata", last.GetAllocator()), "resourceVersion", std::to_string(revision_),
             last.GetAllocator());
  auto final_state = std::make_shared<const json::Document>(std::move(last));
  Change change{revision_, "DELETED", &type, final_state, it->second};
  objects_.erase(it);
  record(std::move(change));
  return final_state;
}

std::vector<Change> Store::changes_after(std::int64_t revision) const {
  // The history is in revision order: only its tail after `revision` is copied.
  auto first = std::upper_bound(history_.begin(), history_.end(), revision,
                                [](std::int64_t r, const Change& c) { return r < c.revision; });
  return std::vector<Change>(first, history_.end());
}

void Store::compact() {
  history_.clear();
  oldest_ = revision_;
}

void Store::record(Change change) {
  history_.push_back(std::move(change));
  while (history_.size() > kHistoryLimit) {
    oldest_ = history_.front().revision;
    history_.pop_front();
  }
  changed_.notify_all();
}

}  // namespace corral::kubernetes::standin
