#include "corral/wire.hpp"

#include "corral/model_shapes.hpp"

namespace corral::shape {

using namespace corral::wire;

template <>
struct Shape<Empty> {
  static constexpr auto fields = std::tuple{};
};
template <>
struct Shape<DoctorResult> {
  static constexpr auto fields = std::tuple{field("checks", &DoctorResult::checks)};
};
template <>
struct Shape<OpenRequest> {
  static constexpr auto fields = std::tuple{field("options", &OpenRequest::options)};
};
template <>
struct Shape<OpenResult> {
  static constexpr auto fields = std::tuple{field("target", &OpenResult::target, omitted)};
};
template <>
struct Shape<GetRequest> {
  static constexpr auto fields = std::tuple{field("id", &GetRequest::id)};
};
template <>
struct Shape<ListRequest> {
  static constexpr auto fields = std::tuple{field("labels", &ListRequest::labels)};
};
template <>
struct Shape<ListResult> {
  // Listings carry no secrets: a listed sandbox is reached through get() first.
  static constexpr auto fields =
      std::tuple{field_as<PublicSandboxes>("sandboxes", &ListResult::sandboxes, required)};
};
template <>
struct Shape<SandboxRequest> {
  static constexpr auto fields = std::tuple{field("sandbox", &SandboxRequest::sandbox, required)};
};
template <>
struct Shape<ExecRequest> {
  static constexpr auto fields =
      std::tuple{field("sandbox", &ExecRequest::sandbox, required), field("command", &ExecRequest::command, required)};
};
template <>
struct Shape<UploadCall> {
  static constexpr auto fields = std::tuple{field("sandbox", &UploadCall::sandbox, required), flat(&UploadCall::upload)};
};
template <>
struct Shape<DownloadCall> {
  static constexpr auto fields =
      std::tuple{field("sandbox", &DownloadCall::sandbox, required), flat(&DownloadCall::download)};
};
template <>
struct Shape<ExtendRequest> {
  static constexpr auto fields =
      std::tuple{field("sandbox", &ExtendRequest::sandbox, required), field("seconds", &ExtendRequest::seconds)};
};
template <>
struct Shape<UrlRequest> {
  static constexpr auto fields =
      std::tuple{field("sandbox", &UrlRequest::sandbox, required), field("port", &UrlRequest::port)};
};
template <>
struct Shape<UrlResult> {
  static constexpr auto fields = std::tuple{field("url", &UrlResult::url)};
};
template <>
struct Shape<ForkRequest> {
  static constexpr auto fields =
      std::tuple{field("sandbox", &ForkRequest::sandbox, required), field("forks", &ForkRequest::forks, required)};
};
template <>
struct Shape<ForkResult> {
  static constexpr auto fields = std::tuple{field("forks", &ForkResult::forks, required)};
};

}  // namespace corral::shape

namespace corral::wire {

StringMap owner_labels(const std::string& lease_id, const std::string& slug, const std::string& host_id) {
  StringMap labels = {{kOwnerLabel, kOwnerValue}, {kLeaseLabel, lease_id}, {kSlugLabel, slug}};
  if (!host_id.empty()) labels[kHostLabel] = host_id;
  return labels;
}

bool labels_match(const StringMap& labels, const StringMap& filter) {
  for (const auto& [key, value] : filter) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  return true;
}

template <class T>
std::string to_json(const T& message) {
  return shape::to_json(message);
}

template <class T>
T read(std::string_view text, std::string_view what) {
  return shape::from_json<T>(text, what);
}

template <>
Sandbox read<Sandbox>(std::string_view text, std::string_view what) {
  return json::sandbox_from(json::parse(text, what));
}

// Each message primitives.def names has a shape...
#define CORRAL_PRIMITIVE(slot, need, deadline, request, result)                                             \
  static_assert(shape::has_shape<Messages<Primitive::slot>::Request>::value, #request " has no JSON shape"); \
  static_assert(shape::has_shape<Messages<Primitive::slot>::Result>::value, #result " has no JSON shape");
#include "corral/primitives.def"

// ...and its reader and writer here, once each (one forgotten fails at link time, naming it).
#define CORRAL_WIRE_MESSAGE(T)               \
  template std::string to_json<T>(const T&); \
  template T read<T>(std::string_view, std::string_view);
CORRAL_WIRE_MESSAGE(Empty)
CORRAL_WIRE_MESSAGE(DoctorResult)
CORRAL_WIRE_MESSAGE(OpenRequest)
CORRAL_WIRE_MESSAGE(OpenResult)
CORRAL_WIRE_MESSAGE(CreateRequest)
CORRAL_WIRE_MESSAGE(GetRequest)
CORRAL_WIRE_MESSAGE(ListRequest)
CORRAL_WIRE_MESSAGE(ListResult)
CORRAL_WIRE_MESSAGE(SandboxRequest)
template std::string to_json<Sandbox>(const Sandbox&);  // its reader is its own, above
CORRAL_WIRE_MESSAGE(ExecRequest)
CORRAL_WIRE_MESSAGE(ExecResult)
CORRAL_WIRE_MESSAGE(UploadCall)
CORRAL_WIRE_MESSAGE(DownloadCall)
CORRAL_WIRE_MESSAGE(DownloadResult)
CORRAL_WIRE_MESSAGE(ExtendRequest)
CORRAL_WIRE_MESSAGE(UrlRequest)
CORRAL_WIRE_MESSAGE(UrlResult)
CORRAL_WIRE_MESSAGE(ForkRequest)
CORRAL_WIRE_MESSAGE(ForkResult)
#undef CORRAL_WIRE_MESSAGE

}  // namespace corral::wire
