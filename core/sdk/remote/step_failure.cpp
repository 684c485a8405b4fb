#include "corral/sdk/remote/step_failure.hpp"

#include <algorithm>
#include <utility>

namespace corral::sdk::remote {

void StepErrors::add(std::string_view chunk) {
  if (kept_.size() < kKept) kept_.append(chunk.substr(0, kKept - kept_.size()));
}

std::function<void(std::string_view)> StepErrors::sink() {
  return [this](std::string_view chunk) { add(chunk); };
}

std::string StepErrors::text() const {
  std::string trimmed = kept_;
  while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == ' ')) trimmed.pop_back();
  return trimmed;
}

Error step_failed(const Identity& provider, std::string_view doing, const std::string& sandbox_id, int exit_code,
                  const StepErrors& errors, std::string hint) {
  const std::string said = errors.text();
  return Error(ErrorCode::unavailable,
               std::string(doing) + " in " + provider.title + " sandbox " + sandbox_id + " failed (exit " +
                   std::to_string(exit_code) + ")" + (said.empty() ? "" : ": " + said),
               std::move(hint));
}

}  // namespace corral::sdk::remote
