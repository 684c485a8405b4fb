#include "line_reader.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace corral::mcp {

LineReader::LineReader(int fd, std::size_t max_line) : fd_(fd), max_line_(max_line) {}

bool LineReader::take_line(std::string& line) {
  const std::size_t newline = buffer_.find('\n');
  if (newline == std::string::npos) return false;
  line.assign(buffer_, 0, newline);
  buffer_.erase(0, newline + 1);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

LineReader::Status LineReader::next(std::string& line, int timeout_ms) {
  for (;;) {
    if (skipping_) {
      const std::size_t newline = buffer_.find('\n');
      if (newline == std::string::npos) {
        buffer_.clear();
      } else {
        buffer_.erase(0, newline + 1);
        skipping_ = false;
      }
    }
    if (!skipping_ && take_line(line)) {
      if (line.size() <= max_line_) return Status::line;
      line.resize(64);
      return Status::oversized;
    }
    if (!skipping_ && buffer_.size() > max_line_) {
      line = buffer_.substr(0, 64);
      buffer_.clear();
      skipping_ = true;
      return Status::oversized;
    }
    if (eof_) {
      if (skipping_ || buffer_.empty()) return Status::eof;
      line = std::move(buffer_);
      buffer_.clear();
      return line.size() <= max_line_ ? Status::line : Status::oversized;
    }
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, timeout_ms);
    if (ready < 0 && errno != EINTR) throw std::system_error(errno, std::generic_category(), "poll");
    if (ready <= 0) return Status::idle;
    char chunk[65536];
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw std::system_error(errno, std::generic_category(), "read");
    }
    if (n == 0) eof_ = true;
    else buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

}  // namespace corral::mcp
