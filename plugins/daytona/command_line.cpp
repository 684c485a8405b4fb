#include "command_line.hpp"

#include <cctype>

namespace corral::daytona {
namespace {

// $1 folder, $2 env file, $3 marker, then the program. The marker starts and ends with
// the unit separator, made by printf so the command text stays plain ASCII.
constexpr const char* kWrapper =
    "d=$1 e=$2 m=$(printf '\\037')$3$(printf '\\037'); shift 3\n"
    "if [ -n \"$e\" ]; then . \"$e\"; rm -f -- \"$e\"; fi\n"
    "if cd -- \"$d\"; then (exec \"$@\") </dev/null; rc=$?; else rc=127; fi\n"
    "printf '%s\\n' \"$m\"; printf '%s\\n' \"$m\" >&2\n"
    "exit $rc\n";

}  // namespace

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

void check_env_name(const std::string& name) {
  bool ok = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!ok)
    throw Error(ErrorCode::invalid_argument, "'" + name + "' is not an environment variable name a shell accepts",
                "forward only variables named like NAME_1 (letters, digits, underscores)");
}

std::string env_file_content(const StringMap& env) {
  std::string out;
  for (const auto& [name, value] : env) {
    check_env_name(name);
    out += "export " + name + "=" + shell_quote(value) + "\n";
  }
  return out;
}

std::string wrapper_text(const WrappedCommand& c) {
  if (c.argv.empty()) throw Error(ErrorCode::invalid_argument, "no command to run");
  // The marker travels without its separators, which the wrapper adds itself.
  std::string token = c.marker;
  if (token.size() >= 2 && token.front() == '\x1f' && token.back() == '\x1f') token = token.substr(1, token.size() - 2);
  std::string text = "sh -c " + shell_quote(kWrapper) + " corral " + shell_quote(c.cwd) + " " +
                     shell_quote(c.env_file) + " " + shell_quote(token);
  for (const auto& a : c.argv) text += " " + shell_quote(a);
  return text;
}

std::vector<std::string> argv_of(const Command& command) {
  if (!command.argv.empty()) return command.argv;
  if (!command.shell.empty()) return {"/bin/sh", "-c", command.shell};
  throw Error(ErrorCode::invalid_argument, "no command to run");
}

}  // namespace corral::daytona
