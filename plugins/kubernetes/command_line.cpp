#include "command_line.hpp"

#include "corral/sdk/remote/process_group.hpp"

namespace corral::kubernetes {
namespace {

// $1 folder, then the command (sdk::remote::in_process_group_argv's, which gives it a
// process group of its own and writes its id down).
constexpr const char* kRunScript =
    "cd -- \"$1\" || exit 1\n"
    "shift; exec \"$@\"\n";

// $1 folder, $2 pid file, then the command, on a terminal of its own (exec with tty): the
// shell is the terminal's session leader, as the container runtime starts it, and the
// command its child in the foreground process group, so that a Ctrl-C typed reaches both
// by the terminal. No setsid here (nor the SDK's process group): a new session would have
// no terminal. The shell traps what reaches it, to report the command's own exit code. The
// first resize comes just after the command starts: it waits for it a moment (no stty: no
// wait), so that a command reading its size at once gets the user's.
constexpr const char* kTerminalRunScript =
    "d=$1; p=$2; shift 2\n"
    "cd -- \"$d\" || exit 1\n"
    "i=0; while [ \"$(stty size 2>/dev/null)\" = \"0 0\" ] && [ $i -lt 20 ]; do sleep 0.05; i=$((i+1)); done\n"
    "trap : INT TERM HUP; echo $$ > \"$p\"; \"$@\"; rc=$?; rm -f -- \"$p\"; exit $rc\n";

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
  std::vector<std::string> argv;
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
  if (command.tty) {
    std::vector<std::string> run = {"/bin/sh", "-c", kTerminalRunScript, "sh", folder, pid_file};
    run.insert(run.end(), argv.begin(), argv.end());
    return run;
  }
  std::vector<std::string> run = {"/bin/sh", "-c", kRunScript, "sh", folder};
  for (std::string& word : sdk::remote::in_process_group_argv(pid_file, argv)) run.push_back(std::move(word));
  return run;
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
