#include "remote_scripts.hpp"

#include <corral/sdk/sync.hpp>
#include <fmt/format.h>

#include "remote_shell.hpp"

namespace corral_ssh {
namespace {

// The remote command line that runs `script` with `args` as "$1"... under sh: the
// scripts are POSIX sh whatever the account's login shell, which only parses the quoted
// words of this line.
std::string sh(std::string script, std::vector<std::string> args = {}) {
  std::vector<std::string> argv = {"sh", "-c", std::move(script), "corral-ssh"};
  argv.insert(argv.end(), std::make_move_iterator(args.begin()), std::make_move_iterator(args.end()));
  return command_line(argv);
}

// stop_group PIDFILE: TERM to the process group recorded in PIDFILE, KILL to what is left
// after 3 s. A file that holds no number (a run still starting, or gone) is skipped.
constexpr const char* kStopGroup =
    "stop_group() {\n"
    "  pg=$(cat -- \"$1\" 2>/dev/null) || return 0\n"
    "  case $pg in ''|*[!0-9]*) return 0 ;; esac\n"
    "  kill -s TERM -- \"-$pg\" 2>/dev/null || return 0\n"
    "  i=0\n"
    "  while [ \"$i\" -lt 30 ] && kill -s 0 -- \"-$pg\" 2>/dev/null; do\n"
    "    sleep 0.1; i=$((i + 1))\n"
    "  done\n"
    "  kill -s KILL -- \"-$pg\" 2>/dev/null\n"
    "  return 0\n"
    "}\n";

// $1 root, $2 lease folder, $3 record; {exists} is kLeaseExists. umask 077: other
// accounts on a shared host must not read a workspace (it may hold source and secrets).
constexpr const char* kCreate =
    "umask 077\n"
    "[ -e \"$2\" ] && exit {exists}\n"
    "mkdir -p -- \"$1\" && mkdir -- \"$2\" \"$2/workspace\" \"$2/runs\" || exit 1\n"
    "printf '%s\\n' \"$3\" >\"$2/labels.json\"\n";

// $1 record file; {missing} is kLeaseMissing.
constexpr const char* kRead =
    "[ -f \"$1\" ] || exit {missing}\n"
    "cat -- \"$1\"\n";

// $1 root. A missing root just means no leases yet.
constexpr const char* kList =
    "cd -- \"$1\" 2>/dev/null || exit 0\n"
    "for d in *; do\n"
    "  [ -f \"$d/labels.json\" ] || continue\n"
    "  printf '%s\\t%s\\n' \"$d\" \"$(head -n 1 -- \"$d/labels.json\")\"\n"
    "done\n";

// $1 lease folder (after kStopGroup). Commands still running in it are stopped first, so
// nothing the lease started keeps running (or writing) in a folder that is gone.
constexpr const char* kDestroy =
    "[ -e \"$1\" ] || exit 0\n"
    "for f in \"$1\"/runs/*.pid; do\n"
    "  [ -f \"$f\" ] && stop_group \"$f\"\n"
    "done\n"
    "rm -rf -- \"$1\"\n";

// $1 workspace. The archive is this script's stdin: it travels in the same ssh
// connection, with no second transfer tool. kRemove follows it.
constexpr const char* kUnpack = "mkdir -p -- \"$1\" && tar -xzf - -C \"$1\" || exit 1\n";

// $1 workspace, $2 the SDK's removal script, then the paths deleted locally (maybe none).
constexpr const char* kRemove =
    "[ \"$#\" -gt 2 ] || exit 0\n"
    "CORRAL_DIR=$1 remove=$2\n"
    "shift 2\n"
    "export CORRAL_DIR\n"
    "exec sh -c \"$remove\" corral-remove \"$@\"\n";

// $1 pid file, $2 folder, $3 number of NAME=value words that follow, then the command's
// argv. setsid puts the command in a process group of its own and its id in the pid
// file, so stop_run can end the command and everything it started, even after the
// local ssh is gone (sshd does not signal a command when the connection drops). The
// script waits for the command instead of exec'ing it so the pid file goes when it ends.
// Exits 125 when a variable cannot be set and 126 when the folder is missing.
constexpr const char* kRun =
    "pidfile=$1 dir=$2 n=$3\n"
    "shift 3\n"
    "while [ \"$n\" -gt 0 ]; do export \"$1\" || exit 125; shift; n=$((n - 1)); done\n"
    "cd -- \"$dir\" || exit 126\n"
    "setsid sh -c 'echo \"$$\" >\"$0\" && exec \"$@\"' \"$pidfile\" \"$@\"\n"
    "rc=$?\n"
    "rm -f -- \"$pidfile\"\n"
    "exit \"$rc\"\n";

// $1 pid file (after kStopGroup).
constexpr const char* kStop =
    "i=0\n"
    "while [ ! -s \"$1\" ] && [ \"$i\" -lt 20 ]; do sleep 0.1; i=$((i + 1)); done\n"
    "stop_group \"$1\"\n";

constexpr const char* kMissingTools =
    "for tool in tar gzip setsid; do\n"
    "  command -v \"$tool\" >/dev/null 2>&1 || printf '%s\\n' \"$tool\"\n"
    "done\n";

std::vector<std::string> with(std::vector<std::string> first, const std::vector<std::string>& rest) {
  first.insert(first.end(), rest.begin(), rest.end());
  return first;
}

}  // namespace

std::string create_lease(const LeaseFolder& lease, const std::string& record_line) {
  return sh(fmt::format(kCreate, fmt::arg("exists", kLeaseExists)), {lease.root(), lease.dir(), record_line});
}

std::string read_record(const LeaseFolder& lease) {
  return sh(fmt::format(kRead, fmt::arg("missing", kLeaseMissing)), {lease.record()});
}

std::string list_leases(const std::string& root) { return sh(kList, {root}); }

std::string destroy_lease(const LeaseFolder& lease) { return sh(std::string(kStopGroup) + kDestroy, {lease.dir()}); }

std::string unpack_workspace(const LeaseFolder& lease, const std::vector<std::string>& removed) {
  return sh(std::string(kUnpack) + kRemove, with({lease.workspace(), corral::sdk::kRemovePathsScript}, removed));
}

std::string remove_paths(const LeaseFolder& lease, const std::vector<std::string>& removed) {
  return sh(kRemove, with({lease.workspace(), corral::sdk::kRemovePathsScript}, removed));
}

std::string run_command(const LeaseFolder& lease, const std::string& run_id, const std::string& dir,
                        const corral::StringMap& env, const std::vector<std::string>& argv) {
  std::vector<std::string> args = {lease.runs() + "/" + run_id + ".pid", dir, std::to_string(env.size())};
  for (const auto& [name, value] : env) args.push_back(name + "=" + value);
  return sh(kRun, with(std::move(args), argv));
}

std::string stop_run(const LeaseFolder& lease, const std::string& run_id) {
  return sh(std::string(kStopGroup) + kStop, {lease.runs() + "/" + run_id + ".pid"});
}

std::string missing_tools() { return sh(kMissingTools); }

}  // namespace corral_ssh
