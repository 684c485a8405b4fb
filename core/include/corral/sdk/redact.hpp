// Removes secret values (tokens, API keys) from any text corral is about to show.
#pragma once

#include <string>
#include <vector>

namespace corral::sdk {

class Redactor {
 public:
  // Registers a secret; values shorter than 4 characters are ignored (too common to mask).
  void add(const std::string& secret);
  // `text` with every registered secret replaced by "***".
  std::string apply(std::string text) const;

 private:
  std::vector<std::string> secrets_;
};

}  // namespace corral::sdk
