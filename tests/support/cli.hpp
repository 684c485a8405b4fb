// Test support: hermetic temporary folders and running the built `corral` binary as a
// user would, with its own state, config and registry dirs.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace corral::test {

// A fresh folder under $TMPDIR, removed with everything in it at scope end.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  // Writes `content` to `relative` (creating parent folders) and returns the full path.
  std::filesystem::path write(const std::string& relative, const std::string& content) const;

 private:
  std::filesystem::path path_;
};

// The text of a file ("" when missing).
std::string read_file(const std::filesystem::path& path);
// `bytes` random bytes: data that does not compress.
std::string random_bytes(std::size_t bytes);

// Waits (bounded, up to 15 s) until `done` holds; its last answer.
bool eventually(const std::function<bool()>& done);

// One step of a session on a terminal: once the screen shows `wait_for`, the terminal is
// resized to rows x cols (when rows is not 0) and `keys` are typed.
struct TerminalStep {
  std::string wait_for;
  std::string keys;
  unsigned short rows = 0, cols = 0;
};

// Whether the terminal was canonical and echoing before corral ran on it and after it ended.
struct TerminalModes {
  bool before_canonical = false, before_echo = false;
  bool after_canonical = false, after_echo = false;
};

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// A corral process started in the background, its output going to files.
struct Background {
  int pid = -1;
  std::filesystem::path out;
  std::filesystem::path err;
  // Waits for it to end and returns its exit code (128+signal when killed). A test must
  // not hang: past `limit` the process is killed and the test fails.
  int wait(std::chrono::seconds limit = std::chrono::seconds(120));
};

// A hermetic user: own HOME, XDG state/config dirs and an empty /etc/corral, so tests see
// only the build tree's registry plus what they add.
class CliEnv {
 public:
  CliEnv();
  // Runs `corral args...` in `cwd` (default: the workspace folder) and captures the result.
  CliResult run(const std::vector<std::string>& args, const std::string& cwd = {}) const;
  // Runs `corral args...` with a terminal of `columns` columns as its stdin, stdout and
  // stderr; `out` is every byte it wrote there, in order (the terminal turns "\n" into
  // "\r\n"), `err` stays empty.
  CliResult run_on_terminal(const std::vector<std::string>& args, unsigned short columns) const;
  // The same, typing `steps` as the screen shows what each waits for; `modes` (when given)
  // gets the terminal's modes before and after.
  CliResult run_on_terminal(const std::vector<std::string>& args, unsigned short columns,
                            const std::vector<TerminalStep>& steps, TerminalModes* modes = nullptr) const;
  // The same with `input` piped into its stdin, by a writer that closes the pipe at its end.
  CliResult run_with_input(const std::vector<std::string>& args, const std::string& input) const;
  // Starts `corral args...` without waiting (to signal it mid-run), its stdin read from
  // `stdin_path` (a file, or a FIFO a test writes).
  Background start(const std::vector<std::string>& args, const std::string& cwd = {},
                   const std::string& stdin_path = "/dev/null") const;
  // Extra or overridden environment variables for every run.
  std::map<std::string, std::string> env;
  const TempDir& root() const { return root_; }
  // A plain folder to use as the working tree.
  std::filesystem::path workspace() const { return root_.path() / "work"; }
  std::filesystem::path state_dir() const { return root_.path() / "state"; }
  std::filesystem::path config_dir() const { return root_.path() / "config"; }
  // The lease claim files currently present.
  std::vector<std::filesystem::path> claims() const;
  // The lease id of the only claim there is; fails the test unless there is exactly one.
  std::string only_lease() const;
  // The state `corral list --json` gives each lease there is ("kept", "abandoned", ...).
  std::vector<std::string> lease_states() const;
  // Waits (bounded) until no `corral pool fill` runs in the workspace (a run's background
  // refills have ended) and the only warm pool holds `ready` ready sandboxes, none being
  // filled or taken (no pool at all for 0).
  bool pool_settles_at(int ready) const;
  // The sandbox ids the pooled claims (warm pools) record.
  std::set<std::string> pooled_sandboxes() const;
  // The local provider's sandbox folders that exist now.
  std::vector<std::filesystem::path> local_sandboxes() const;
  // The workspace archives corral is packing or holding for upload now (its staging folder).
  std::vector<std::filesystem::path> staged_archives() const;
  // Writes a registry under the user's providers.d listing `libraries`, with the isolation
  // $CORRAL_TEST_ISOLATION names when set.
  void add_registry(const std::string& name, const std::vector<std::string>& libraries) const;
  // The same with `keys` (e.g. {"isolation", "process"}) on every entry.
  void add_registry(const std::string& name, const std::vector<std::string>& libraries,
                    const std::map<std::string, std::string>& keys) const;
  // The full environment each run gets ("NAME=value").
  std::vector<std::string> environment() const;

 private:
  TempDir root_;
};

// The path of the built corral binary.
std::string corral_binary();

// True while process `pid` exists and is not a zombie.
bool process_alive(int pid);
// True once process `pid` is gone (or a zombie nobody of ours will reap) within `wait`.
bool gone_within(int pid, std::chrono::milliseconds wait);
// The live (not zombie) processes whose command line is exactly `argv`.
std::vector<int> processes_running(const std::vector<std::string>& argv);
// The live processes whose parent is `parent` and whose command line mentions `name`
// (e.g. a corral's plugin helper, "corral-plugin-host").
std::vector<int> children_named(int parent, const std::string& name);

}  // namespace corral::test
