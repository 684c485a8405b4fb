// The stand-in Daytona's world: sandboxes (each a real folder on this machine), their
// process sessions and commands (real local processes whose output is appended to a log
// as it is produced, in Daytona's split format), the fault switches tests flip, and what
// clients sent.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "standin_state.hpp"

namespace corral::daytona::standin {

using Clock = std::chrono::system_clock;

// The write end of a command's stdin (a pipe), closed when the last holder lets go.
struct InputPipe {
  explicit InputPipe(int fd) : fd(fd) {}
  ~InputPipe();
  InputPipe(const InputPipe&) = delete;
  InputPipe& operator=(const InputPipe&) = delete;
  const int fd;
};

// One session command: a process group on this machine and its log file.
struct FakeCommand {
  std::string id;
  std::string command;
  pid_t pid = -1;  // its process group too
  std::filesystem::path log;
  std::optional<int> exit_code;  // recorded once the process ended and its output is in
  // Its stdin, where the input call writes, held open while it runs: as the daemon keeps
  // its per-command input FIFO open, a command never sees the end of its input. Null
  // once it ended.
  std::shared_ptr<InputPipe> input;
  bool echo_input = true;  // the input call copies the input into the log as stdout (not suppressInputEcho)
};

struct FakeSession {
  std::string id;
  std::map<std::string, std::shared_ptr<FakeCommand>> commands;
};

struct FakeSandbox {
  std::string id;
  std::string name;
  std::string snapshot;
  std::string user = "daytona";
  std::string target = "us";
  std::map<std::string, std::string> labels;
  // api.json's SandboxState: creating | starting | started | stopping | stopped | pausing |
  // paused | resuming | archived | error | build_failed
  std::string state = "creating";
  std::string error_reason;
  // api.json's sandboxClass, from the snapshot: "linux-vm" for a daytona-vm-* snapshot
  // (Daytona's VM sandboxes, the only ones that can pause), else "container".
  std::string sandbox_class = "container";
  std::string parent;              // the sandbox this one was forked from, if any
  Clock::time_point created_at;
  Clock::time_point ready_at;      // when a passing state (creating, pausing, ...) ends
  std::string settles_to = "started";
  long auto_stop_minutes = 15;
  long auto_pause_minutes = 0;
  long auto_archive_minutes = 10080;
  long auto_delete_minutes = -1;
  double cpu = 1, memory = 1, disk = 3;
  bool network_block_all = false;  // create's networkBlockAll: its commands run without a network
  std::string network_allow_list;  // create's networkAllowList: enforced as it can be (state.cpp)
  std::string domain_allow_list;   // create's domainAllowList (validated and recorded, not enforced)
  std::filesystem::path root;      // the sandbox's files on this machine
  std::map<std::string, FakeSession> sessions;
};

// Fault switches; tests set them between runs.
struct Faults {
  bool reject_api_key = false;    // every call answers 401
  std::string quota_message;      // non-empty: quota_route answers 400 with this message ...
  std::string quota_route = "create";  // ... ("create", "start" or "fork") ...
  int quota_skip = 0;             // ... after letting this many of its calls through
  std::string rate_limit_route;   // "create", "get", "list", "exec", "delete", ...: answers 429 ...
  int rate_limit_count = 0;       // ... this many times
  std::string fail_state;         // "error" or "build_failed": new sandboxes end there
  int start_delay_ms = 150;       // creating/starting lasts this long
  int drop_log_streams = 0;       // this many log follows break (no close frame) after their first bytes
  int max_frame_bytes = 0;        // > 0: log messages carry at most this many bytes
  bool hold_log_streams = false;  // log follows never close, even after the command ended
  bool public_preview = false;    // preview URLs come without a token
  std::string malformed_route;    // "create", "get", "list": a 2xx answer that is not JSON ...
  bool truncate_answer = false;   // ... but the real JSON answer cut in the middle
  bool deep_answer = false;       // ... but 400,000 nested '[' (past any parser's stack)
  std::string retry_after = "1";  // sent with 429 and fail_status answers; empty: none
  std::string fail_route;         // as rate_limit_route, or "upload", "session", "exec" on the toolbox: ...
  int fail_status = 503;          // ... answers this status ...
  int fail_times = 0;             // ... this many times ...
  int fail_skip = 0;              // ... after letting this many of its calls through
  std::string cut_route;          // a control-plane route whose connection closes mid-answer, its work done ...
  int cut_times = -1;             // ... this many times, then the real answer; < 0: always ...
  int cut_skip = 0;               // ... after letting this many of its calls through
  std::string hold_route;         // a route ("create", "upload", "exec") that does its work, then hangs until cleared ...
  int hold_skip = 0;              // ... after letting this many of its calls through
  std::string slow_route;         // a route (as hold_route) that does its work, then answers only ...
  int slow_ms = 0;                // ... this much later (sooner when the stand-in stops)
  std::string reset_route;        // a control-plane route whose connection is reset (TCP RST) mid-answer, its work done
  int reset_times = -1;           // ... this many times, then the real answer; < 0: always
  bool no_toolbox_proxy_url = false;  // sandboxes come without toolboxProxyUrl: clients ask toolbox-proxy-url
  bool whole_log_message = false;     // a log follow sends the whole log in one message once the command ended
  std::string vanish_route;       // a toolbox route ("upload", "session", "exec") or "pause", "stop", "start",
                                  // "fork": once, the sandbox is deleted
                                  // (as in the dashboard) just before that call is served ...
  int vanish_skip = 0;            // ... after letting this many of its calls through
};

class State : public test::StandinState {
 public:
  using StandinState::StandinState;

