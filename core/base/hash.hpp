// Hashing and randomness used for plugin pins, workspace fingerprints and lease ids.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "corral/os/random.hpp"

namespace corral {

// Lower-case hex SHA-256 of a file's bytes; throws corral::Error when it cannot be read.
std::string sha256_file(const std::filesystem::path& path);

// Incremental SHA-256.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::string_view data);
  // Lower-case hex digest; the hasher is spent afterwards.
  std::string hex();

 private:
  void* ctx_;
};

// `bytes` random bytes from the OS, as lower-case hex: the SDK's, which plugins use too.
using os::random_hex;

}  // namespace corral
