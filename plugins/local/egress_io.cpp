#include "egress_io.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

namespace corral::local {

bool wait_for(int stop, int fd, short events, std::optional<EgressClock::time_point> deadline) {
  for (;;) {
    int ms = -1;
    if (deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - EgressClock::now()).count();
      if (left <= 0) return false;
      ms = static_cast<int>(std::min<long long>(left, 60'000));
    }
    pollfd p[2] = {{fd, events, 0}, {stop, POLLIN, 0}};
    const int n = ::poll(p, 2, ms);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || p[1].revents) return false;
    if (p[0].revents) return true;
  }
}

bool send_all(int stop, int fd, std::string_view data, std::optional<EgressClock::time_point> deadline) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
    if (!wait_for(stop, fd, POLLOUT, deadline)) return false;
  }
  return true;
}

bool receive_some(int stop, int fd, std::string& buffer, EgressClock::time_point deadline, size_t max) {
  for (;;) {
    char chunk[16384];
    const ssize_t n = ::recv(fd, chunk, std::min(max, sizeof chunk), 0);
    if (n > 0) {
      buffer.append(chunk, static_cast<size_t>(n));
      return true;
    }
    if (n == 0 || (errno != EAGAIN && errno != EINTR)) return false;
    if (!wait_for(stop, fd, POLLIN, deadline)) return false;
  }
}

bool receive_exactly(int stop, int fd, std::string& buffer, size_t n, EgressClock::time_point deadline) {
  while (buffer.size() < n)
    if (!receive_some(stop, fd, buffer, deadline, n - buffer.size())) return false;
  return true;
}

std::string http_reply(int status, const char* phrase, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(status) + " " + phrase +
         "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: " +
         std::to_string(body.size() + 1) + "\r\n\r\n" + body + "\n";
}

}  // namespace corral::local
