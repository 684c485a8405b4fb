// The plugin primitives as C++ sees them, generated from corral/primitives.def: the
// enumeration, each one's name, C ABI slot and limits, and the compile-time proof that the
// .def and the C struct corral_plugin_v1 (plugin_abi.h) describe the same slots.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <type_traits>

#include "corral/plugin_abi.h"

namespace corral {

enum class Primitive {
#define CORRAL_PRIMITIVE(slot, need, deadline, request, result) slot,
#include "corral/primitives.def"
};

// What the rest of corral needs to know about one primitive.
struct PrimitiveInfo {
  const char* name;                        // "exec"
  corral_call_fn corral_plugin_v1::*slot;  // its member of the descriptor
  bool required;                           // every plugin provides it
  bool call_timeout;                       // a registry entry's call-timeout binds it
};

namespace primitive_def {
// The words of primitives.def's need and deadline columns.
enum Need { required, optional };
enum Deadline { call_timeout, unbounded };
}  // namespace primitive_def

// Every primitive, in the descriptor's order (indexed by Primitive).
inline constexpr std::array kPrimitives = {
#define CORRAL_PRIMITIVE(slot, need, deadline, request, result)                                                      \
  PrimitiveInfo{#slot, &corral_plugin_v1::slot, primitive_def::need == primitive_def::required, \
                primitive_def::deadline == primitive_def::call_timeout},
#include "corral/primitives.def"
};

// The declaration of primitive `p`.
constexpr const PrimitiveInfo& primitive_info(Primitive p) { return kPrimitives[static_cast<std::size_t>(p)]; }
// The name of primitive `p` ("exec").
constexpr const char* primitive_name(Primitive p) { return primitive_info(p).name; }
// The primitive called `name`, or nullopt (the plugin helper's frames carry names).
constexpr std::optional<Primitive> primitive_named(std::string_view name) {
  for (std::size_t i = 0; i < kPrimitives.size(); ++i)
    if (name == kPrimitives[i].name) return static_cast<Primitive>(i);
  return std::nullopt;
}
// Primitive `p` of descriptor `table`, or nullptr when the plugin does not provide it.
constexpr corral_call_fn primitive_entry(const corral_plugin_v1& table, Primitive p) {
  return table.*primitive_info(p).slot;
}

// The .def and the C struct cannot drift: each primitive names a call slot, the slots
// follow `close` in the .def's order, and the struct has no call slot the .def lacks.
namespace primitive_def {
inline constexpr std::size_t kFirstSlot = offsetof(corral_plugin_v1, close) + sizeof(corral_plugin_v1::close);
#define CORRAL_PRIMITIVE(slot, need, deadline, request, result)                                                              \
  static_assert(std::is_same_v<decltype(corral_plugin_v1::slot), corral_call_fn>,                           \
                "primitives.def: corral_plugin_v1::" #slot " is not a corral_call_fn slot");                \
  static_assert(offsetof(corral_plugin_v1, slot) ==                                                         \
                    kFirstSlot + static_cast<std::size_t>(Primitive::slot) * sizeof(corral_call_fn),         \
                "primitives.def: '" #slot "' is not at its place in corral_plugin_v1: list the primitives " \
                "in the struct's order");
#include "corral/primitives.def"
static_assert(sizeof(corral_plugin_v1) == kFirstSlot + kPrimitives.size() * sizeof(corral_call_fn),
              "corral_plugin_v1 ends in a slot primitives.def does not declare: add a CORRAL_PRIMITIVE line for it");
}  // namespace primitive_def

}  // namespace corral
