// What the providers' download tests send into a sandbox and read back out: bytes that
// cover every value and that gzip cannot shrink, and the archive a download wrote,
// unpacked with the system tar.
//
// Threads: safe from any thread.
#pragma once

#include <cstddef>
#include <string>

#include "cli.hpp"

namespace corral::test {

// `size` bytes: every byte value once, then a pseudo-random tail that gzip cannot shrink.
std::string binary_bytes(std::size_t size);

// Unpacks the .tar.gz at `archive` into `into` with the system tar; fails the test if it cannot.
void unpack(const std::string& archive, const TempDir& into);

}  // namespace corral::test
