// envd, the daemon inside every E2B sandbox: processes over the Connect protocol
// (process.Process/Start as a server stream with the JSON codec) and file upload
// (POST /files, multipart). Output is handed on as it arrives, in constant memory.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "corral/sdk/http.hpp"
#include "corral/sdk/remote/command_hooks.hpp"
#include "corral/types.hpp"

namespace corral::e2b {

// Where and as whom envd requests go.
struct EnvdTarget {
  std::string base_url;       // https://49983-<id>.<domain>, or E2B_SANDBOX_URL
  std::string sandbox_id;
  bool route_by_headers = false;  // E2B_SANDBOX_URL: add E2b-Sandbox-Id / E2b-Sandbox-Port
  std::string access_token;   // secret; empty for a sandbox created without `secure`
  std::string user;
};

// A terminal's size (process.PTY.Size).
struct TerminalSize {
  std::uint16_t rows = 24;
  std::uint16_t cols = 80;
};

// process.ProcessConfig and what else StartRequest asks: the program and its arguments are
// run without a shell.
struct ProcessRequest {
  std::string cmd;
  std::vector<std::string> args;
  StringMap envs;
  std::string cwd;                   // absolute path in the sandbox
  std::int64_t timeout_seconds = 0;  // > 0: envd itself ends the call a little after this
  // Its stdin stays open for send_input() until close_stdin(); false: it reads an empty one.
  bool open_stdin = false;
  // Runs it on a terminal of its own of this size (its stdin, stdout and stderr, its
  // output coming as stdout), input by send_input(pty) and resize(); envd makes it the
  // leader of a session of its own.
  std::optional<TerminalSize> pty;
};

// stop() true kills the remote process and ends run() with Error(cancelled).
using ProcessHooks = sdk::remote::CommandHooks;

// Told the pid of the command run() started, each time run() polls hooks.stop once envd
// reported it (about ten times a second): for calls to the running process, made through
// another Envd (through()) since this one's client is busy with the stream.
using WhileRunning = std::function<void(std::uint32_t pid)>;

// What became of a call that hands a running process its input (send_input, close_stdin).
enum class InputOutcome {
  taken,    // envd confirmed it
  refused,  // envd answered that the process takes no more: it ended, or closed its stdin
};

// The exit code an envd EndEvent stands for: `exitCode` (absent = 0, as proto3 JSON
// omits defaults), or 128 + the signal number for a process killed by a signal.
int exit_code_of(const json::Value& end_event);

// Whether envd of version `version` (the sandbox's envdVersion, "0.5.4") has CloseStdin,
// which came with 0.5.2: without it a command's input cannot end. Unknown: taken to have it.
bool envd_closes_stdin(const std::string& version);

// envd's base URL for a sandbox: E2B_SANDBOX_URL when set (requests are then routed by
// headers), else https://49983-<id>.<domain>.
std::string envd_base_url(const std::string& sandbox_url, const std::string& sandbox_id, const std::string& domain);

struct StreamState;  // what one Start stream has told so far (envd.cpp)

class Envd {
 public:
  // `stall_seconds`: how long a command's stream may stay silent, with no keep-alive either.
  Envd(sdk::http::Client& client, EnvdTarget target, std::int64_t stall_seconds)
      : client_(client), target_(std::move(target)), stall_seconds_(stall_seconds) {}

  // Starts `process` in a session of its own (via setsid, or its terminal's, so its pid
  // is its process group), streams its output to `hooks` and returns its exit code.
  // Whenever run() ends without an `end` event (cancel, timeout, cut stream, stream error)
  // it kills the whole group, and warns through hooks.warn when envd did not confirm that.
  // A stream that ends without an `end` event is Error(unavailable), never success. `what`
  // names the step in errors ("run the command"); `while_running` is told the pid as it runs.
  int run(const ProcessRequest& process, const ProcessHooks& hooks, const std::string& what,
          const WhileRunning& while_running = {});

