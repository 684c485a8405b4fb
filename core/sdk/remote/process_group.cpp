#include "corral/sdk/remote/process_group.hpp"

#include <csignal>

#include "corral/sdk/shell.hpp"

namespace corral::sdk::remote {
namespace {

// The group's leader: a shell that outlives the signals passed to the group, writes its
// pid ($0) down, runs the command ($@), then removes the pid file and exits with its status.
constexpr const char* kLeaderBefore = "trap : INT TERM HUP; echo $$ > \"$0\"; \"$@\"; rc=$?; rm -f -- \"$0\"; ";
constexpr const char* kLeaderAfter = "exit $rc";
// Passes SIGTERM to what is left in the leader's group; the leader ignores it itself.
constexpr const char* kTermLeftovers = "trap '' TERM; kill -TERM -$$ 2>/dev/null; ";

// $1 pid file, then the command. util-linux's `setsid -w` gives the command a process
// group of its own (its id is the leader's pid) and passes on its status.
std::string group_script(Leftovers leftovers) {
  const std::string leader =
      std::string(kLeaderBefore) + (leftovers == Leftovers::end ? kTermLeftovers : "") + kLeaderAfter;
  return "if setsid -w true >/dev/null 2>&1; then\n"
         "  exec setsid -w /bin/sh -c " +
         shell_quote(leader) +
         " \"$@\"\n"
         "fi\n"
         "echo $$ > \"$1\"; shift; exec \"$@\"\n";
}

// $1 pid file, $2 signal name. Waits a moment for a command that is only starting to
// write it; a command that already ended (no file) has nothing to be told. The command can
// write the file: anything but a process group id above 1 (`kill -1` is everybody's,
// `kill -0` the script's own group) is passed by.
constexpr const char* kSignalScript =
    "p=$1; i=0\n"
    "while [ ! -s \"$p\" ] && [ $i -lt 10 ]; do sleep 0.1; i=$((i+1)); done\n"
    "g=$(cat -- \"$p\" 2>/dev/null) || exit 0\n"
    "case $g in ''|*[!0-9]*|0|1) exit 0;; esac\n"
    "kill -\"$2\" \"-$g\" 2>/dev/null || kill -\"$2\" \"$g\" 2>/dev/null\n"
    "exit 0\n";

// $1 pid file. Waits a moment for a command that is only starting to write it. No `--`
// before the negative group id: dash's kill takes none.
constexpr const char* kKillScript =
    "p=$1; i=0\n"
    "while [ ! -s \"$p\" ] && [ $i -lt 10 ]; do sleep 0.1; i=$((i+1)); done\n"
    "g=$(cat -- \"$p\" 2>/dev/null) || exit 0\n"
    "case $g in ''|*[!0-9]*|0|1) exit 0;; esac\n"
    "kill -TERM \"-$g\" 2>/dev/null || kill -TERM \"$g\" 2>/dev/null\n"
    "i=0; while [ $i -lt 30 ] && kill -0 \"-$g\" 2>/dev/null; do sleep 0.1; i=$((i+1)); done\n"
    "kill -KILL \"-$g\" 2>/dev/null || kill -KILL \"$g\" 2>/dev/null\n"
    "rm -f -- \"$p\"; exit 0\n";

}  // namespace

std::vector<std::string> in_process_group_argv(const std::string& pid_file, const std::vector<std::string>& argv,
                                               Leftovers leftovers) {
  std::vector<std::string> out = {"/bin/sh", "-c", group_script(leftovers), "sh", pid_file};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::vector<std::string> signal_group_argv(const std::string& pid_file, int signal) {
  const char* name = signal == SIGINT ? "INT" : signal == SIGTERM ? "TERM" : signal == SIGHUP ? "HUP" : nullptr;
  return {"/bin/sh", "-c", kSignalScript, "sh", pid_file, name ? name : std::to_string(signal)};
}

std::vector<std::string> kill_group_argv(const std::string& pid_file) {
  return {"/bin/sh", "-c", kKillScript, "sh", pid_file};
}

}  // namespace corral::sdk::remote
