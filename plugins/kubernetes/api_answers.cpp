#include "api_answers.hpp"

#include <string_view>
#include "corral/sdk/printable.hpp"

namespace corral::kubernetes {
namespace {

// What JSON value `v` is, in words: "a string", "an array", ...
std::string kind_of(const json::Value& v) {
  if (v.IsNull()) return "null";
  if (v.IsBool()) return "true or false";
  if (v.IsNumber()) return "a number";
  if (v.IsString()) return "a string";
  if (v.IsArray()) return "an array";
  return "an object";
}

}  // namespace

std::string answer_to(const Call& call) {
  return "the API server's answer to " + call.method + " " + call.path.substr(0, call.path.find('?'));
}

Error not_a(const std::string& what, const std::string& answer, const std::string& kind, const std::string& why) {
  return sdk::http::unexpected_answer(what, answer + " is not a " + kind + ": " + sdk::printable(why));
}

void check_object(const json::Value& object, const std::string& what, const std::string& answer,
                  const std::string& kind) {
  if (!object.IsObject()) throw not_a(what, answer, kind, "it is " + kind_of(object));
  for (const char* member : {"metadata", "spec", "status"}) {
    if (kind == "Status" && std::string_view(member) == "status") continue;  // a Status's own is "Failure"
    auto it = object.FindMember(member);
    if (it != object.MemberEnd() && !it->value.IsNull() && !it->value.IsObject())
      throw not_a(what, answer, kind, std::string(member) + " is " + kind_of(it->value));
  }
  if (auto it = object.FindMember("items"); it != object.MemberEnd() && !it->value.IsNull() && !it->value.IsArray())
    throw not_a(what, answer, kind, "items is " + kind_of(it->value));
}

json::Document parse_answer(const sdk::http::Response& response, const Call& call, const std::string& kind) {
  try {
    return json::parse(response.body, "the body");
  } catch (const Error& e) {
    throw not_a(call.what, answer_to(call), kind, e.what());
  }
}

}  // namespace corral::kubernetes
