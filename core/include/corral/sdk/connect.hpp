// The Connect protocol's streaming wire format (connectrpc.com): every message of a
// streaming request or response body is an envelope [flags:1][length:4, big-endian]
// [payload]. The last envelope of a server stream carries flag 0x02 (end of stream) and
// a JSON payload that is {} or {"error":{"code","message"}}.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "corral/types.hpp"

namespace corral::sdk::connect {

inline constexpr std::uint8_t kFlagCompressed = 0x01;
inline constexpr std::uint8_t kFlagEndStream = 0x02;
inline constexpr const char* kStreamContentType = "application/connect+json";
inline constexpr const char* kProtocolVersionHeader = "Connect-Protocol-Version";

// One envelope: the whole request body of a server-streaming call with one message.
std::string envelope(std::string_view payload, std::uint8_t flags = 0);

struct Message {
  std::uint8_t flags = 0;
  std::string payload;
  bool end_stream() const { return (flags & kFlagEndStream) != 0; }
};

// Splits a response body, fed in arbitrary chunks, into envelopes. Memory is bounded by
// one message of at most `max_message` bytes.
class Decoder {
 public:
  explicit Decoder(std::size_t max_message = 16 * 1024 * 1024) : max_message_(max_message) {}
  // Calls `on_message` for each envelope completed by `chunk`; the message is mutable so
  // it can be parsed in place (it is reused for the next one). Throws Error(unavailable)
  // for a message above the limit or a compressed one (we never ask for compression).
  void feed(std::string_view chunk, const std::function<void(Message&)>& on_message);
  // True when no envelope is partially received (a clean place for a stream to end).
  bool at_boundary() const { return header_fill_ == 0 && !in_payload_; }

 private:
  std::size_t max_message_;
  unsigned char header_[5] = {0};
  std::size_t header_fill_ = 0;
  bool in_payload_ = false;
  std::size_t need_ = 0;
  Message current_;
};

// The error an end-of-stream payload reports, or nullopt for a clean end ({}).
struct StreamError {
  std::string code;  // Connect code: "not_found", "unauthenticated", ...
  std::string message;
};
// Throws Error(unavailable) for a payload that is not JSON of that shape.
std::optional<StreamError> end_stream_error(std::string_view payload);

// The corral::ErrorCode a Connect error code stands for.
ErrorCode code_for(std::string_view connect_code);

}  // namespace corral::sdk::connect
