#include "toolbox.hpp"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <regex>

#include "multipart.hpp"
#include "server.hpp"

namespace corral::daytona::standin {
namespace {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace websocket = boost::beast::websocket;
namespace fs = std::filesystem;
using tcp = boost::asio::ip::tcp;
// Not rapidjson::Writer<StringBuffer>: with RAPIDJSON_SSE2 that specialization leaves the
// control bytes 0x1A-0x1F unescaped (RapidJSON 1.1.0), and command output may hold them.
using Writer = rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::UTF8<>,
                                 rapidjson::CrtAllocator, rapidjson::kWriteNanAndInfFlag>;
using HttpRequest = http::request<http::string_body>;
using HttpResponse = http::response<http::string_body>;

// The size of the daemon's reads of a log it streams.
constexpr size_t kDaemonReadBytes = 1024;

// The first SDK version whose log requests get split output.
constexpr int kSplitVersion[3] = {0, 167, 0};

std::string percent_decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else if (s[i] == '+') {
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return out;
}

std::map<std::string, std::string> query_of(std::string_view target) {
  std::map<std::string, std::string> q;
  size_t mark = target.find('?');
  if (mark == std::string_view::npos) return q;
  std::string_view rest = target.substr(mark + 1);
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    size_t eq = pair.find('=');
    q[percent_decode(pair.substr(0, eq))] = eq == std::string_view::npos ? "" : percent_decode(pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
  return q;
}

// True when the request asks for split output (see SOURCES.md): an SDK version at or
// above the split version, or no version and X-Daytona-Split-Output: true.
bool wants_split(const HttpRequest& req) {
  auto version = req.find("X-Daytona-SDK-Version");
  if (version != req.end()) {
    int v[3] = {0, 0, 0};
    std::sscanf(std::string(version->value()).c_str(), "%d.%d.%d", &v[0], &v[1], &v[2]);
    for (int i = 0; i < 3; ++i)
      if (v[i] != kSplitVersion[i]) return v[i] > kSplitVersion[i];
    return true;
  }
  auto split = req.find("X-Daytona-Split-Output");
  return split != req.end() && split->value() == "true";
}

// Log bytes without their prefixes (the combined form).
std::string combined(std::string_view log) {
  std::string out;
  for (size_t i = 0; i < log.size();) {
    if (i + 3 <= log.size() && (log.substr(i, 3) == "\x01\x01\x01" || log.substr(i, 3) == "\x02\x02\x02")) {
      i += 3;
      continue;
    }
    out += log[i++];
  }
  return out;
}

// `text` as Go's encoding/json puts a string in JSON (the daemon answers with gin's
// c.JSON): coerced to valid UTF-8, every byte that does not start a valid sequence
// replaced by U+FFFD, as utf8.DecodeRuneInString reads it. Raw binary output does not
// survive the logs endpoint's JSON either.
std::string go_json_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  auto in = [&](size_t i, unsigned lo, unsigned hi) {
    return i < text.size() && static_cast<unsigned char>(text[i]) >= lo && static_cast<unsigned char>(text[i]) <= hi;
  };
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    size_t n = 0;  // length of the valid sequence at i, 0 if none
    if (c < 0x80) n = 1;
    else if (c >= 0xc2 && c <= 0xdf) n = in(i + 1, 0x80, 0xbf) ? 2 : 0;
    else if (c >= 0xe0 && c <= 0xef) {
      const unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
      n = in(i + 1, lo, hi) && in(i + 2, 0x80, 0xbf) ? 3 : 0;
    } else if (c >= 0xf0 && c <= 0xf4) {
      const unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
      n = in(i + 1, lo, hi) && in(i + 2, 0x80, 0xbf) && in(i + 3, 0x80, 0xbf) ? 4 : 0;
    }
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

// The stdout and stderr parts of a split log.
std::pair<std::string, std::string> split_streams(std::string_view log) {
  std::string out, err;
  std::string* current = &out;
  for (size_t i = 0; i < log.size();) {
    if (i + 3 <= log.size() && log.substr(i, 3) == "\x01\x01\x01") {
      current = &out;
      i += 3;
    } else if (i + 3 <= log.size() && log.substr(i, 3) == "\x02\x02\x02") {
      current = &err;
      i += 3;
    } else {
      *current += log[i++];
    }
  }
  return {out, err};
}

// Writes all of `data` to pipe `fd`, waiting while it is full; false when no reader is
// left or the stand-in stops.
bool write_all(int fd, std::string_view data, const std::atomic<bool>& stopping) {
  while (!data.empty()) {
    pollfd p{fd, POLLOUT, 0};
    const int ready = ::poll(&p, 1, 100);
    if (stopping) return false;
    if (ready < 0 && errno != EINTR) return false;
    if (ready <= 0) continue;
    if (p.revents & (POLLERR | POLLHUP | POLLNVAL)) return false;
    const ssize_t n = ::write(fd, data.data(), std::min<size_t>(data.size(), PIPE_BUF));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return false;  // EPIPE: nobody reads the command's stdin any more
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string read_from(const fs::path& path, std::uint64_t offset) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return out;
}

HttpResponse json_response(const HttpRequest& req, int status, const std::string& body) {
  HttpResponse res{static_cast<http::status>(status), req.version()};
  res.set(http::field::content_type, "application/json");
  res.body() = body;
  return res;
}

HttpResponse error_response(const HttpRequest& req, int status, const std::string& message) {
  return json_response(req, status, error_body(status, message, std::string(req.target())));
}

template <class F>
std::string json_of(F&& write) {
  rapidjson::StringBuffer b;
  Writer w(b);
  write(w);
  return b.GetString();
}

std::string command_json(const FakeCommand& c) {
  return json_of([&](Writer& w) {
    w.StartObject();
    w.Key("id");
    w.String(c.id.c_str());
    w.Key("command");
    w.String(c.command.c_str());
    if (c.exit_code) {
      w.Key("exitCode");
      w.Int(*c.exit_code);
    }
    w.EndObject();
  });
}

// Where sandbox path `path` lives on this machine (relative = from the home folder);
// nullopt when it would leave the sandbox's folder.
std::optional<fs::path> map_path(const FakeSandbox& sb, const std::string& path) {
  fs::path p = path.empty() || path.front() != '/' ? State::home_of(sb) / path : fs::path(path);
  p = p.lexically_normal();
  const std::string root = sb.root.lexically_normal().string();
  const std::string s = p.string();
  if (s.size() <= root.size() || s.compare(0, root.size(), root) != 0 || s[root.size()] != '/') return std::nullopt;
  return p;
}

// Streams a command's log to `ws` until the command has ended and its log is sent
// (normal close), the session goes away (normal close), or a drop fault cuts it.
void follow(websocket::stream<tcp::socket>& ws, State& st, const std::string& sandbox_id, const std::string& session_id,
            std::shared_ptr<FakeCommand> cmd, bool split, const std::atomic<bool>& stopping) {
  bool drop = false, hold = false, whole = false;
  int max_frame = 0;
  {
    std::lock_guard lock(st.mutex());
    hold = st.faults.hold_log_streams;
    whole = st.faults.whole_log_message;
    if (st.faults.drop_log_streams > 0) {
      --st.faults.drop_log_streams;
      drop = true;
    }
    max_frame = st.faults.max_frame_bytes;
  }
  ws.binary(true);
  if (whole) {  // one message holding all of the log, however large
    for (;;) {
      {
        std::lock_guard lock(st.mutex());
        if (cmd->exit_code || stopping) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const std::string log = read_from(cmd->log, 0);
    beast::error_code ec;
    ws.write(boost::asio::buffer(split ? log : combined(log)), ec);
    if (!ec) ws.close(websocket::close_code::normal, ec);
    return;
  }
  std::uint64_t offset = 0;
  int quiet = 0;
  while (!stopping) {
    std::string fresh = read_from(cmd->log, offset);
    if (!fresh.empty()) {
      offset += fresh.size();
      quiet = 0;
      std::string payload = split ? fresh : combined(fresh);
      // The daemon reads the log 1024 bytes at a time and sends each read as one binary
      // message (util.ReadLogWithExitCode, session.GetSessionCommandLogs), so prefixes and
      // lines straddle messages as a matter of course.
      const size_t frame = max_frame > 0 ? static_cast<size_t>(max_frame) : kDaemonReadBytes;
      for (size_t i = 0; i < payload.size(); i += frame) {
        beast::error_code ec;
        ws.write(boost::asio::buffer(payload.data() + i, std::min(frame, payload.size() - i)), ec);
        if (ec) return;
      }
      if (drop) {  // the connection breaks: no close frame
        beast::error_code ec;
        ws.next_layer().shutdown(tcp::socket::shutdown_both, ec);
        ws.next_layer().close(ec);
        return;
      }
      continue;
    }
    bool ended = false, gone = false;
    {
      std::lock_guard lock(st.mutex());
      auto sb = st.sandboxes.find(sandbox_id);
      gone = sb == st.sandboxes.end() || !sb->second.sessions.count(session_id);
      ended = cmd->exit_code.has_value();
    }
    // The daemon closes once the exit code is recorded and a run of reads found nothing.
    if (gone || (ended && !hold && ++quiet >= 5)) {
      beast::error_code ec;
      ws.close(websocket::close_code::normal, ec);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

struct Route {
  std::string sandbox_id;
  std::string rest;  // path below /toolbox/{id}/, without the query
};

std::optional<Route> route_of(std::string_view target) {
  static const std::regex pattern("^/toolbox/([^/?]+)/([^?]*)");
  std::cmatch m;
  std::string t(target);
  if (!std::regex_search(t.c_str(), m, pattern)) return std::nullopt;
  return Route{m[1].str(), m[2].str()};
}

// The name tests give a toolbox call in fail_route, hold_route, slow_route and vanish_route: "upload", "session"
// (create one), "exec"; empty for the others.
std::string fault_route_of(const HttpRequest& req) {
  auto route = route_of(std::string(req.target()));
  if (!route || req.method() != http::verb::post) return "";
  static const std::regex exec_path(R"(process/session/([^/]+)/exec)");
  if (route->rest == "files/upload-v2" || route->rest == "files/bulk-upload") return "upload";
  if (route->rest == "process/session") return "session";
  if (std::regex_match(route->rest, exec_path)) return "exec";
  return "";
}

// Answers one plain HTTP request; caller holds no lock. For a file download it sets
// `*stream` to the file, whose bytes the caller streams after the returned head.
HttpResponse handle(State& st, const HttpRequest& req, fs::path* stream) {
  auto route = route_of(std::string(req.target()));
  if (!route) return error_response(req, 404, "Cannot " + std::string(req.method_string()) + " " + std::string(req.target()));
  const auto query = query_of(std::string(req.target()));
  const std::string method(req.method_string());
  const std::string& rest = route->rest;
  std::smatch m;

  std::unique_lock lock(st.mutex());
  ++st.calls["toolbox " + method + " " + std::regex_replace(rest, std::regex("corral-[0-9a-f]+|[0-9a-f-]{36}"), "*")];
  if (st.faults.reject_api_key || std::string(req[http::field::authorization]) != "Bearer " + st.api_key())
    return error_response(req, 401, "Invalid credentials");
  if (st.take_vanish(fault_route_of(req))) st.remove(route->sandbox_id);
  auto it = st.sandboxes.find(route->sandbox_id);
  if (it == st.sandboxes.end()) return error_response(req, 404, "Sandbox not found");
  FakeSandbox& sb = it->second;
  st.settle(sb);
  if (sb.state != "started") return error_response(req, 400, "Sandbox is not running (state " + sb.state + ")");
  if (method == "POST" && rest == "process/session" && st.take_rate_limit("session"))
    return error_response(req, 429, "Too Many Requests");
  if (int status = st.take_failure(fault_route_of(req))) {
    HttpResponse res = error_response(req, status, "the stand-in was told to fail this call");
    if (!st.faults.retry_after.empty()) res.set(http::field::retry_after, st.faults.retry_after);
    return res;
  }

  if (method == "GET" && (rest == "user-home-dir" || rest == "work-dir"))
    return json_response(req, 200, json_of([&](Writer& w) {
                           w.StartObject();
                           w.Key("dir");
                           w.String(State::home_of(sb).string().c_str());
                           w.EndObject();
                         }));

  if (method == "POST" && (rest == "files/upload-v2" || rest == "files/bulk-upload")) {
    auto boundary = multipart_boundary(std::string(req[http::field::content_type]));
    std::vector<std::pair<std::string, std::string>> files;  // sandbox path, content
    if (rest == "files/upload-v2") {
      if (!query.count("path")) return error_response(req, 400, "path is required");
      if (boundary) {
        std::vector<FormPart> parts;
        try {
          parts = parse_multipart(req.body(), *boundary);
        } catch (const std::exception& e) {
          return error_response(req, 400, e.what());
        }
        for (auto& p : parts)
          if (p.name == "file") files.emplace_back(query.at("path"), std::move(p.data));
        if (files.empty()) return error_response(req, 400, "file is required");
      } else {
        files.emplace_back(query.at("path"), req.body());
      }
    } else {
      if (!boundary) return error_response(req, 400, "multipart body expected");
      std::map<std::string, std::string> paths, contents;
      for (auto& p : parse_multipart(req.body(), *boundary)) {
        static const std::regex field(R"(files\[(\d+)\]\.(path|file))");
        std::smatch fm;
        if (!std::regex_match(p.name, fm, field)) continue;
        (fm[2] == "path" ? paths : contents)[fm[1]] = std::move(p.data);
      }
      for (auto& [i, path] : paths)
        if (contents.count(i)) files.emplace_back(path, std::move(contents[i]));
    }
    std::string last;
    for (auto& [path, content] : files) {
      auto host = map_path(sb, path);
      if (!host) return error_response(req, 400, "path is outside the sandbox: " + path);
      fs::create_directories(host->parent_path());
      std::ofstream(*host, std::ios::binary | std::ios::trunc) << content;
      last = path;
    }
    if (rest == "files/bulk-upload") return json_response(req, 200, "");
    return json_response(req, 200, json_of([&](Writer& w) {
                           w.StartObject();
                           w.Key("name");
                           w.String(fs::path(last).filename().c_str());
                           w.Key("path");
                           w.String(last.c_str());
                           w.Key("type");
                           w.String("file");
                           w.EndObject();
                         }));
  }

  if (method == "GET" && rest == "files/download") {
    auto host = query.count("path") ? map_path(sb, query.at("path")) : std::nullopt;
    if (!host) return error_response(req, 400, "invalid path");
    std::error_code ec;
    if (!fs::exists(*host, ec)) return error_response(req, 404, "file not found");
    if (fs::is_directory(*host, ec)) return error_response(req, 400, "path must be a file");
    *stream = *host;
    HttpResponse res{http::status::ok, req.version()};
    res.set(http::field::content_type, "application/octet-stream");
    res.set(http::field::content_disposition, "attachment; filename=" + host->filename().string());
    return res;
  }

  if (method == "DELETE" && rest == "files") {
    auto host = query.count("path") ? map_path(sb, query.at("path")) : std::nullopt;
    if (!host) return error_response(req, 400, "invalid path");
    std::error_code ec;
    if (!fs::exists(*host, ec)) return error_response(req, 404, "file not found");
    if (fs::is_directory(*host) && query.count("recursive") && query.at("recursive") == "true") fs::remove_all(*host, ec);
    else fs::remove(*host, ec);
    if (ec) return error_response(req, 400, ec.message());
    HttpResponse res{http::status::no_content, req.version()};
    return res;
  }

  if (method == "POST" && rest == "process/session") {
    rapidjson::Document body;
    body.Parse(req.body().c_str());
    if (body.HasParseError() || !body.IsObject() || !body.HasMember("sessionId") || !body["sessionId"].IsString())
      return error_response(req, 400, "sessionId is required");
    const std::string id = body["sessionId"].GetString();
    if (sb.sessions.count(id)) return error_response(req, 409, "session already exists");
    sb.sessions[id].id = id;
    HttpResponse res{http::status::created, req.version()};
    return res;
  }

  static const std::regex session_path(R"(process/session/([^/]+))");
  static const std::regex exec_path(R"(process/session/([^/]+)/exec)");
  static const std::regex command_path(R"(process/session/([^/]+)/command/([^/]+))");
  static const std::regex logs_path(R"(process/session/([^/]+)/command/([^/]+)/logs)");
  static const std::regex input_path(R"(process/session/([^/]+)/command/([^/]+)/input)");

  if (std::regex_match(rest, m, session_path)) {
    auto s = sb.sessions.find(m[1]);
    if (s == sb.sessions.end()) return error_response(req, 404, "session not found");
    if (method == "DELETE") {
      for (auto& [cid, cmd] : s->second.commands)
        if (!cmd->exit_code && cmd->pid > 0) ::kill(-cmd->pid, SIGKILL);
      sb.sessions.erase(s);
      HttpResponse res{http::status::no_content, req.version()};
      return res;
    }
    return json_response(req, 200, json_of([&](Writer& w) {
                           w.StartObject();
                           w.Key("sessionId");
                           w.String(s->first.c_str());
                           w.Key("commands");
                           w.StartArray();
                           for (auto& [cid, cmd] : s->second.commands) {
                             rapidjson::Document d;
                             d.Parse(command_json(*cmd).c_str());
                             d.Accept(w);
                           }
                           w.EndArray();
                           w.EndObject();
                         }));
  }

  if (method == "POST" && std::regex_match(rest, m, exec_path)) {
    auto s = sb.sessions.find(m[1]);
    if (s == sb.sessions.end()) return error_response(req, 404, "session not found");
    if (st.take_rate_limit("exec")) return error_response(req, 429, "Too Many Requests");
    rapidjson::Document body;
    body.Parse(req.body().c_str());
    if (body.HasParseError() || !body.IsObject() || !body.HasMember("command") || !body["command"].IsString())
      return error_response(req, 400, "command is required");
    const std::string text = body["command"].GetString();
    st.exec_commands.push_back(text);
    const bool async = (body.HasMember("runAsync") && body["runAsync"].IsBool() && body["runAsync"].GetBool()) ||
                       (body.HasMember("async") && body["async"].IsBool() && body["async"].GetBool());
    std::shared_ptr<FakeCommand> cmd;
    try {
      cmd = st.start_command(sb, s->second, text);
    } catch (const std::exception& e) {
      return error_response(req, 500, e.what());
    }
    cmd->echo_input = !(body.HasMember("suppressInputEcho") && body["suppressInputEcho"].IsBool() &&
                        body["suppressInputEcho"].GetBool());
    if (async)
      return json_response(req, 202, json_of([&](Writer& w) {
                             w.StartObject();
                             w.Key("cmdId");
                             w.String(cmd->id.c_str());
                             w.EndObject();
                           }));
    // Synchronous: the call returns once the command has ended.
    while (!cmd->exit_code) {
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      lock.lock();
    }
    auto [raw_out, raw_err] = split_streams(read_from(cmd->log, 0));
    const std::string all = go_json_text(combined(read_from(cmd->log, 0)));
    const std::string out = go_json_text(raw_out), err = go_json_text(raw_err);
    return json_response(req, 200, json_of([&](Writer& w) {
                           w.StartObject();
                           w.Key("cmdId");
                           w.String(cmd->id.c_str());
                           w.Key("output");
                           w.String(all.c_str(), static_cast<rapidjson::SizeType>(all.size()));
                           w.Key("stdout");
                           w.String(out.c_str(), static_cast<rapidjson::SizeType>(out.size()));
                           w.Key("stderr");
                           w.String(err.c_str(), static_cast<rapidjson::SizeType>(err.size()));
                           w.Key("exitCode");
                           w.Int(*cmd->exit_code);
                           w.EndObject();
                         }));
  }

  if (method == "POST" && std::regex_match(rest, m, input_path)) {
    auto s = sb.sessions.find(m[1]);
    if (s == sb.sessions.end()) return error_response(req, 404, "session not found");
    auto c = s->second.commands.find(m[2]);
    if (c == s->second.commands.end()) return error_response(req, 404, "command not found");
    std::shared_ptr<FakeCommand> cmd = c->second;
    if (cmd->exit_code)
      return error_response(req, 410, "command has already completed with exit code " + std::to_string(*cmd->exit_code));
    rapidjson::Document body;
    body.Parse(req.body().c_str(), req.body().size());
    if (body.HasParseError() || !body.IsObject() || !body.HasMember("data") || !body["data"].IsString())
      return error_response(req, 400, "data is required");
    std::string data(body["data"].GetString(), body["data"].GetStringLength());
    if (data.empty() || data.back() != '\n') data += '\n';  // as the daemon does, for `read`
    std::shared_ptr<InputPipe> input = cmd->input;
    const bool echo = cmd->echo_input;
    if (!input) return error_response(req, 410, "command has already completed");
    lock.unlock();
    // Written as the daemon writes to the command's FIFO: the call lasts until the command
    // has read it (or no reader is left), however long that takes.
    if (!write_all(input->fd, data, st.stopping)) return error_response(req, 500, "failed to write to input pipe");
    if (echo) {
      std::ofstream(cmd->log, std::ios::binary | std::ios::app) << std::string("\x01\x01\x01", 3) << data;
    }
    HttpResponse res{http::status::no_content, req.version()};
    return res;
  }

  if (method == "GET" && (std::regex_match(rest, m, command_path) || std::regex_match(rest, m, logs_path))) {
    auto s = sb.sessions.find(m[1]);
    if (s == sb.sessions.end()) return error_response(req, 404, "session not found");
    auto c = s->second.commands.find(m[2]);
    if (c == s->second.commands.end()) return error_response(req, 404, "command not found");
    if (rest.size() < 5 || rest.substr(rest.size() - 5) != "/logs") return json_response(req, 200, command_json(*c->second));
    const std::string log = read_from(c->second->log, 0);
    if (!wants_split(req)) {
      HttpResponse res{http::status::ok, req.version()};
      res.set(http::field::content_type, "text/plain; charset=utf-8");
      res.body() = combined(log);
      return res;
    }
    auto [raw_out, raw_err] = split_streams(log);
    const std::string all = go_json_text(combined(log));
    const std::string out = go_json_text(raw_out), err = go_json_text(raw_err);
    return json_response(req, 200, json_of([&](Writer& w) {
                           w.StartObject();
                           w.Key("output");
                           w.String(all.c_str(), static_cast<rapidjson::SizeType>(all.size()));
                           w.Key("stdout");
                           w.String(out.c_str(), static_cast<rapidjson::SizeType>(out.size()));
                           w.Key("stderr");
                           w.String(err.c_str(), static_cast<rapidjson::SizeType>(err.size()));
                           w.EndObject();
                         }));
  }
  return error_response(req, 404, "Cannot " + method + " /" + rest);
}

}  // namespace

ToolboxServer::ToolboxServer(State& state, int port)
    : state_(state), acceptor_(ioc_, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port))) {
  port_ = acceptor_.local_endpoint().port();
  accept_thread_ = std::thread([this] { accept_loop(); });
}

ToolboxServer::~ToolboxServer() {
  stopping_ = true;
  {
    // Wake the blocking accept with a connection of our own.
    beast::error_code ec;
    tcp::socket waker(ioc_);
    waker.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port_)), ec);
  }
  if (accept_thread_.joinable()) accept_thread_.join();
  std::vector<std::thread> connections;
  {
    std::lock_guard lock(connections_mutex_);
    for (auto& s : sockets_) {
      beast::error_code ec;
      s->shutdown(tcp::socket::shutdown_both, ec);
    }
    connections.swap(connections_);
  }
  for (auto& c : connections) c.join();
}

void ToolboxServer::accept_loop() {
  while (!stopping_) {
    auto socket = std::make_shared<tcp::socket>(ioc_);
    beast::error_code ec;
    acceptor_.accept(*socket, ec);
    if (stopping_) return;
    if (ec) continue;
    socket->set_option(tcp::no_delay(true), ec);  // as the Go daemon does: no Nagle delay
    std::lock_guard lock(connections_mutex_);
    sockets_.push_back(socket);
    connections_.emplace_back([this, socket] { serve(socket); });
  }
}

void ToolboxServer::serve(std::shared_ptr<tcp::socket> socket) {
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(1024ull * 1024 * 1024);
    beast::error_code ec;
    http::read(*socket, buffer, parser, ec);
    if (ec || stopping_) return;
    HttpRequest req = parser.release();
    if (websocket::is_upgrade(req)) {
      // GET .../process/session/{s}/command/{c}/logs?follow=true
      auto route = route_of(std::string(req.target()));
      static const std::regex logs_path(R"(process/session/([^/]+)/command/([^/]+)/logs)");
      std::smatch m;
      std::shared_ptr<FakeCommand> cmd;
      int status = 0;
      std::string message;
      {
        std::lock_guard lock(state_.mutex());
        ++state_.calls["follow"];
        auto sb = route ? state_.sandboxes.find(route->sandbox_id) : state_.sandboxes.end();
        if (state_.faults.reject_api_key || std::string(req[http::field::authorization]) != "Bearer " + state_.api_key()) {
          status = 401, message = "Invalid credentials";
        } else if (!route || sb == state_.sandboxes.end() || !std::regex_match(route->rest, m, logs_path)) {
          status = 404, message = "not found";
        } else {
          auto s = sb->second.sessions.find(m[1]);
          if (s == sb->second.sessions.end() || !s->second.commands.count(m[2])) status = 404, message = "command not found";
          else cmd = s->second.commands.at(m[2]);
        }
      }
      if (status) {
        HttpResponse res = error_response(req, status, message);
        res.prepare_payload();
        http::write(*socket, res, ec);
        return;
      }
      const bool split = wants_split(req);
      websocket::stream<tcp::socket> ws(std::move(*socket));
      ws.accept(req, ec);
      if (ec) return;
      follow(ws, state_, route->sandbox_id, m[1], cmd, split, stopping_);
      return;
    }
    fs::path stream;
    HttpResponse res = handle(state_, req, &stream);
    {
      std::unique_lock lock(state_.mutex());
      state_.hold_while_asked(fault_route_of(req), lock);
      state_.delay_if_slow(fault_route_of(req), lock);
    }
    if (!stream.empty()) {
      // Sent from disk in pieces, as the daemon does: a client that stops reading stops it.
      http::response<http::file_body> file{res.result(), res.version()};
      for (const auto& field : res) file.set(field.name_string(), field.value());
      file.body().open(stream.c_str(), beast::file_mode::scan, ec);
      if (ec) return;
      file.keep_alive(req.keep_alive());
      file.prepare_payload();
      http::write(*socket, file, ec);
      if (ec || !req.keep_alive()) return;
      continue;
    }
    res.keep_alive(req.keep_alive());
    res.prepare_payload();
    http::write(*socket, res, ec);
    if (ec || !req.keep_alive()) return;
  }
}

}  // namespace corral::daytona::standin
