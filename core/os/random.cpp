#include "corral/os/random.hpp"

#include <sys/random.h>

#include <cerrno>

#include "corral/errors.hpp"
#include "corral/sdk/hex.hpp"

namespace corral::os {

std::string random_bytes(std::size_t bytes) {
  std::string data(bytes, '\0');
  for (std::size_t got = 0; got < bytes;) {
    const ssize_t n = ::getrandom(data.data() + got, bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(ErrorCode::internal, "the system random generator failed");
    got += static_cast<std::size_t>(n);
  }
  return data;
}

std::string random_hex(std::size_t bytes) { return sdk::hex_encode(random_bytes(bytes)); }

std::string random_tag(std::string_view prefix) { return std::string(prefix) + random_hex(8); }

}  // namespace corral::os
