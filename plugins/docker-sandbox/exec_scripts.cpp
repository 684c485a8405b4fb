#include "exec_scripts.hpp"

namespace corral::docker_sandbox {
namespace {

// $1 status file, $2 pid file, $3 "tty" or "", then the command. sbx reports its own
// failures through the same exit number, so a failed command writes its status down; a
// client that died mid-stream (the CLI's connection reset) leaves no file, since the
// command has not finished.
// The shell traps the signals a user's stop passes on (exec-signals), so that it outlives
// them and reports what the command made of them (its trap's exit code) instead of dying
// by them; the command starts with them at their defaults. Without a terminal,
// util-linux's `setsid -w` gives the command a process group of its own (its id the inner
// shell's pid) and passes on its status; where there is none, or on a terminal (whose
// foreground job the command must stay), the group is the one sbx exec started.
constexpr const char* kRunScript =
    "s=$1; p=$2; t=$3; shift 3\n"
    "trap : INT TERM HUP\n"
    "if [ -z \"$t\" ] && setsid -w true >/dev/null 2>&1; then\n"
    "  setsid -w /bin/sh -c 'trap : INT TERM HUP; echo $$ > \"$0\"; \"$@\"' \"$p\" \"$@\"; c=$?\n"
    "else\n"
    "  echo $$ > \"$p\"; \"$@\"; c=$?\n"
    "fi\n"
    "rm -f -- \"$p\"\n"
    "[ \"$c\" -eq 0 ] || echo \"$c\" > \"$s\"\n"
    "exit \"$c\"\n";

// $1 status file.
constexpr const char* kTakeStatus = "if [ -f \"$1\" ]; then cat \"$1\"; rm -f \"$1\"; fi";

}  // namespace

std::vector<std::string> run_argv(const Command& command, const std::string& status_file,
                                  const std::string& pid_file, bool on_terminal) {
  std::vector<std::string> argv{"sh", "-c", kRunScript, "corral-run", status_file, pid_file, on_terminal ? "tty" : ""};
  if (!command.argv.empty()) argv.insert(argv.end(), command.argv.begin(), command.argv.end());
  else argv.insert(argv.end(), {"sh", "-c", command.shell});
  return argv;
}

std::vector<std::string> take_status_argv(const std::string& status_file) {
  return {"sh", "-c", kTakeStatus, "corral-status", status_file};
}


}  // namespace corral::docker_sandbox
