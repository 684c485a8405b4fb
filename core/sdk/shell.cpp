#include "corral/sdk/shell.hpp"

#include "corral/errors.hpp"

namespace corral::sdk {

std::string shell_quote(std::string_view word) {
  if (word.find('\0') != std::string_view::npos)
    throw Error(ErrorCode::invalid_argument, "a shell word contains a NUL byte, which no command argument can hold");
  constexpr std::string_view kPlain =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@%+,";
  if (!word.empty() && word.find_first_not_of(kPlain) == std::string_view::npos) return std::string(word);
  // Inside single quotes every byte is literal except the closing quote itself.
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

}  // namespace corral::sdk
