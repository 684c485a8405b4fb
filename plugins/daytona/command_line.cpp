#include "command_line.hpp"

#include "corral/sdk/shell.hpp"

#include <cctype>
#include <string_view>

namespace corral::daytona {
namespace {

// $1 folder, $2 env file, $3 "1" when the program's stdin is the session command's input
// (else /dev/null), $4 what to say when tools are missing, then the program. The
// program runs in a subshell (`run`) whose stdout and stderr each go through `enc`, and
// its exit status comes back on fd 4 (the command substitution), since a POSIX sh has no
// pipefail. `enc` copies what arrives in chunks (dd count=1 returns whatever one read
// gets, so output is passed on as soon as it is written), each as base64 lines, or hex
// lines from od where base64 is missing (see output_decoder.hpp). The substitution ends
// only when both encoders have, so everything is written before the wrapper exits. Fd 3
// is the real stdout; the program gets none of fds 3-5. `run` takes the folder, env file
// and input switch as arguments, not variables, and sets none after sourcing the env
// file, so a forwarded variable named d, e or i changes nothing and reaches the program.
// Input arrives as input_lines() text, which `dec` turns back into bytes with the shell's
// own printf; its end line ends `dec`, which closes the program's stdin: the session's
// input itself never ends. `dec` runs in the background of a pipeline element that exits
// at once, so the run waits for the program alone (one that stops reading, as `head`
// does, ends the run); it holds none of the output pipes, and ends with the session.
constexpr const char* kWrapper =
    "d=$1 e=$2 i=$3 n=$4; shift 4\n"
    "if ! command -v dd >/dev/null 2>&1 || ! { command -v base64 || command -v od; } >/dev/null 2>&1; then\n"
    "  [ -z \"$e\" ] || rm -f -- \"$e\"; printf '%s\\n' \"$n\" >&2; exit 127\n"
    "fi\n"
    "if command -v base64 >/dev/null 2>&1; then x() { base64; }; else x() { od -An -v -tx1; }; fi\n"
    "enc() { while c=$(dd bs=65536 count=1 2>/dev/null | x) && [ -n \"$c\" ]; do printf '%s\\n' \"$c\"; done; }\n"
    "dec() { while IFS= read -r l; do case $l in :*) printf \"${l#:}\" || return;; .) return;; esac; done; }\n"
    "run() {\n"
    "  cd -- \"$1\" || exit 127\n"
    "  if [ -n \"$2\" ]; then . \"$2\"; rm -f -- \"$2\"; fi\n"
    "  if [ -z \"$3\" ]; then shift 3; exec \"$@\" </dev/null; fi\n"
    "  shift 3; { dec <&7 7<&- 2>/dev/null & } 7<&0 | exec \"$@\"\n"
    "}\n"
    "exec 3>&1\n"
    "rc=$({ { { (run \"$d\" \"$e\" \"$i\" \"$@\") 3>&- 4>&-; echo $? >&4; } 2>&1 1>&5 5>&- | enc >&2 5>&-; } 5>&1 | enc >&3; } 4>&1)\n"
    "exit \"${rc:-1}\"\n";

// Told on stderr when the sandbox lacks the tools `enc` needs, encoded as `enc` would
// (one od-style hex line), so it arrives as the command's own complaint.
constexpr const char* kNoTools = "corral: the sandbox needs dd and base64 (or od) to pass output through Daytona\n";

std::string hex_line(std::string_view text) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    out += ' ';
    out += digits[u >> 4];
    out += digits[u & 15];
  }
  return out;
}

}  // namespace

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
    out += "export " + name + "=" + sdk::shell_quote(value) + "\n";
  }
  return out;
}

std::string wrapper_text(const WrappedCommand& c) {
  if (c.argv.empty()) throw Error(ErrorCode::invalid_argument, "no command to run");
  std::string text = "sh -c " + sdk::shell_quote(kWrapper) + " corral " + sdk::shell_quote(c.cwd) + " " +
                     sdk::shell_quote(c.env_file) + " " + (c.input ? "1" : "''") + " " +
                     sdk::shell_quote(hex_line(kNoTools));
  for (const auto& a : c.argv) text += " " + sdk::shell_quote(a);
  return text;
}

std::string input_lines(std::string_view data) {
  static const char* digits = "01234567";
  std::string out;
  out.reserve(data.size() + data.size() / 8 + 8);
  for (std::size_t at = 0; at < data.size(); at += kInputLineBytes) {
    const std::string_view part = data.substr(at, kInputLineBytes);
    out += ':';
    for (std::size_t i = 0; i < part.size(); ++i) {
      const auto u = static_cast<unsigned char>(part[i]);
      // printf's format: % and \ are its syntax, and a leading - would read as an option.
      const bool literal = u >= 0x20 && u < 0x7f && u != '%' && u != '\\' && !(i == 0 && u == '-');
      if (literal) {
        out += static_cast<char>(u);
      } else {
        out += '\\';
        out += digits[u >> 6];
        out += digits[(u >> 3) & 7];
        out += digits[u & 7];
      }
    }
    out += '\n';
  }
  return out;
}

std::vector<std::string> argv_of(const Command& command) {
  if (!command.argv.empty()) return command.argv;
  if (!command.shell.empty()) return {"/bin/sh", "-c", command.shell};
  throw Error(ErrorCode::invalid_argument, "no command to run");
}

}  // namespace corral::daytona
