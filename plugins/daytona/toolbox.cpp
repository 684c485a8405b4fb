#include "toolbox.hpp"

#include "corral/sdk/read_answer.hpp"
#include "corral/sdk/streamed_transfer.hpp"
#include "errors.hpp"

namespace corral::daytona {
namespace {

namespace http = sdk::http;

// Asks the toolbox for the log split into stdout and stderr (prefixed chunks) instead of
// the combined text it gives clients that send no SDK version.
constexpr const char* kSplitOutputHeader = "X-Daytona-Split-Output";

}  // namespace

Error Toolbox::failure(const http::Response& response, const std::string& what) const {
  // The proxy answers 404 for a sandbox that is gone, and 502/503 for one not running.
  return api_error(response, what);
}

Toolbox::Toolbox(const Api& api, std::string base_url, std::string sandbox_id)
    : api_(api), base_url_(std::move(base_url)), calls_(api.at(base_url_)), sandbox_id_(std::move(sandbox_id)) {}

Toolbox::Toolbox(const Toolbox& other, http::Client& client)
    : api_(other.api_),
      base_url_(other.base_url_),
      calls_(other.api_.at(base_url_, client)),
      sandbox_id_(other.sandbox_id_) {}

std::string Toolbox::command_path(const std::string& session_id, const std::string& command_id) const {
  return "/process/session/" + http::url_encode(session_id) + "/command/" + http::url_encode(command_id);
}

std::string Toolbox::home_dir(const sdk::Host& host) {
  const std::string what = "Daytona sandbox " + sandbox_id_ + ": find the user's home folder";
  http::Response response =
      calls_.send({.path = "/user-home-dir", .what = what, .limit = api_.request_limit(), .cancellable = &host});
  if (!response.ok()) throw failure(response, what);
  json::Document doc = http::parse_body(response, what);
  const std::string dir =
      http::read_answer(what, [&] { return doc.IsObject() ? json::get_string(doc, "dir") : ""; });
  if (dir.empty() || dir.front() != '/') throw http::unexpected_answer(what, "the home folder is not an absolute path");
  return dir;
}

void Toolbox::upload(const std::string& local_path, const std::string& remote_path,
                     const std::function<bool()>& cancelled, const http::TransferFn& on_transfer) {
  const std::string what = "Daytona upload to sandbox " + sandbox_id_;
  const std::string path = "/files/upload-v2?path=" + http::url_encode(remote_path);
  http::Response response =
      calls_.send_once(http::streamed_upload(path, what, local_path, remote_path, cancelled, on_transfer));
  if (!response.ok()) throw failure(response, what);
}

void Toolbox::download(const std::string& remote_path, const http::BodyFn& on_body,
                       const std::function<bool()>& cancelled, const http::TransferFn& on_transfer) {
  const std::string what = "Daytona download from sandbox " + sandbox_id_;
  const std::string path = "/files/download?path=" + http::url_encode(remote_path);
  http::Response response = calls_.send_once(http::streamed_get(path, what, on_body, cancelled, on_transfer));
  if (!response.ok()) throw failure(response, what);
}

void Toolbox::remove_path(const std::string& remote_path) {
  const std::string what = "Daytona sandbox " + sandbox_id_ + ": delete " + remote_path;
  http::Response response = calls_.send({.method = "DELETE",
                                         .path = "/files?recursive=true&path=" + http::url_encode(remote_path),
                                         .what = what,
                                         .limit = api_.request_limit()});
  if (response.status == 404) return;
  if (!response.ok()) throw failure(response, what);
}

void Toolbox::create_session(const std::string& session_id) {
  const std::string what = "Daytona sandbox " + sandbox_id_ + ": create a process session";
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  json::write_string(w, "sessionId", session_id);
  w.EndObject();
  // A repeat after 429 is safe: the session id is ours and new.
  http::Response response = calls_.send(
      {.method = "POST", .path = "/process/session", .body = buffer.GetString(), .what = what, .limit = api_.request_limit()});
  if (!response.ok()) throw failure(response, what);
}

bool Toolbox::delete_session(const std::string& session_id) {
  const std::string what = "Daytona sandbox " + sandbox_id_ + ": delete process session " + session_id;
  try {
    http::Response response = calls_.send({.method = "DELETE",
                                           .path = "/process/session/" + http::url_encode(session_id),
                                           .what = what,
                                           .limit = api_.request_limit()});
    return response.ok() || response.status == 404;
  } catch (const Error&) {
    return false;
  }
}

std::string Toolbox::run_async(const std::string& session_id, const std::string& command) {
  const std::string what = "Daytona sandbox " + sandbox_id_ + ": start the command";
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  json::write_string(w, "command", command);
  w.Key("runAsync");
  w.Bool(true);
  w.Key("suppressInputEcho");
  w.Bool(true);
  w.EndObject();
  http::Response response = calls_.send({.method = "POST",
                                         .path = "/process/session/" + http::url_encode(session_id) + "/exec",
                                         .body = buffer.GetString(),
                                         .what = what,
                                         .limit = api_.request_limit(),
                                         .retry = Retry::never});
  if (!response.ok()) throw failure(response, what);
  json::Document doc = http::parse_body(response, what);
  const std::string id =
      http::read_answer(what, [&] { return doc.IsObject() ? json::get_string(doc, "cmdId") : ""; });
  if (id.empty()) throw http::unexpected_answer(what, "the answer has no cmdId");
  return id;
}

bool Toolbox::send_input(const std::string& session_id, const std::string& command_id, std::string_view data,
                         const std::function<bool()>& cancelled) {
  const std::string what = "Daytona sandbox " + sandbox_id_ + ": pass input to the command";
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  json::write_string(w, "data", data);
  w.EndObject();
  http::Request r;
  r.method = "POST";
  r.url = command_path(session_id, command_id) + "/input";
  r.headers = {{"Content-Type", "application/json"}, {"Accept", "application/json"}};
  r.body = buffer.GetString();
  // The toolbox answers once the command took the input: however long it reads nothing.
  r.timeout_seconds = 0;
  r.cancelled = cancelled;
  r.what = what;
  http::Response response = calls_.send_once(std::move(r));
  if (response.status == 410) return false;
  if (!response.ok()) throw failure(response, what);
  return true;
}

std::optional<int> Toolbox::exit_code(const std::string& session_id, const std::string& command_id) {
  const std::string what = "Daytona sandbox " + sandbox_id_ + ": read the command's exit code";
  http::Response response =
      calls_.send({.path = command_path(session_id, command_id), .what = what, .limit = api_.request_limit()});
  if (!response.ok()) throw failure(response, what);
  json::Document doc = http::parse_body(response, what);
  if (!doc.IsObject()) throw http::unexpected_answer(what, "the command is not a JSON object");
  auto it = doc.FindMember("exitCode");
  if (it == doc.MemberEnd() || it->value.IsNull()) return std::nullopt;
  if (!it->value.IsInt()) throw http::unexpected_answer(what, "exitCode is not an integer");
  return it->value.GetInt();
}

std::pair<std::string, std::string> Toolbox::logs(const std::string& session_id, const std::string& command_id) {
  const std::string what = "Daytona sandbox " + sandbox_id_ + ": read the command's output";
  http::Request r;
  r.method = "GET";
  r.url = command_path(session_id, command_id) + "/logs";
  r.headers = {{kSplitOutputHeader, "true"}, {"Accept", "application/json"}};
  // The whole log can be large: bounded by its silence, not by its length.
  r.timeout_seconds = 0;
  r.idle_timeout_seconds = static_cast<long>(api_.request_limit().seconds);
  r.timeout_setting = api_.request_limit().setting;
  r.what = what;
  http::Response response = calls_.send_once(std::move(r));
  if (!response.ok()) throw failure(response, what);
  json::Document doc = http::parse_body(response, what);
  return http::read_answer(what, [&] {
    if (!doc.IsObject()) throw Error(ErrorCode::invalid_argument, "not a JSON object");
    return std::pair{json::get_string(doc, "stdout"), json::get_string(doc, "stderr")};
  });
}

sdk::websocket::Ending Toolbox::follow_logs(const std::string& session_id, const std::string& command_id,
                                            const std::function<void(std::string_view)>& on_bytes,
                                            const std::function<bool()>& cancelled) {
  sdk::websocket::Request r;
  r.url = calls_.url(command_path(session_id, command_id) + "/logs?follow=true");
  r.headers.emplace_back(kSplitOutputHeader, "true");
  r.cancelled = cancelled;
  calls_.authorize(r.headers, r.tls, r.cancelled);
  r.what = "Daytona sandbox " + sandbox_id_ + ": follow the command's output";
  return sdk::websocket::follow(r, [&](std::string_view data, bool) { on_bytes(data); });
}

}  // namespace corral::daytona
