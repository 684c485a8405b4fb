#include "remote_shell.hpp"

#include <corral/errors.hpp>

namespace corral_ssh {

std::string quote(std::string_view word) {
  // Inside single quotes a POSIX shell takes every byte literally (newlines, $, `,
  // backslash and " included) except the closing quote: ' is the only byte to handle.
  std::string out;
  out.reserve(word.size() + 2);
  out += '\'';
  for (char c : word) {
    if (c == '\0')
      throw corral::Error(corral::ErrorCode::invalid_argument,
                          "an argument for the remote host contains a NUL byte, which no command argument can hold");
    if (c == '\'') {
      out += "'\\''";  // close the quote, an escaped ', reopen
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& word : argv) {
    if (!line.empty()) line += ' ';
    line += quote(word);
  }
  return line;
}

}  // namespace corral_ssh
