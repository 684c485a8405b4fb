// What the stand-in sends back, checked against the OpenAPI schemas on the way out: a
// field missing that the schema requires, a wrong type or an unknown field is a stand-in
// bug, recorded in State::answer_violations for the tests to fail on.
#pragma once

#include <string>

#include "http_types.hpp"
#include "state.hpp"
#include "status.hpp"

namespace corral::kubernetes::standin {

// The JSON text of `value` as an answer of schema `schema`, after the corrupt-answer
// fault (when armed) and the schema check. Caller holds the mutex.
std::string answer_text(State& state, const json::Value& value, const std::string& schema, const std::string& route);

HttpResponse object_response(State& state, int status, const json::Value& object, const std::string& schema,
                             const std::string& route);
// A Failure Status answer (with Retry-After for a 429). Caller holds the mutex.
HttpResponse error_response(State& state, const ApiError& error, const std::string& route);

}  // namespace corral::kubernetes::standin
