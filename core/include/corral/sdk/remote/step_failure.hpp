// A step of the provider's own that failed in a sandbox (unpacking the workspace,
// removing files deleted locally): the start of what it said on stderr explains it,
// the rest is noise, and the error says where it failed and with which exit status.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "corral/errors.hpp"
#include "corral/sdk/remote/identity.hpp"

namespace corral::sdk::remote {

// The first 4 KiB of a step's stderr.
class StepErrors {
 public:
  static constexpr std::size_t kKept = 4096;

  // Keeps what of `chunk` still fits.
  void add(std::string_view chunk);
  // `add` as a sink for step_hooks; the object must outlive it.
  std::function<void(std::string_view)> sink();
  // What was kept, without trailing newlines and spaces.
  std::string text() const;
  void clear() { kept_.clear(); }

 private:
  std::string kept_;
};

// Error(unavailable) "<doing> in <title> sandbox <id> failed (exit <code>)[: <errors>]", with `hint`.
Error step_failed(const Identity& provider, std::string_view doing, const std::string& sandbox_id, int exit_code,
                  const StepErrors& errors, std::string hint = {});

}  // namespace corral::sdk::remote
