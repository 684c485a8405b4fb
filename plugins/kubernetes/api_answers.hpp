// The API server's 2xx answers read as the objects they should be. Whatever is off in one
// (not JSON, not an object, metadata that is no object, a field of the wrong type) is the
// server's fault or a proxy's, never the user's: unexpected_answer (unavailable), naming
// the call and what it should have returned, e.g. "the API server's answer to GET
// /api/v1/namespaces/N/pods/P is not a Pod: metadata is a string".
#pragma once

#include <string>
#include <utility>

#include "api.hpp"
#include "corral/json.hpp"
#include "corral/sdk/http.hpp"

namespace corral::kubernetes {

// "the API server's answer to GET /api/v1/namespaces/N/pods/P" (the path without its query).
std::string answer_to(const Call& call);

// unexpected_answer for call `what`: "<answer> is not a <kind>: <why>".
Error not_a(const std::string& what, const std::string& answer, const std::string& kind, const std::string& why);

// Throws not_a unless `object` is a JSON object whose metadata, spec and status (but a
// Status's own, a string) are objects and whose items are an array, where it has them (null
// counts as absent, as json::find has it).
void check_object(const json::Value& object, const std::string& what, const std::string& answer,
                  const std::string& kind);

// `read(object)` once check_object passed; an Error it throws (json's getters throw for a
// field of the wrong type) becomes not_a with its words.
template <class Read>
auto read_as(const json::Value& object, const std::string& what, const std::string& answer, const std::string& kind,
             Read&& read) -> decltype(read(object)) {
  check_object(object, what, answer, kind);
  try {
    return read(object);
  } catch (const Error& e) {
    throw not_a(what, answer, kind, e.what());
  }
}

// The body of `response`, the 2xx answer to `call`, parsed; not JSON is not_a.
json::Document parse_answer(const sdk::http::Response& response, const Call& call, const std::string& kind);

// read_as of the body of `response`, the 2xx answer to `call`, which should be a `kind`.
template <class Read>
auto read_answer(const sdk::http::Response& response, const Call& call, const std::string& kind, Read&& read) {
  json::Document doc = parse_answer(response, call, kind);
  return read_as(doc, call.what, answer_to(call), kind, std::forward<Read>(read));
}

}  // namespace corral::kubernetes
