// Newline-delimited messages from a file descriptor, bounded: a line longer than the
// limit is reported once and skipped to its end, never buffered whole, so a hostile
// client cannot make the server hold more than `max_line` bytes of one message.
//
// Threads: one reader per descriptor, used by one thread.
#pragma once

#include <cstddef>
#include <string>

namespace corral::mcp {

class LineReader {
 public:
  enum class Status {
    line,       // `line` holds the next line, without its newline (a trailing \r dropped)
    oversized,  // a line over the limit was skipped (its first bytes are in `line`)
    idle,       // nothing arrived within the timeout
    eof,        // the descriptor closed (a last line without a newline came before)
  };

  // Reads `fd`, which stays the caller's; lines of up to `max_line` bytes.
  LineReader(int fd, std::size_t max_line);
  // The next line, waiting at most `timeout_ms` for input. Throws std::system_error on a
  // read error other than EINTR.
  Status next(std::string& line, int timeout_ms);

 private:
  // Takes one line out of the buffer if it holds one.
  bool take_line(std::string& line);

  int fd_;
  std::size_t max_line_;
  std::string buffer_;
  bool skipping_ = false;  // inside a line over the limit: drop bytes up to its newline
  bool eof_ = false;
};

}  // namespace corral::mcp
