// JSON shapes declared once. A struct's JSON form is the list of its fields, each with its
// key and the rule for when it appears; one template writes and reads every struct so
// declared. The plugin wire, lease claims, the session handle and the local provider's
// sandbox record all use it, so a key is spelt in exactly one place and a field cannot be
// written under one name and read under another.
//
//   template <> struct corral::shape::Shape<UrlRequest> {
//     static constexpr auto fields = std::tuple{field("sandbox", &UrlRequest::sandbox, required),
//                                               field("port", &UrlRequest::port)};
//   };
//
// Beside member fields a shape may list `flat(&T::member)` (a member struct whose fields
// sit in the enclosing object) and `custom<Rule>()` (a rule that writes and reads the
// whole struct: derived keys, validation at that point). A shape may also define
// `static void check(T&, std::string_view what)`, run after every read.
//
// Thread rules: none. Everything here is a pure function of its arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "corral/json.hpp"
#include "corral/types.hpp"

namespace corral::shape {

// When a field appears in the JSON text.
enum class Presence {
  always,    // written even when empty; an absent or null member reads as empty
  omitted,   // written only when not empty (proto3's rule); absent reads as empty
  required,  // written always; a text without it (or with null) is refused, naming it
};
inline constexpr Presence always = Presence::always;
inline constexpr Presence omitted = Presence::omitted;
inline constexpr Presence required = Presence::required;

// The field list of struct T: `static constexpr auto fields = std::tuple{...}`.
template <class T>
struct Shape;

// How a value of type M is written and read:
//   static bool empty(const M&);                  // for Presence::omitted
//   static void write(json::Writer&, const M&);
//   static M read(const json::Value&, const char* key);  // the member's value, never null
template <class M, class Enable = void>
struct Codec;

template <class T, class M, class C>
struct Field {
  const char* key;
  M T::*member;
  Presence presence;
};
template <class T, class M>
struct Flat {
  M T::*member;
};
template <class T, class Rule>
struct Custom {};

// A member written and read by its type's codec.
template <class T, class M>
constexpr Field<T, M, Codec<M>> field(const char* key, M T::*member, Presence presence = always) {
  return {key, member, presence};
}
// A member written and read by codec C (another form of the same type).
template <class C, class T, class M>
constexpr Field<T, M, C> field_as(const char* key, M T::*member, Presence presence = always) {
  return {key, member, presence};
}
// A member struct (with a Shape) whose fields are written into the enclosing object.
template <class T, class M>
constexpr Flat<T, M> flat(M T::*member) {
  return {member};
}
// Rule's `static void write(json::Writer&, const T&)` and
// `static void read(const json::Value& object, T&, std::string_view what)`.
template <class T, class Rule>
constexpr Custom<T, Rule> custom() {
  return {};
}

// The error for a member of the wrong type: "field 'KEY' must be EXPECTED".
Error wrong_type(const char* key, const char* expected);

template <class T>
void write_fields(json::Writer& w, const T& value);
template <class T>
void read_fields(const json::Value& object, T& out, std::string_view what);

// T as a JSON object.
template <class T>
void write_object(json::Writer& w, const T& value) {
  w.StartObject();
  write_fields(w, value);
  w.EndObject();
}

// The compact JSON text of T.
template <class T>
std::string to_json(const T& value) {
  return json::text_of([&](json::Writer& w) { write_object(w, value); });
}

// T read from the object `object`; a non-object reads as one with no members (so only a
// required field refuses it). Errors are invalid-argument and name `what` or the field.
template <class T>
T read_object(const json::Value& object, std::string_view what) {
  T out{};
  read_fields(object, out, what);
  return out;
}

// T read from JSON text.
template <class T>
T from_json(std::string_view text, std::string_view what) {
  return read_object<T>(json::parse(text, what), what);
}

// --- codecs -----------------------------------------------------------------------------

template <class T, class = void>
struct has_shape : std::false_type {};
template <class T>
struct has_shape<T, std::void_t<decltype(Shape<T>::fields)>> : std::true_type {};

template <>
struct Codec<std::string> {
  static bool empty(const std::string& v) { return v.empty(); }
  static void write(json::Writer& w, const std::string& v) { json::write_text(w, v); }
  static std::string read(const json::Value& v, const char* key) {
    if (!v.IsString()) throw wrong_type(key, "a string");
    return {v.GetString(), v.GetStringLength()};
  }
};

template <>
struct Codec<bool> {
  static bool empty(bool v) { return !v; }
  static void write(json::Writer& w, bool v) { w.Bool(v); }
  static bool read(const json::Value& v, const char* key) {
    if (!v.IsBool()) throw wrong_type(key, "true or false");
    return v.GetBool();
  }
};

// An exit code, a port, a count: a whole number that fits, never a string or a fraction.
template <>
struct Codec<int> {
  static bool empty(int v) { return v == 0; }
  static void write(json::Writer& w, int v) { w.Int(v); }
  static int read(const json::Value& v, const char* key) {
    if (!v.IsInt()) throw wrong_type(key, "a whole number");
    return v.GetInt();
  }
};

template <>
struct Codec<std::int64_t> {
  static bool empty(std::int64_t v) { return v == 0; }
  static void write(json::Writer& w, std::int64_t v) { w.Int64(v); }
  static std::int64_t read(const json::Value& v, const char* key);
};

// A size: a negative number is refused rather than wrapped round to an enormous one.
template <>
struct Codec<std::uint64_t> {
  static bool empty(std::uint64_t v) { return v == 0; }
  static void write(json::Writer& w, std::uint64_t v) { w.Uint64(v); }
  static std::uint64_t read(const json::Value& v, const char* key);
};

template <>
struct Codec<StringMap> {
  static bool empty(const StringMap& v) { return v.empty(); }
  static void write(json::Writer& w, const StringMap& v);
  static StringMap read(const json::Value& v, const char* key);
};

template <>
struct Codec<std::vector<std::string>> {
  static bool empty(const std::vector<std::string>& v) { return v.empty(); }
  static void write(json::Writer& w, const std::vector<std::string>& v);
  static std::vector<std::string> read(const json::Value& v, const char* key);
};

// "none" or "allow:a.com,10.0.0.0/8"; open is the empty policy.
template <>
struct Codec<NetworkPolicy> {
  static bool empty(const NetworkPolicy& v) { return v.mode == NetworkPolicy::Mode::open; }
  static void write(json::Writer& w, const NetworkPolicy& v) { json::write_text(w, to_string(v)); }
  static NetworkPolicy read(const json::Value& v, const char* key) {
    return parse_network_policy(Codec<std::string>::read(v, key));
  }
};

// {"code": "not-found", "message": ..., "hint": ...}; a code outside the ABI's set (or the
// host's own config) reads as internal.
template <>
struct Codec<Error> {
  static void write(json::Writer& w, const Error& e);
  static Error read(const json::Value& v, const char* key);
};

template <class M>
struct Codec<std::optional<M>> {
  static bool empty(const std::optional<M>& v) { return !v; }
  static void write(json::Writer& w, const std::optional<M>& v) {
    if (v) Codec<M>::write(w, *v);
    else w.Null();
  }
  static std::optional<M> read(const json::Value& v, const char* key) { return Codec<M>::read(v, key); }
};

// A struct with a Shape of its own, as a nested object.
template <class M>
struct Codec<M, std::enable_if_t<has_shape<M>::value>> {
  static bool empty(const M&) { return false; }
  static void write(json::Writer& w, const M& v) { write_object(w, v); }
  static M read(const json::Value& v, const char* key) {
    if (!v.IsObject()) throw wrong_type(key, "an object");
    return read_object<M>(v, std::string("field '") + key + "'");
  }
};

// A list of structs with a Shape.
template <class M>
struct Codec<std::vector<M>, std::enable_if_t<has_shape<M>::value>> {
  static bool empty(const std::vector<M>& v) { return v.empty(); }
  static void write(json::Writer& w, const std::vector<M>& v) {
    w.StartArray();
    for (const M& item : v) write_object(w, item);
    w.EndArray();
  }
  static std::vector<M> read(const json::Value& v, const char* key) {
    if (!v.IsArray()) throw wrong_type(key, "a list");
    std::vector<M> out;
    out.reserve(v.Size());
    for (const json::Value& item : v.GetArray()) out.push_back(Codec<M>::read(item, key));
    return out;
  }
};

// --- the template -------------------------------------------------------------------------

namespace detail {

Error missing(std::string_view what, const char* key);

template <class T, class M, class C>
void write_entry(json::Writer& w, const T& value, const Field<T, M, C>& f) {
  const M& member = value.*(f.member);
  if (f.presence == Presence::omitted && C::empty(member)) return;
  w.Key(f.key);
  C::write(w, member);
}
template <class T, class M>
void write_entry(json::Writer& w, const T& value, const Flat<T, M>& f) {
  write_fields(w, value.*(f.member));
}
template <class T, class Rule>
void write_entry(json::Writer& w, const T& value, const Custom<T, Rule>&) {
  Rule::write(w, value);
}

template <class T, class M, class C>
void read_entry(const json::Value& object, T& out, std::string_view what, const Field<T, M, C>& f) {
  if (const json::Value* v = json::find(object, f.key)) out.*(f.member) = C::read(*v, f.key);
  else if (f.presence == Presence::required) throw missing(what, f.key);
}
template <class T, class M>
void read_entry(const json::Value& object, T& out, std::string_view what, const Flat<T, M>& f) {
  read_fields(object, out.*(f.member), what);
}
template <class T, class Rule>
void read_entry(const json::Value& object, T& out, std::string_view what, const Custom<T, Rule>&) {
  Rule::read(object, out, what);
}

template <class T, class = void>
struct has_check : std::false_type {};
template <class T>
struct has_check<T, std::void_t<decltype(Shape<T>::check(std::declval<T&>(), std::string_view{}))>>
    : std::true_type {};

}  // namespace detail

template <class T>
void write_fields(json::Writer& w, const T& value) {
  std::apply([&](const auto&... entry) { (detail::write_entry(w, value, entry), ...); }, Shape<T>::fields);
}

template <class T>
void read_fields(const json::Value& object, T& out, std::string_view what) {
  std::apply([&](const auto&... entry) { (detail::read_entry(object, out, what, entry), ...); }, Shape<T>::fields);
  if constexpr (detail::has_check<T>::value) Shape<T>::check(out, what);
}

}  // namespace corral::shape
