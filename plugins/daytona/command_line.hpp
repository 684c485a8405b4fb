// The shell text a Daytona session runs for one corral command. Daytona runs session
// commands in the session's shell, so the text is built for safety and fidelity:
//  - every value is single-quoted, never spliced into shell syntax;
//  - the command runs in a child `sh -c`, so an `exit` in it cannot end the session shell;
//  - argv is started with exec semantics (`exec "$@"` in a subshell); its stdin is
//    /dev/null, or the user's input: Daytona passes a session command's input as JSON
//    text and never ends it, so it travels as input_lines() and the wrapper decodes it
//    and closes the program's stdin at the end line;
//  - the environment comes from a file the wrapper sources and deletes at once, so no
//    value appears in the command text Daytona records;
//  - the program's stdout and stderr are each encoded in the sandbox (base64, or od's hex
//    where base64 is missing) before they reach Daytona's log, which cannot carry NUL
//    bytes nor output that looks like its stream prefixes (see log_demux.hpp); the
//    plugin decodes them (output_decoder.hpp), so output arrives byte for byte.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "corral/types.hpp"

namespace corral::daytona {

// Throws invalid-argument unless `name` is a shell variable name ([A-Za-z_][A-Za-z0-9_]*).
void check_env_name(const std::string& name);

// The content of an env file for `env`: one `export NAME='value'` line per variable.
std::string env_file_content(const StringMap& env);

struct WrappedCommand {
  std::vector<std::string> argv;  // the program and its arguments (not empty)
  std::string cwd;                // absolute folder in the sandbox
  std::string env_file;           // absolute path of the env file to source, or empty
  bool input = false;             // stdin is the session command's input (input_lines), not /dev/null
};

// The session command text for `command`; its exit status is the program's (127 when the
// folder or the program is missing), its stdout and stderr the program's, encoded.
std::string wrapper_text(const WrappedCommand& command);

// The most input bytes one input line carries.
constexpr std::size_t kInputLineBytes = 4096;
// The line that ends the input: the wrapper then closes the program's stdin.
constexpr const char* kInputEnd = ".\n";

// `data` as input lines for the wrapper: each ':' then at most kInputLineBytes bytes as a
// printf format (printable ASCII as it is, other bytes and printf's syntax as \ooo
// escapes), then a newline. ASCII only, so valid UTF-8 for JSON, and every line ends in a
// newline, as Daytona's input call would add one.
std::string input_lines(std::string_view data);

// argv of `command`: its argv, or /bin/sh -c SHELL; throws invalid-argument when empty.
std::vector<std::string> argv_of(const Command& command);

}  // namespace corral::daytona
