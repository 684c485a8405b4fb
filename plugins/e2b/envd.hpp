// envd, the daemon inside every E2B sandbox: processes over the Connect protocol
// (process.Process/Start as a server stream with the JSON codec) and file upload
// (POST /files, multipart). Output is handed on as it arrives, in constant memory.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "corral/sdk/http.hpp"
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

// process.ProcessConfig: the program and its arguments are run without a shell.
struct ProcessRequest {
  std::string cmd;
  std::vector<std::string> args;
  StringMap envs;
  std::string cwd;  // absolute path in the sandbox
};

struct ProcessHooks {
  std::function<void(std::string_view)> on_stdout;
  std::function<void(std::string_view)> on_stderr;
  // Polled about ten times a second; true kills the remote process and ends run() with
  // Error(cancelled).
  std::function<bool()> stop;
};

// The exit code an envd EndEvent stands for: `exitCode` (absent = 0, as proto3 JSON
// omits defaults), or 128 + the signal number for a process killed by a signal.
int exit_code_of(const json::Value& end_event);

class Envd {
 public:
  Envd(sdk::http::Client& client, EnvdTarget target) : client_(client), target_(std::move(target)) {}

  // Starts `process`, streams its output to `hooks` and returns its exit code. A stream
  // that ends without an `end` event is Error(unavailable), never success. `what` names
  // the step in errors ("run the command").
  int run(const ProcessRequest& process, const ProcessHooks& hooks, const std::string& what);

  // Uploads the local file to `remote_path` (parent folders are created by envd).
  void upload(const std::string& local_path, const std::string& remote_path,
              const std::function<bool()>& cancelled);

  // Sends SIGKILL to process `pid`; best effort, false when envd did not confirm.
  bool kill(std::uint32_t pid);

 private:
  // Headers every envd request carries (routing, access token, user).
  std::vector<std::pair<std::string, std::string>> headers() const;
  Error failure(const sdk::http::Response& response, const std::string& what) const;

  sdk::http::Client& client_;
  EnvdTarget target_;
};

}  // namespace corral::e2b