  const std::string& sandbox_id() const { return target_.sandbox_id; }
  // The same envd through `client`: for calls made while this one's client streams a command.
  Envd through(sdk::http::Client& client) const { return Envd(client, target_, stall_seconds_); }

  // SendInput: `data` (at most kMaxInputBytes) to process `pid`'s stdin, or to its terminal
  // (`pty`). envd answers once the process took it, so a call may wait as long as the
  // process does not read: until `cancelled`. Throws Error when envd could not be asked
  // or answered otherwise than the process API does (a gateway's error, a refused token).
  InputOutcome send_input(std::uint32_t pid, std::string_view data, bool pty, const std::function<bool()>& cancelled);
  static constexpr std::size_t kMaxInputBytes = 64 << 10;
  // CloseStdin: the end of process `pid`'s input (not for a terminal: send Ctrl-D). As send_input.
  InputOutcome close_stdin(std::uint32_t pid, const std::function<bool()>& cancelled);
  // Update: process `pid`'s terminal is `size` now (its SIGWINCH); true when envd confirmed it.
  bool resize(std::uint32_t pid, TerminalSize size);

  // Uploads the local file to `remote_path` (parent folders are created by envd).
  void upload(const std::string& local_path, const std::string& remote_path,
              const std::function<bool()>& cancelled, const sdk::http::TransferFn& on_transfer = {});

  // Streams the sandbox file `remote_path` (GET /files) to `on_body` chunk by chunk; an
  // exception from on_body ends the transfer and reaches the caller.
  void download(const std::string& remote_path, const sdk::http::BodyFn& on_body,
                const std::function<bool()>& cancelled, const sdk::http::TransferFn& on_transfer = {});

  // Sends `sig` (SIGKILL, SIGTERM, SIGINT, SIGHUP) to process group `pid` (a second
  // Start of /bin/kill), falling back (`fall_back`) to SendSignal of the process itself
  // for SIGKILL and SIGTERM (the only signals envd's API has); true when envd confirmed
  // one of them (or the process was already gone).
  bool signal_group(std::uint32_t pid, int sig, bool fall_back = true);
  // SendSignal of SIGKILL or SIGTERM to the process picked by pid (> 0) or else by `tag`;
  // true when envd confirmed it or said no such process runs.
  bool send_signal(std::uint32_t pid, const std::string& tag, int sig);

 private:
  // One Start call tagged `tag`: sends it and feeds its events into `st`; throws what
  // send() throws, and Error(unavailable) for a 2xx answer that is not a Connect stream.
  // `timeout_seconds` bounds the whole call (0 = none, idle-guarded).
  sdk::http::Response start(const ProcessRequest& process, const std::string& tag, const ProcessHooks& hooks,
                            const std::string& what, long timeout_seconds, StreamState& st,
                            const WhileRunning& while_running = {});
  // One unary call of the process service (`method`: "SendInput", ...) with JSON `body`:
  // its answer, whatever the status. Throws what send() throws.
  sdk::http::Response unary(const std::string& method, const std::string& body, const std::string& what,
                            long timeout_seconds, const std::function<bool()>& cancelled = {});
  // What send_input and close_stdin make of their answer.
  InputOutcome input_outcome(const sdk::http::Response& response, const std::string& what) const;
  // Kills what may still run after a failed run(): the group of `pid`, else the process
  // tagged `tag`; warns through `hooks` when envd did not confirm it.
  void stop_remote(std::uint32_t pid, const std::string& tag, const ProcessHooks& hooks);
  // Headers every envd request carries (routing, access token, user).
  std::vector<std::pair<std::string, std::string>> headers() const;
  // The file API's URL for `remote_path` (GET and POST /files).
  std::string file_url(const std::string& remote_path) const;
  // Sends a file transfer with the headers above; throws failure() for a non-2xx answer.
  void send_transfer(sdk::http::Request request);
  Error failure(const sdk::http::Response& response, const std::string& what) const;

  sdk::http::Client& client_;
  EnvdTarget target_;
  std::int64_t stall_seconds_;
};

}  // namespace corral::e2b
