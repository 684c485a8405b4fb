#include "corral/sdk/connect.hpp"

#include <algorithm>

#include "corral/json.hpp"

namespace corral::sdk::connect {

std::string envelope(std::string_view payload, std::uint8_t flags) {
  const auto n = static_cast<std::uint32_t>(payload.size());
  std::string out;
  out.reserve(5 + payload.size());
  out += static_cast<char>(flags);
  out += static_cast<char>((n >> 24) & 0xff);
  out += static_cast<char>((n >> 16) & 0xff);
  out += static_cast<char>((n >> 8) & 0xff);
  out += static_cast<char>(n & 0xff);
  out.append(payload);
  return out;
}

void Decoder::feed(std::string_view chunk, const std::function<void(Message&)>& on_message) {
  while (!chunk.empty()) {
    if (!in_payload_) {
      const std::size_t take = std::min(chunk.size(), sizeof header_ - header_fill_);
      std::copy_n(chunk.data(), take, header_ + header_fill_);
      header_fill_ += take;
      chunk.remove_prefix(take);
      if (header_fill_ < sizeof header_) return;
      header_fill_ = 0;
      current_.flags = header_[0];
      need_ = (std::size_t{header_[1]} << 24) | (std::size_t{header_[2]} << 16) |
              (std::size_t{header_[3]} << 8) | std::size_t{header_[4]};
      if (current_.flags & kFlagCompressed)
        throw Error(ErrorCode::unavailable, "the stream sent a compressed message, which was not requested");
      if (need_ > max_message_)
        throw Error(ErrorCode::unavailable, "the stream sent a message of " + std::to_string(need_) +
                                                " bytes, above the limit of " + std::to_string(max_message_));
      current_.payload.clear();
      in_payload_ = true;
    }
    const std::size_t take = std::min(chunk.size(), need_ - current_.payload.size());
    current_.payload.append(chunk.data(), take);
    chunk.remove_prefix(take);
    if (current_.payload.size() == need_) {
      in_payload_ = false;
      on_message(current_);
    }
  }
}

std::optional<StreamError> end_stream_error(std::string_view payload) {
  if (payload.empty()) return std::nullopt;
  try {
    json::Document doc = json::parse(payload, "the end-of-stream message");
    const json::Value* error = json::find(doc, "error");
    if (!error) return std::nullopt;
    if (!error->IsObject()) throw Error(ErrorCode::invalid_argument, "its 'error' is not an object");
    StreamError e;
    e.code = json::get_string(*error, "code", "unknown");
    e.message = json::get_string(*error, "message");
    return e;
  } catch (const Error& e) {
    throw Error(ErrorCode::unavailable, std::string("the stream ended with an unexpected message: ") + e.what(),
                "retry in a moment; if it persists, a proxy may be answering in the provider's place");
  }
}

ErrorCode code_for(std::string_view c) {
  if (c == "canceled") return ErrorCode::cancelled;
  if (c == "invalid_argument" || c == "failed_precondition" || c == "out_of_range" || c == "already_exists")
    return ErrorCode::invalid_argument;
  if (c == "deadline_exceeded") return ErrorCode::timeout;
  if (c == "not_found") return ErrorCode::not_found;
  if (c == "permission_denied" || c == "unauthenticated") return ErrorCode::auth;
  if (c == "resource_exhausted") return ErrorCode::quota;
  if (c == "unavailable" || c == "aborted") return ErrorCode::unavailable;
  if (c == "unimplemented") return ErrorCode::unsupported;
  return ErrorCode::internal;
}

}  // namespace corral::sdk::connect
