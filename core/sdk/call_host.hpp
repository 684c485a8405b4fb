// The host of the primitive this thread is running, for SDK code below the primitive
// (the HTTP client) that reports to the host without being handed it.
#pragma once

#include <cstdint>

#include "corral/sdk.hpp"

namespace corral::sdk::detail {

// Makes `host` this thread's call host until the end of the scope (restoring the one before).
class CallHostScope {
 public:
  explicit CallHostScope(const Host& host);
  ~CallHostScope();
  CallHostScope(const CallHostScope&) = delete;
  CallHostScope& operator=(const CallHostScope&) = delete;

 private:
  const Host* previous_;
};

// Reports a transfer's bytes to this thread's call host, if any (Host::transfer).
void report_transfer(std::uint64_t done, std::uint64_t total);

}  // namespace corral::sdk::detail
