// Base64 (RFC 4648), one codec for every part of corral: proto3 JSON's `bytes` fields
// (E2B's envd), kubeconfigs' *-data fields, HTTP Basic credentials, the MCP file tools and
// Daytona's encoded output. Plain code, no OpenSSL: the host links no crypto library.
//
// Threads: free functions on values; safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace corral::sdk {

// `bytes` in the standard alphabet, padded.
std::string base64_encode(std::string_view bytes);

// The bytes `text` encodes, read strictly: the standard alphabet, padding optional, no
// whitespace, and no stray bits after the last byte. nullopt when `text` is anything else.
std::optional<std::string> base64_decode(std::string_view text);

// Decodes `text` as protobuf's JSON parsers read a `bytes` field: the standard or the
// URL-safe alphabet, padding optional. Replaces `out`'s contents. Throws
// Error(unavailable) naming `what` ("envd sent output") on text that is not base64.
void base64_decode_lenient(std::string_view text, std::string& out, std::string_view what);

// The value (0..63) of one standard-alphabet digit, or -1: for decoders of their own
// framing (Daytona's wrapped, chunk-padded lines).
int base64_digit(char c);

}  // namespace corral::sdk
