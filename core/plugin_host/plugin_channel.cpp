#include "plugin_host/plugin_channel.hpp"

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace corral::channel {

std::string_view encode_u32(std::uint32_t value, char (&buffer)[4]) {
  for (int i = 0; i < 4; ++i) buffer[i] = static_cast<char>((value >> (8 * i)) & 0xff);
  return {buffer, 4};
}

std::uint32_t decode_u32(std::string_view bytes) {
  std::uint32_t value = 0;
  for (size_t i = 0; i < 4 && i < bytes.size(); ++i)
    value |= std::uint32_t(static_cast<unsigned char>(bytes[i])) << (8 * i);
  return value;
}

bool write_frame(int fd, Kind kind, std::string_view a, std::string_view b) {
  char header[5];
  char length[4];
  encode_u32(static_cast<std::uint32_t>(1 + a.size() + b.size()), length);
  std::memcpy(header, length, 4);
  header[4] = static_cast<char>(kind);
  iovec parts[3] = {{header, sizeof header},
                    {const_cast<char*>(a.data()), a.size()},
                    {const_cast<char*>(b.data()), b.size()}};
  iovec* v = parts;
  int count = 3;
  while (count > 0) {
    // sendmsg for MSG_NOSIGNAL: a peer that died is an answer (false), not a SIGPIPE.
    msghdr m{};
    m.msg_iov = v;
    m.msg_iovlen = static_cast<size_t>(count);
    ssize_t n = ::sendmsg(fd, &m, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    auto left = static_cast<size_t>(n);
    while (count > 0 && left >= v->iov_len) {
      left -= v->iov_len;
      ++v;
      --count;
    }
    if (count > 0) {
      v->iov_base = static_cast<char*>(v->iov_base) + left;
      v->iov_len -= left;
    }
  }
  return true;
}

Reader::Fill Reader::fill() {
  if (oversized_) return Fill::broken;
  constexpr size_t kChunk = 256 * 1024;
  // Drop what was handed out; keep a partial frame at the front.
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  size_t want = kChunk;
  if (end_ >= 4) want = std::max(want, size_t(4) + decode_u32({buffer_.data(), 4}));
  if (buffer_.size() < end_ + kChunk || buffer_.size() < want) buffer_.resize(std::max(end_ + kChunk, want));
  for (;;) {
    ssize_t n = ::read(fd_, buffer_.data() + end_, buffer_.size() - end_);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return Fill::eof;
    if (n < 0) return Fill::broken;
    end_ += static_cast<size_t>(n);
    return Fill::data;
  }
}

std::optional<Frame> Reader::next() {
  if (end_ - begin_ < 4) return std::nullopt;
  std::uint32_t length = decode_u32({buffer_.data() + begin_, 4});
  if (length == 0 || length > kMaxBody) {
    oversized_ = true;
    return std::nullopt;
  }
  if (end_ - begin_ < 4 + size_t(length)) return std::nullopt;
  Frame f{static_cast<Kind>(buffer_[begin_ + 4]), std::string_view(buffer_.data() + begin_ + 5, length - 1)};
  begin_ += 4 + length;
  return f;
}

}  // namespace corral::channel