  std::string toolbox_url;  // set by the server once its port is known

  // Everything below is guarded by mutex() (calls, per route, too).
  Faults faults;
  std::map<std::string, FakeSandbox> sandboxes;
  std::vector<std::string> create_bodies;          // bodies of POST /sandbox
  std::vector<std::string> exec_commands;          // command texts of session exec calls
  std::vector<std::string> list_label_filters;     // `labels` parameters of list calls
  std::map<std::string, std::vector<std::string>> header_values;  // per header name, all values seen
  int page_size = 100;
  std::vector<std::string> issued_tokens;          // preview tokens handed out

  // A new sandbox and its home folder; caller holds the mutex.
  FakeSandbox& add_sandbox();
  // A sandbox in a passing state whose time has come reaches the state it was heading
  // for: creating/starting/resuming become started (or their failure), pausing paused,
  // stopping stopped.
  void settle(FakeSandbox& sb);
  // Moves `sb` to passing state `passing`, to settle start_delay_ms later; caller holds the mutex.
  void begin(FakeSandbox& sb, const std::string& passing);
  // Kills what the sandbox runs; caller holds the mutex.
  void stop_processes(FakeSandbox& sb);
  // Freezes (SIGSTOP) or thaws (SIGCONT) what the sandbox runs, as a VM's pause keeps its
  // memory; caller holds the mutex.
  void freeze_processes(FakeSandbox& sb, bool frozen);
  // A new sandbox holding a copy of `source`'s files (its folder copied, so the two are
  // independent from then on), labels and settings, creating; caller holds the mutex.
  FakeSandbox& fork_sandbox(const FakeSandbox& source, const std::string& name);
  // True when the quota fault refuses this call of `route`; caller holds the mutex.
  bool take_quota(const std::string& route);
  // Deletes a sandbox (processes and folder); caller holds the mutex.
  void remove(const std::string& id);
  // The sandbox user's home folder on this machine.
  static std::filesystem::path home_of(const FakeSandbox& sb) { return sb.root / "home" / sb.user; }
  // Consumes one 429 for `route` when that fault is armed; caller holds the mutex.
  bool take_rate_limit(const std::string& route);
  // True (once) when the vanish fault deletes the sandbox at this call of `route`; caller
  // holds the mutex.
  bool take_vanish(const std::string& route);
  // Consumes one fail_status answer for `route` when that fault is armed, returning the
  // status (0: none); caller holds the mutex.
  int take_failure(const std::string& route);
  // Blocks while hold_route names `route` and the stand-in is not stopping; caller holds
  // `lock` (on mutex()), which is released while waiting.
  void hold_while_asked(const std::string& route, std::unique_lock<std::mutex>& lock);
  // Waits slow_ms when slow_route names `route`, or until the stand-in stops; caller
  // holds `lock` (on mutex()), which is released while waiting.
  void delay_if_slow(const std::string& route, std::unique_lock<std::mutex>& lock);
  std::atomic<bool> stopping{false};  // set first when the stand-in shuts down: held calls end

  // Starts `command` in `session` of `sb` as sh -c in the user's home, every signal at its
  // default action (as the daemon's shell starts it); its output is copied into the log
  // line by line with Daytona's prefixes. Caller holds the mutex.
  std::shared_ptr<FakeCommand> start_command(FakeSandbox& sb, FakeSession& session, const std::string& command);
  // Threads that pump output and wait for processes; joined when the stand-in stops.
  // Safe without the mutex.
  test::Workers workers;
};

std::string rfc3339(Clock::time_point t);
std::string random_id(size_t length);

}  // namespace corral::daytona::standin
