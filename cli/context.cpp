#include "context.hpp"

namespace corral::cli {
namespace {

// corral's own executable: what a run that takes a pooled sandbox starts again, detached,
// to refill the pool.
std::filesystem::path self() {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/self/exe", ec);
}

}  // namespace

Context::Context(bool verbose, Config config)
    : session(std::move(config), self()),
      ui(verbose),
      config(session.config()),
      claims(session.claims()),
      providers(session.providers()) {}

}  // namespace corral::cli
