#include "call_host.hpp"

namespace corral::sdk::detail {
namespace {

thread_local const Host* t_host = nullptr;

}  // namespace

CallHostScope::CallHostScope(const Host& host) : previous_(t_host) { t_host = &host; }

CallHostScope::~CallHostScope() { t_host = previous_; }

void report_transfer(std::uint64_t done, std::uint64_t total) {
  if (t_host) t_host->transfer(done, total);
}

}  // namespace corral::sdk::detail
