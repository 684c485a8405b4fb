#include "quantity.hpp"

#include <cctype>
#include <cmath>
#include <map>

namespace corral::kubernetes::standin {

std::optional<double> parse_quantity(const std::string& text) {
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  bool dot = false, digit = false;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
    if (text[i] == '.') {
      if (dot) return std::nullopt;
      dot = true;
    } else {
      digit = true;
    }
    ++i;
  }
  if (!digit) return std::nullopt;
  const double number = std::stod(text.substr(0, i));
  const std::string suffix = text.substr(i);
  static const std::map<std::string, double> kSuffixes = {
      {"", 1},        {"n", 1e-9},   {"u", 1e-6},   {"m", 1e-3},   {"k", 1e3},    {"M", 1e6},
      {"G", 1e9},     {"T", 1e12},   {"P", 1e15},   {"E", 1e18},   {"Ki", 1024.0}, {"Mi", std::pow(1024.0, 2)},
      {"Gi", std::pow(1024.0, 3)},   {"Ti", std::pow(1024.0, 4)},  {"Pi", std::pow(1024.0, 5)},
      {"Ei", std::pow(1024.0, 6)}};
  if (auto it = kSuffixes.find(suffix); it != kSuffixes.end()) return number * it->second;
  // A decimal exponent: e3, E-2.
  if ((suffix[0] == 'e' || suffix[0] == 'E') && suffix.size() > 1) {
    size_t j = 1;
    if (suffix[j] == '+' || suffix[j] == '-') ++j;
    if (j == suffix.size()) return std::nullopt;
    for (size_t k = j; k < suffix.size(); ++k)
      if (!std::isdigit(static_cast<unsigned char>(suffix[k]))) return std::nullopt;
    return number * std::pow(10.0, std::stod(suffix.substr(1)));
  }
  return std::nullopt;
}

}  // namespace corral::kubernetes::standin
