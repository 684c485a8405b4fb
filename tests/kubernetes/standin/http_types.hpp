// A request as the stand-in's handlers see it (already read off the TLS connection) and
// what they answer: a plain response, a watch to stream, or an exec to upgrade to.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "identity.hpp"
#include "resources.hpp"
#include "selectors.hpp"

namespace corral::kubernetes::standin {

struct HttpRequest {
  std::string method;
  std::string target;  // path and query as sent
  std::string path;    // percent-decoded
  std::multimap<std::string, std::string> query;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;

  std::string header(const std::string& name) const;
  bool has(const std::string& key) const { return query.count(key) != 0; }
  std::string param(const std::string& key) const;  // the first value, or ""
  std::vector<std::string> params(const std::string& key) const;
  // "true"/"1" as Go's strconv.ParseBool reads them.
  bool flag(const std::string& key) const;
};

// Splits a request target into its decoded path and query.
void parse_target(HttpRequest& request);

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

// A watch the server streams: the changes of `type` in `ns` (all when empty) that match
// the selectors, from after `from_revision` (nullopt: the current objects first, as ADDED).
struct WatchPlan {
  const ResourceType* type = nullptr;
  std::string ns;
  LabelSelector labels;
  FieldSelector fields;
  std::optional<std::int64_t> from_revision;
  bool bookmarks = false;              // allowWatchBookmarks
  bool initial_events_end = false;     // sendInitialEvents: a BOOKMARK marks their end
  int timeout_seconds = 1800;
  int end_after_events = -1;           // the watch-ends-early fault
  bool gone = false;                   // the 410 fault: one ERROR event and the end
  std::string route;
};

// An exec the server upgrades to a WebSocket.
struct ExecPlan {
  std::string ns, pod, container;
  std::vector<std::string> command;
  bool in = false, out = false, err = false, tty = false;
  std::string protocol;  // the negotiated subprotocol
};

using Outcome = std::variant<HttpResponse, WatchPlan, ExecPlan>;

}  // namespace corral::kubernetes::standin
