// Provider features, generated from corral/primitives.def: what a provider advertises in
// its spec, and the primitives each one needs.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "corral/primitives.hpp"

namespace corral {

enum class Feature {
#define CORRAL_FEATURE(id, name, primitives, description) id,
#include "corral/primitives.def"
};
inline constexpr std::array kAllFeatures = {
#define CORRAL_FEATURE(id, name, primitives, description) Feature::id,
#include "corral/primitives.def"
};

// Canonical name of a feature ("run-session").
std::string_view to_string(Feature feature);
// The feature named `name`, or nullopt for an unknown name.
std::optional<Feature> parse_feature(std::string_view name);
// One line of help per feature, for legends and error messages.
std::string_view describe(Feature feature);
// The optional primitives a plugin must provide to advertise `feature`.
std::vector<Primitive> required_primitives(Feature feature);

// A small value set of features.
class FeatureSet {
 public:
  FeatureSet() = default;
  FeatureSet(std::initializer_list<Feature> features) {
    for (Feature f : features) insert(f);
  }
  void insert(Feature f) { bits_ |= bit(f); }
  bool has(Feature f) const { return (bits_ & bit(f)) != 0; }
  bool empty() const { return bits_ == 0; }
  // Canonical names in declaration order.
  std::vector<std::string> names() const;
  bool operator==(const FeatureSet&) const = default;

 private:
  static std::uint32_t bit(Feature f) { return 1u << static_cast<unsigned>(f); }
  std::uint32_t bits_ = 0;
};
static_assert(kAllFeatures.size() <= 32, "FeatureSet holds at most 32 features: widen its bits");

}  // namespace corral
