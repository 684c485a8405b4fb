// Reading the fields of a provider's JSON answer. A field of the wrong type (the json
// getters throw invalid-argument for it) or an object that is not one is the provider's
// fault, never the user's: each becomes http::unexpected_answer naming the call.
#pragma once

#include <string>
#include <string_view>

#include "corral/json.hpp"
#include "corral/sdk/http.hpp"

namespace corral::sdk::http {

// Returns `read()`; an Error it throws becomes unexpected_answer(what, its message).
template <class Read>
auto read_answer(std::string_view what, Read&& read) -> decltype(read()) {
  try {
    return read();
  } catch (const Error& e) {
    throw unexpected_answer(what, e.what());
  }
}

// read_answer of `read(object)`, once an `object` that is none is refused: "<noun> is not a JSON object".
template <class Read>
auto read_object(const json::Value& object, std::string_view what, std::string_view noun, Read&& read)
    -> decltype(read(object)) {
  if (!object.IsObject()) throw unexpected_answer(what, std::string(noun) + " is not a JSON object");
  return read_answer(what, [&] { return read(object); });
}

}  // namespace corral::sdk::http
