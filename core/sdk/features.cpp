#include "corral/features.hpp"

// A .def line's list of primitives, "(pause, resume)", without its parentheses.
#define CORRAL_UNPARENTHESIZED(...) __VA_ARGS__

namespace corral {

namespace {

struct FeatureInfo {
  std::string_view name;
  std::string_view description;
};

constexpr FeatureInfo kFeatures[] = {
#define CORRAL_FEATURE(id, name, primitives, description) {name, description},
#include "corral/primitives.def"
};

const FeatureInfo& info(Feature feature) { return kFeatures[static_cast<std::size_t>(feature)]; }

}  // namespace

std::string_view to_string(Feature feature) { return info(feature).name; }

std::optional<Feature> parse_feature(std::string_view name) {
  for (Feature f : kAllFeatures)
    if (to_string(f) == name) return f;
  return std::nullopt;
}

std::string_view describe(Feature feature) { return info(feature).description; }

std::vector<Primitive> required_primitives(Feature feature) {
  using enum Primitive;
  switch (feature) {
#define CORRAL_FEATURE(id, name, primitives, description) \
  case Feature::id: return {CORRAL_UNPARENTHESIZED primitives};
#include "corral/primitives.def"
  }
  return {};
}

std::vector<std::string> FeatureSet::names() const {
  std::vector<std::string> out;
  for (Feature f : kAllFeatures)
    if (has(f)) out.emplace_back(to_string(f));
  return out;
}

}  // namespace corral
