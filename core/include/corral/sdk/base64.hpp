// Base64 as proto3 JSON writes `bytes` fields and kubeconfigs their *-data fields
// (standard alphabet, padded); decoding also accepts the URL-safe alphabet and missing
// padding, as protobuf's JSON parsers do.
#pragma once

#include <string>
#include <string_view>

namespace corral::sdk {

// Decodes `text` into `out` (replacing its contents); throws Error(unavailable) on bad input.
void base64_decode(std::string_view text, std::string& out);
std::string base64_encode(std::string_view bytes);

}  // namespace corral::sdk
