// The wire vocabulary of the plugin ABI: one struct per primitive's request and result,
// each with one JSON shape (wire.cpp, corral/shape.hpp), used by the host
// (provider_session.cpp) and by the SDK's entry points (sdk.cpp) alike, so both sides
// always speak the same JSON. Also the
// labels that mark a sandbox as corral's, and the one rule for matching them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "corral/json.hpp"
#include "corral/primitives.hpp"
#include "corral/types.hpp"

namespace corral::wire {

// Labels core puts on every sandbox it creates. Plugins store them as the provider
// allows (labels, metadata, a name) and give them back from get and list.
inline constexpr const char* kOwnerLabel = "corral-owner";  // always kOwnerValue
inline constexpr const char* kOwnerValue = "corral";
inline constexpr const char* kLeaseLabel = "corral-lease";  // the lease id
inline constexpr const char* kSlugLabel = "corral-slug";    // the lease's human name
inline constexpr const char* kHostLabel = "corral-host";    // the corral state that owns it

// The labels of a sandbox created for lease `lease_id` by the corral host `host_id`.
StringMap owner_labels(const std::string& lease_id, const std::string& slug, const std::string& host_id);
// True when `labels` has every key of `filter` with the same value.
bool labels_match(const StringMap& labels, const StringMap& filter);

// {} -> DoctorResult
struct DoctorResult {
  std::vector<DoctorCheck> checks;
};
// open: the resolved option values.
struct OpenRequest {
  StringMap options;
};
// open's result, which a plugin may report (absent: {}): Provider::target().
struct OpenResult {
  std::string target;
};
struct GetRequest {
  std::string id;
};
struct ListRequest {
  StringMap labels;
};
struct ListResult {
  std::vector<Sandbox> sandboxes;
};
// destroy, pause and resume: the sandbox alone.
struct SandboxRequest {
  Sandbox sandbox;
};
struct ExecRequest {
  Sandbox sandbox;
  Command command;
};
struct UploadCall {
  Sandbox sandbox;
  UploadRequest upload;
};
struct DownloadCall {
  Sandbox sandbox;
  DownloadRequest download;
};
struct ExtendRequest {
  Sandbox sandbox;
  std::int64_t seconds = 0;
};
struct UrlRequest {
  Sandbox sandbox;
  int port = 0;
};
struct UrlResult {
  std::string url;
};
struct ForkRequest {
  Sandbox sandbox;
  std::vector<ForkTarget> forks;
};
struct ForkResult {
  std::vector<ForkOutcome> forks;  // one per ForkRequest::forks entry, in its order
};

// A primitive's request or result that carries nothing: "{}".
struct Empty {};

// The JSON text of message T, one of the messages primitives.def names (and Sandbox). A
// Sandbox travels with its secrets here: the wire runs from a plugin back into the same
// plugin, never to storage or the screen.
template <class T>
std::string to_json(const T& message);

// Reads message T from JSON text; a missing required field or a wrong type throws
// corral::Error naming `what` and the field.
template <class T>
T read(std::string_view text, std::string_view what);
// A sandbox answered alone must be an object: anything else is the provider's bug (internal).
template <>
Sandbox read<Sandbox>(std::string_view text, std::string_view what);

// The request and result types of primitive P, as primitives.def names them.
template <Primitive P>
struct Messages;
#define CORRAL_PRIMITIVE(slot, need, deadline, request, result) \
  template <>                                                  \
  struct Messages<Primitive::slot> {                           \
    using Request = request;                                   \
    using Result = result;                                     \
  };
#include "corral/primitives.def"

}  // namespace corral::wire
