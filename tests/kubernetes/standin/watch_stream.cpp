#include "watch_stream.hpp"

#include "answers.hpp"

namespace corral::kubernetes::standin {
namespace {

std::string event_line(State& s, const WatchPlan& plan, const std::string& type, const json::Value& object) {
  return "{\"type\":\"" + type + "\",\"object\":" + answer_text(s, object, plan.type->schema, plan.route) + "}\n";
}

std::string gone_line(std::int64_t asked, std::int64_t oldest) {
  ApiError e = expired("too old resource version: " + std::to_string(asked) + " (" + std::to_string(oldest) + ")");
  return "{\"type\":\"ERROR\",\"object\":" + e.json() + "}\n";
}

std::string bookmark_line(const WatchPlan& plan, std::int64_t revision, bool initial_end) {
  std::string meta = "{\"resourceVersion\":\"" + std::to_string(revision) + "\"";
  if (initial_end) meta += ",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}";
  meta += "}";
  return "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"" + plan.type->kind + "\",\"apiVersion\":\"" +
         plan.type->api_version() + "\",\"metadata\":" + meta + "}}\n";
}

}  // namespace

void stream_watch(State& state, const WatchPlan& plan, const std::function<bool(std::string_view)>& write) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(plan.timeout_seconds);
  auto matches = [&](const json::Value& o) {
    return (plan.ns.empty() || string_at(o, {"metadata", "namespace"}) == plan.ns) && selected(o, plan.labels, plan.fields);
  };
  std::vector<std::string> lines;
  std::int64_t cursor = 0;
  int sent = 0;
  bool end = false;
  {
    std::unique_lock lock(state.mutex());
    if (plan.gone || (plan.from_revision && *plan.from_revision < state.store.oldest())) {
      lines.push_back(gone_line(plan.from_revision.value_or(state.store.revision()), state.store.oldest()));
      end = true;
    } else if (plan.from_revision) {
      cursor = *plan.from_revision;
    } else {
      for (const auto& o : state.store.list(*plan.type, plan.ns))
        if (matches(*o)) lines.push_back(event_line(state, plan, "ADDED", *o));
      cursor = state.store.revision();
      if (plan.initial_events_end) lines.push_back(bookmark_line(plan, cursor, true));
    }
  }
  for (;;) {
    for (const auto& line : lines) {
      if (!write(line)) return;
      if (line.rfind("{\"type\":\"BOOKMARK\"", 0) != 0 && ++sent == plan.end_after_events) return;
    }
    lines.clear();
    if (end) return;
    std::unique_lock lock(state.mutex());
    auto bookmark_due = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (lines.empty()) {
      if (state.stopping || std::chrono::steady_clock::now() >= deadline) return;
      for (const auto& change : state.store.changes_after(cursor)) {
        cursor = change.revision;
        if (change.resource != plan.type) continue;
        const std::string type = filtered_type(change, matches);
        if (!type.empty()) lines.push_back(event_line(state, plan, type, *change.object));
      }
      if (!lines.empty()) break;
      if (plan.bookmarks && std::chrono::steady_clock::now() >= bookmark_due) {
        lines.push_back(bookmark_line(plan, state.store.revision(), false));
        break;
      }
      state.store.changed().wait_for(lock, std::chrono::milliseconds(200));
    }
  }
}

}  // namespace corral::kubernetes::standin
