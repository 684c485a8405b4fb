// The wire between corral and its plugin helper (corral-plugin-host, isolation: process):
// length-prefixed frames over a stream socket. A frame is a 4-byte little-endian body
// length, then the body: one kind byte and the payload. Small on purpose: it carries the
// C ABI's calls and callbacks one for one, so both sides stay thin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace corral::channel {

enum class Kind : std::uint8_t {
  // corral -> helper
  open = 'o',    // payload: the open config JSON
  call = 'c',    // payload: primitive name, NUL, request JSON
  cancel = 'x',  // the user asked to stop the call in progress (the ABI's cancelled())
  close = 'q',   // close the instance and exit
  signal = 's',  // payload: a signal number byte: pass it on to the command (take_signal())
  input = 'i',   // payload: the command's input, answering one want_input; empty: its end
  window = 'z',  // payload: the user's terminal size as 4 bytes, rows << 16 | cols (window_size())
  // helper -> corral
  hello = 'h',     // payload: primitive names (space separated), NUL, load_report JSON
  result = 'r',    // payload: the result JSON
  error = 'e',     // payload: code byte, has-hint byte, message, NUL, hint
  emit = 'w',      // payload: stream byte, output bytes
  log = 'g',       // payload: level byte, message
  progress = 'p',  // payload: message
  transfer = 't',  // payload: bytes done and total in decimal, space separated
  retry_after = 'a',  // payload: milliseconds as 4 bytes, before the error it qualifies
  done = 'd',      // payload: the primitive's return code as 4 bytes (open: 0 = opened)
  want_input = 'n',  // payload: the most bytes wanted, as 4 bytes: send one input frame
};

// Larger bodies are refused as a broken peer; emit splits output well below it.
inline constexpr std::size_t kMaxBody = 16u << 20;
// The largest output piece one emit frame carries.
inline constexpr std::size_t kMaxEmit = 1u << 20;

// Writes one frame whose payload is `a` followed by `b`, whole, retrying on EINTR;
// false when the peer is gone. Not thread-safe: callers serialise writers.
bool write_frame(int fd, Kind kind, std::string_view a = {}, std::string_view b = {});

// A little-endian 4-byte integer, as frames carry them.
std::string_view encode_u32(std::uint32_t value, char (&buffer)[4]);
std::uint32_t decode_u32(std::string_view bytes);

struct Frame {
  Kind kind;
  std::string_view payload;  // valid until the reader's next fill()
};

// Reads frames from a socket into one growing buffer, so output frames are handed on
// without a copy.
class Reader {
 public:
  explicit Reader(int fd) : fd_(fd) {}
  enum class Fill { data, eof, broken };
  // Reads what the socket has (blocking until something arrives): data, or eof when the
  // peer closed, or broken on a read error or an oversized frame.
  Fill fill();
  // The next whole frame already buffered, or nullopt.
  std::optional<Frame> next();

 private:
  int fd_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0, end_ = 0;
  bool oversized_ = false;
};

}  // namespace corral::channel
