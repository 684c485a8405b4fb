#include "corral/sdk/redact.hpp"

#include <algorithm>

namespace corral::sdk {

void Redactor::add(const std::string& secret) {
  if (secret.size() < 4) return;
  if (std::find(secrets_.begin(), secrets_.end(), secret) != secrets_.end()) return;
  secrets_.push_back(secret);
  // Longest first, so a secret containing another is masked whole.
  std::sort(secrets_.begin(), secrets_.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
}

std::string Redactor::apply(std::string text) const {
  for (const std::string& s : secrets_) {
    for (size_t pos = text.find(s); pos != std::string::npos; pos = text.find(s, pos + 3))
      text.replace(pos, s.size(), "***");
  }
  return text;
}

}  // namespace corral::sdk
