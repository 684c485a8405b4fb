#include "command_line.hpp"

#include <csignal>

namespace corral::kubernetes {
namespace {

// $1 folder, $2 pid file, then the command. util-linux's `setsid -w` gives the command a
// process group of its own (its id is the inner shell's pid) and passes on its status.
// The inner shell is in that group too: it traps the signals a user's stop passes on to
// the group (exec-signals), so that it outlives them and reports what the command made of
// them (its trap's exit code) instead of dying by them. Where there is no `setsid -w`
// (busybox), the command takes the shell's place, so that its pid is the one written.
constexpr const char* kRunScript =
    "d=$1; p=$2; shift 2\n"
    "cd -- \"$d\" || exit 1\n"
    "if setsid -w true >/dev/null 2>&1; then\n"
    "  exec setsid -w /bin/sh -c 'trap : INT TERM HUP; echo $$ > \"$0\"; \"$@\"; rc=$?; rm -f -- \"$0\"; exit $rc' "
    "\"$p\" \"$@\"\n"
    "fi\n"
    "echo $$ > \"$p\"; exec \"$@\"\n";

// $1 folder, $2 pid file, then the command, on a terminal of its own (exec with tty): the
// shell is the terminal's session leader, as the container runtime starts it, and the
// command its child in the foreground process group, so that a Ctrl-C typed reaches both
// by the terminal. No setsid here: a new session would have no terminal. The shell traps
// what reaches it, to report the command's own exit code. The first resize comes just
// after the command starts: it waits for it a moment (no stty: no wait), so that a command
// reading its size at once gets the user's.
constexpr const char* kTerminalRunScript =
    "d=$1; p=$2; shift 2\n"
    "cd -- \"$d\" || exit 1\n"
    "i=0; while [ \"$(stty size 2>/dev/null)\" = \"0 0\" ] && [ $i -lt 20 ]; do sleep 0.05; i=$((i+1)); done\n"
    "trap : INT TERM HUP; echo $$ > \"$p\"; \"$@\"; rc=$?; rm -f -- \"$p\"; exit $rc\n";

// $1 pid file, $2 signal name. Waits a moment for a command that is only starting to
// write it; a command that already ended (no file) has nothing to be told.
constexpr const char* kSignalScript =
    "p=$1; i=0\n"
    "while [ ! -s \"$p\" ] && [ $i -lt 10 ]; do sleep 0.1; i=$((i+1)); done\n"
    "g=$(cat -- \"$p\" 2>/dev/null) || exit 0\n"
    "kill -\"$2\" \"-$g\" 2>/dev/null || kill -\"$2\" \"$g\" 2>/dev/null\n"
    "exit 0\n";

// $1 pid file. Waits a moment for a command that is only starting to write it. No `--`
// before the negative group id: dash's kill takes none.
constexpr const char* kKillScript =
    "p=$1; i=0\n"
    "while [ ! -s \"$p\" ] && [ $i -lt 10 ]; do sleep 0.1; i=$((i+1)); done\n"
    "g=$(cat -- \"$p\" 2>/dev/null) || exit 0\n"
    "kill -TERM \"-$g\" 2>/dev/null || kill -TERM \"$g\" 2>/dev/null\n"
    "i=0; while [ $i -lt 30 ] && kill -0 \"-$g\" 2>/dev/null; do sleep 0.1; i=$((i+1)); done\n"
    "kill -KILL \"-$g\" 2>/dev/null || kill -KILL \"$g\" 2>/dev/null\n"
    "rm -f -- \"$p\"; exit 0\n";

// $1 workdir, $2 the archive's size: `head -c` ends stdin where the archive does, so it
// works under v4.channel.k8s.io too, which cannot close stdin.
constexpr const char* kUnpackScript =
    "set -e\n"
    "mkdir -p -- \"$1\"\n"
    "head -c \"$2\" | tar -xzf - -C \"$1\"\n";

// $1 seconds, $2 the deadline file; the deadline may only move later.
constexpr const char* kExtendScript =
    "f=$2\n"
    "want=$(( $(date +%s) + $1 ))\n"
    "have=$(cat \"$f\" 2>/dev/null || echo 0)\n"
    "[ \"$want\" -gt \"$have\" ] && echo \"$want\" > \"$f\"\n"
    "cat \"$f\"\n";

}  // namespace

std::vector<std::string> run_argv(const Command& command, const std::string& folder, const std::string& pid_file) {
  std::vector<std::string> argv = {"/bin/sh", "-c", command.tty ? kTerminalRunScript : kRunScript, "sh", folder,
                                   pid_file};
  if (!command.env.empty()) {
    argv.emplace_back("env");
    for (const auto& [name, value] : command.env) argv.push_back(name + "=" + value);
  }
  if (!command.argv.empty()) {
    argv.insert(argv.end(), command.argv.begin(), command.argv.end());
  } else if (!command.shell.empty()) {
    argv.insert(argv.end(), {"/bin/sh", "-c", command.shell});
  } else {
    throw Error(ErrorCode::invalid_argument, "no command to run");
  }
  return argv;
}

std::vector<std::string> kill_argv(const std::string& pid_file) {
  return {"/bin/sh", "-c", kKillScript, "sh", pid_file};
}

std::vector<std::string> signal_argv(const std::string& pid_file, int signal) {
  const char* name = signal == SIGINT ? "INT" : signal == SIGTERM ? "TERM" : signal == SIGHUP ? "HUP" : nullptr;
  return {"/bin/sh", "-c", kSignalScript, "sh", pid_file, name ? name : std::to_string(signal)};
}

std::vector<std::string> unpack_argv(const std::string& workdir, std::uint64_t size) {
  return {"/bin/sh", "-c", kUnpackScript, "sh", workdir, std::to_string(size)};
}

std::vector<std::string> extend_argv(std::int64_t seconds) {
  return {"/bin/sh", "-c", kExtendScript, "sh", std::to_string(seconds), kDeadlineFile};
}

std::string keep_alive_script() {
  return std::string(
             "mkdir -p -- \"$CORRAL_WORKDIR\"\n"
             "echo $(( $(date +%s) + CORRAL_LIFETIME )) > ") +
         kDeadlineFile +
         "\n"
         "trap 'exit 0' TERM INT\n"
         "while [ \"$(date +%s)\" -lt \"$(cat " +
         kDeadlineFile + " 2>/dev/null || echo 0)\" ]; do sleep 5 & wait $!; done\n";
}

}  // namespace corral::kubernetes
