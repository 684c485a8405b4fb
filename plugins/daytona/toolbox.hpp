// The toolbox of one Daytona sandbox (toolbox.openapi3.yaml, paths under
// {toolboxProxyUrl}/{sandboxId}): the user's home folder, file upload (multipart,
// streamed from disk), process sessions and their commands' logs, followed live over a
// WebSocket upgrade.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "api.hpp"
#include "corral/sdk/websocket.hpp"

namespace corral::daytona {

class Toolbox {
 public:
  // Calls `base_url`, {toolboxProxyUrl}/{sandboxId}, through `api`, which must outlive it.
  Toolbox(const Api& api, std::string base_url, std::string sandbox_id);
  // The same toolbox through `client` (another thread's), which must outlive it.
  Toolbox(const Toolbox& other, sdk::http::Client& client);

  // GET /user-home-dir; Ctrl-C on `host` ends it.
  std::string home_dir(const sdk::Host& host);
  // POST /files/upload-v2?path=: `local_path` streamed as the multipart field "file";
  // parent folders are created by the toolbox, an existing file is replaced.
  void upload(const std::string& local_path, const std::string& remote_path, const std::function<bool()>& cancelled,
              const sdk::http::TransferFn& on_transfer = {});
  // GET /files/download?path=: the file's bytes to `on_body` as they arrive, never held
  // whole; an exception from on_body ends the transfer and reaches the caller.
  void download(const std::string& remote_path, const sdk::http::BodyFn& on_body,
                const std::function<bool()>& cancelled, const sdk::http::TransferFn& on_transfer = {});
  // DELETE /files?path=&recursive=true; a path already gone is success.
  void remove_path(const std::string& remote_path);
  // POST /process/session.
  void create_session(const std::string& session_id);
  // DELETE /process/session/{id}: ends its shell and whatever its commands still run.
  // True when the toolbox confirmed it (or the session was already gone).
  bool delete_session(const std::string& session_id);
  // POST /process/session/{id}/exec with runAsync: starts `command`, returns its cmdId.
  // Never retried: a repeated start would run the command twice. suppressInputEcho: what
  // send_input passes is the command's alone, never copied into its output.
  std::string run_async(const std::string& session_id, const std::string& command);
  // POST /process/session/{id}/command/{cmd}/input: `data` (JSON text: valid UTF-8)
  // written to the command's stdin, waiting as long as the command does not read it, until
  // `cancelled`. False when Daytona says the command has ended (410); never retried, as a
  // repeat could pass the input twice.
  bool send_input(const std::string& session_id, const std::string& command_id, std::string_view data,
                  const std::function<bool()>& cancelled);
  // GET /process/session/{id}/command/{cmd}: its exit code, or nullopt while it runs.
  std::optional<int> exit_code(const std::string& session_id, const std::string& command_id);
  // GET /process/session/{id}/command/{cmd}/logs without following, split: the whole
  // stdout and stderr so far.
  std::pair<std::string, std::string> logs(const std::string& session_id, const std::string& command_id);
  // Follows GET /process/session/{id}/command/{cmd}/logs?follow=true over a WebSocket,
  // asking for split output; every message's bytes go to `on_bytes` as they arrive.
  sdk::websocket::Ending follow_logs(const std::string& session_id, const std::string& command_id,
                                     const std::function<void(std::string_view)>& on_bytes,
                                     const std::function<bool()>& cancelled);

  const std::string& sandbox_id() const { return sandbox_id_; }

 private:
  // "/process/session/{id}/command/{cmd}", after the toolbox's URL.
  std::string command_path(const std::string& session_id, const std::string& command_id) const;
  Error failure(const sdk::http::Response& response, const std::string& what) const;

  const Api& api_;
  std::string base_url_;
  sdk::remote::ApiClient calls_;
  std::string sandbox_id_;
};

}  // namespace corral::daytona
