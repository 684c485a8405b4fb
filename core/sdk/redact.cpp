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

void Redactor::add_pem(const std::string& pem) {
  add(pem);
  for (size_t start = 0; start < pem.size();) {
    size_t end = pem.find('\n', start);
    if (end == std::string::npos) end = pem.size();
    std::string line = pem.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("-----", 0) != 0) add(line);
    start = end + 1;
  }
}

std::string Redactor::apply(std::string text) const {
  for (const std::string& s : secrets_) {
    for (size_t pos = text.find(s); pos != std::string::npos; pos = text.find(s, pos + 3))
      text.replace(pos, s.size(), "***");
  }
  return text;
}

}  // namespace corral::sdk
