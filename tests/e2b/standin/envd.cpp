// The stand-in's envd: /health, /files (upload and download) and the Connect process
// service (Start as a server stream with the JSON codec, on pipes or on a terminal;
// SendSignal, SendInput, CloseStdin and Update as unary calls).
// Wire details follow process.proto and proto3 JSON: defaults are omitted (no exitCode
// when 0), bytes are base64, the stream ends with a 0x02 envelope.
#include <openssl/evp.h>
#include <poll.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <tuple>

#include "process.hpp"
#include "server.hpp"

namespace corral::e2b::standin {
namespace {

namespace fs = std::filesystem;
// Not Writer<StringBuffer>: its SSE2 specialization (RapidJSON 1.1.0) leaves 0x1A-0x1F unescaped.
using Writer = rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::UTF8<>, rapidjson::MemoryPoolAllocator<>>;

// Framing written here by hand, independent of the client's helpers under test.
std::string frame(const std::string& payload, unsigned char flags = 0) {
  const uint32_t n = static_cast<uint32_t>(payload.size());
  std::string out{static_cast<char>(flags), static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                  static_cast<char>(n >> 8), static_cast<char>(n)};
  return out + payload;
}

std::string b64(const char* data, size_t len) {
  std::string out(4 * ((len + 2) / 3), '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), reinterpret_cast<const unsigned char*>(data),
                          static_cast<int>(len));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string unb64(const std::string& text) {
  std::string out(text.size() / 4 * 3 + 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return {};
  size_t pad = (!text.empty() && text.back() == '=') + (text.size() > 1 && text[text.size() - 2] == '=');
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

std::string connect_error_json(const std::string& code, const std::string& message) {
  rapidjson::StringBuffer b;
  Writer w(b);
  w.StartObject();
  w.Key("error");
  w.StartObject();
  w.Key("code");
  w.String(code.c_str());
  w.Key("message");
  w.String(message.c_str());
  w.EndObject();
  w.EndObject();
  return b.GetString();
}

// A unary RPC's error: the HTTP status the Connect protocol gives `code`, and the JSON
// {"code", "message"}.
void connect_error(httplib::Response& res, const std::string& code, const std::string& message) {
  static const std::map<std::string, int> statuses = {
      {"invalid_argument", 400}, {"failed_precondition", 400}, {"out_of_range", 400}, {"unauthenticated", 401},
      {"permission_denied", 403}, {"not_found", 404}, {"aborted", 409}, {"already_exists", 409},
      {"resource_exhausted", 429}, {"unimplemented", 501}, {"unavailable", 503}, {"deadline_exceeded", 504}};
  const auto it = statuses.find(code);
  res.status = it == statuses.end() ? 500 : it->second;
  rapidjson::StringBuffer b;
  Writer w(b);
  w.StartObject();
  w.Key("code");
  w.String(code.c_str());
  w.Key("message");
  w.String(message.c_str());
  w.EndObject();
  res.set_content(b.GetString(), "application/json");
}

// A streaming RPC that fails before streaming still answers 200 with one end-of-stream
// envelope carrying the error (the Connect protocol's rule for streams).
void stream_error(httplib::Response& res, const std::string& code, const std::string& message) {
  res.status = 200;
  res.set_content(frame(connect_error_json(code, message), 0x02), "application/connect+json");
}

// The size of a process.PTY ({"size": {"cols", "rows"}}); what it leaves out is 0.
TerminalSize pty_size(const rapidjson::Value& pty) {
  TerminalSize size;
  if (!pty.HasMember("size") || !pty["size"].IsObject()) return size;
  const auto& s = pty["size"];
  if (s.HasMember("rows") && s["rows"].IsUint()) size.rows = static_cast<unsigned short>(s["rows"].GetUint());
  if (s.HasMember("cols") && s["cols"].IsUint()) size.cols = static_cast<unsigned short>(s["cols"].GetUint());
  return size;
}

// The acting user from "Authorization: Basic base64(user:)"; "user" when absent.
std::string user_of(const httplib::Request& req) {
  std::string auth = req.get_header_value("Authorization");
  if (auth.rfind("Basic ", 0) != 0) return "user";
  std::string decoded = unb64(auth.substr(6));
  return decoded.substr(0, decoded.find(':'));
}

bool known_user(const std::string& user) { return user == "user" || user == "root"; }

// Resolves the sandbox a request is for (header routing, else the Host name) and checks
// its access token; nullptr after answering the request with the failure. Counts the
// call under `route` unless `count` is false (the caller counts once it is valid).
FakeSandbox* sandbox_for(State& state, const std::string& route, const httplib::Request& req,
                         httplib::Response& res, bool count = true) {
  if (count) ++state.calls[route];
  for (const auto& [name, value] : req.headers) state.header_values[route].push_back(value);
  state.expire();
  std::string id = req.get_header_value("E2b-Sandbox-Id");
  if (!id.empty() && req.get_header_value("E2b-Sandbox-Port") != "49983") {
    // The edge routes to the port the header names; nothing of envd's listens elsewhere.
    http_error(res, 502, "The sandbox is running but port is not open");
    return nullptr;
  }
  if (id.empty()) {
    std::string host = req.get_header_value("Host");
    auto dash = host.find('-'), dot = host.find('.');
    if (dash != std::string::npos && dot != std::string::npos && dash < dot) id = host.substr(dash + 1, dot - dash - 1);
  }
  if (state.vanishes(route)) state.remove(id);
  auto it = state.sandboxes.find(id);
  if (it == state.sandboxes.end()) {
    // E2B's edge proxy answers 502 for a sandbox that is not running.
    http_error(res, 502, "The sandbox " + id + " was not found");
    return nullptr;
  }
  FakeSandbox& sb = it->second;
  if (sb.state == "paused") {
    // A paused sandbox has no envd to answer: the edge says so until connect resumes it.
    http_error(res, 502, "The sandbox " + id + " is paused; connect to it to resume it");
    return nullptr;
  }
  if (!sb.access_token.empty() && req.get_header_value("X-Access-Token") != sb.access_token) {
    http_error(res, 401, "unauthorized access, please provide a valid access token");
    return nullptr;
  }
  if (state.fails(route)) {
    if (!state.faults.retry_after.empty()) res.set_header("Retry-After", state.faults.retry_after);
    std::string why = "stand-in fault on " + route;
    if (state.faults.echo_secrets) why += " (request had X-Access-Token: " + req.get_header_value("X-Access-Token") + ")";
    http_error(res, state.faults.fail_status, why);
    return nullptr;
  }
  return &sb;
}

// One running Start call: the child and how to stream it.
struct Run {
  State* state = nullptr;
  std::string sandbox_id;
  Child child;
  bool started = false;  // start event sent
  bool out_open = true, err_open = true;
  bool reaped = false;
  int keepalive_ms = 0;
  int slow_ms = 0;
  int start_delay_ms = 0;
  bool cut = false;
  std::string cut_how;  // Faults::cut_how, when `cut`
  bool stall = false;   // Faults::stall_start picked this call
  bool sent_output = false;
  int local_port = 0, peer_port = 0;  // the connection, for a TCP reset

  std::string tag;
  std::shared_ptr<ChildInput> input;  // its stdin, shared with SendInput and CloseStdin

  ~Run() { finish(true); }

  // Kills (when asked) and reaps the child, closes pipes, forgets the process.
  int finish(bool kill_first) {
    int status = 0;
    if (!reaped) {
      if (kill_first) {
        ::kill(-child.pid, SIGKILL);
        ::kill(child.pid, SIGKILL);
      }
      if (input) input->close();
      status = reap(child.pid);
      reaped = true;
      if (child.out_fd >= 0) close(child.out_fd);
      if (child.err_fd >= 0) close(child.err_fd);
      std::lock_guard lock(state->mutex());
      auto it = state->sandboxes.find(sandbox_id);
      if (it != state->sandboxes.end()) {
        it->second.processes.erase(child.pid);
        it->second.inputs.erase(child.pid);
        if (!tag.empty()) it->second.tags.erase(tag);
      }
    }
    return status;
  }

  // What envd does when the client goes away: the process runs on; its output is read
  // (and dropped) until it ends, then it is reaped.
  void drain() {
    static thread_local char buf[64 * 1024];
    while (out_open || err_open) {
      pollfd fds[2] = {{out_open ? child.out_fd : -1, POLLIN, 0}, {err_open ? child.err_fd : -1, POLLIN, 0}};
      if (poll(fds, 2, 200) <= 0) continue;
      for (int i = 0; i < 2; ++i)
        if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) && closed_by_read(fds[i].fd, buf, sizeof buf))
          (i == 0 ? out_open : err_open) = false;
    }
    finish(false);
  }

  // Reads what `fd` holds into `buf`; true once it is at its end (a terminal's EIO too).
  // A terminal's master is non-blocking (its input's descriptor shares it): nothing yet is no end.
  static bool closed_by_read(int fd, char* buf, size_t size) {
    const ssize_t got = read(fd, buf, size);
    return got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR);
  }

  static std::string event(const std::string& inner) { return frame("{\"event\":" + inner + "}"); }

  // The stall fault: reads (and drops) the output for a moment, sending nothing; false
  // once the process closed its output, which ends the connection.
  bool stay_silent() {
    static thread_local char buf[64 * 1024];
    pollfd fds[2] = {{out_open ? child.out_fd : -1, POLLIN, 0}, {err_open ? child.err_fd : -1, POLLIN, 0}};
    if (poll(fds, 2, 100) > 0)
      for (int i = 0; i < 2; ++i)
        if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) && closed_by_read(fds[i].fd, buf, sizeof buf))
          (i == 0 ? out_open : err_open) = false;
    return out_open || err_open;
  }

  // True for the faults that drop the connection: "reset" (FIN) and "rst" (TCP RST).
  bool drops() const { return cut && (cut_how == "reset" || cut_how == "rst"); }
  // Drops the connection as the fault says; false, for step() to return.
  bool drop() {
    if (cut_how == "rst") {
      // A reset throws away what is still queued: let the output already written go first.
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      reset_connection(local_port, peer_port);
    }
    return false;
  }

  // False once the sandbox was deleted or paused (pausing drops every connection to it):
  // its envd, and every stream from it, are gone.
  bool sandbox_alive() const {
    std::lock_guard lock(state->mutex());
    auto it = state->sandboxes.find(sandbox_id);
    return it != state->sandboxes.end() && it->second.state == "running";
  }

  // One step of the stream; false aborts it (the client went away, or the connection is
  // to drop).
  bool step(httplib::DataSink& sink) {
    if (!sandbox_alive()) return false;
    if (drops() && sent_output) return drop();  // the command runs on
    if (stall && sent_output) return stay_silent();
    if (cut && cut_how == "oversized" && sent_output) {
      const std::string header{0, 0x40, 0, 0, 0};  // 1 GiB follows, it says
      sink.write(header.data(), header.size());
      sink.write("{\"event\":", 9);
      return false;
    }
    if (!started) {
      started = true;
      if (start_delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(start_delay_ms));
      std::string start = event("{\"start\":{\"pid\":" + std::to_string(child.pid) + "}}");
      return sink.write(start.data(), start.size());
    }
    if (out_open || err_open) {
      pollfd fds[2] = {{out_open ? child.out_fd : -1, POLLIN, 0}, {err_open ? child.err_fd : -1, POLLIN, 0}};
      int n = poll(fds, 2, keepalive_ms > 0 ? keepalive_ms : 200);
      if (n == 0) {
        if (keepalive_ms <= 0) return true;
        std::string ka = event("{\"keepalive\":{}}");
        return sink.write(ka.data(), ka.size());
      }
      static thread_local char buf[64 * 1024];
      for (int i = 0; i < 2; ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        ssize_t got = read(fds[i].fd, buf, sizeof buf);
        if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (got <= 0) {
          (i == 0 ? out_open : err_open) = false;
          continue;
        }
        if (slow_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(slow_ms));
        // DataEvent's oneof: a terminal's output is `pty`, whichever stream wrote it.
        const char* stream = child.terminal ? "pty" : i == 0 ? "stdout" : "stderr";
        std::string data = event(std::string("{\"data\":{\"") + stream + "\":\"" +
                                 b64(buf, static_cast<size_t>(got)) + "\"}}");
        if (!sink.write(data.data(), data.size())) return false;
        sent_output = true;
      }
      return true;
    }
    int status = finish(false);
    if (!sandbox_alive()) return false;  // killed with its sandbox: no end event from envd
    if (drops()) return drop();
    if (cut && cut_how == "mid-envelope") {  // ends cleanly, but inside a message
      std::string partial = event("{\"end\":{\"exited\":true}}").substr(0, 12);
      sink.write(partial.data(), partial.size());
      sink.done();
      return true;
    }
    if (cut) {  // the fault: the stream stops without telling how the command ended
      sink.done();
      return true;
    }
    std::string end;
    if (WIFEXITED(status)) {
      int code = WEXITSTATUS(status);
      // proto3 JSON: exitCode 0 is the default and is left out.
      end = "{\"end\":{" + (code != 0 ? "\"exitCode\":" + std::to_string(code) + "," : std::string()) +
            "\"exited\":true,\"status\":\"exit status " + std::to_string(code) + "\"}}";
    } else {
      const char* name = WTERMSIG(status) == SIGKILL ? "killed" : WTERMSIG(status) == SIGTERM ? "terminated" : "interrupt";
      end = std::string("{\"end\":{\"exitCode\":-1,\"status\":\"signal: ") + name + "\"}}";
    }
    std::string out = event(end) + frame("{}", 0x02);
    if (!sink.write(out.data(), out.size())) return false;
    sink.done();
    return true;
  }
};

void start(State& state, const httplib::Request& req, httplib::Response& res) {
  std::unique_lock lock(state.mutex());
  state.hold("start", lock);
  FakeSandbox* sb = sandbox_for(state, "start", req, res);
  if (!sb) return;
  if (req.get_header_value("Content-Type") != "application/connect+json")
    return http_error(res, 415, "unsupported content type");
  const std::string& body = req.body;
  if (body.size() < 5) return stream_error(res, "invalid_argument", "request has no envelope");
  size_t len = (static_cast<unsigned char>(body[1]) << 24) | (static_cast<unsigned char>(body[2]) << 16) |
               (static_cast<unsigned char>(body[3]) << 8) | static_cast<unsigned char>(body[4]);
  if (body.size() != 5 + len) return stream_error(res, "invalid_argument", "request envelope has the wrong length");
  rapidjson::Document doc;
  doc.Parse(body.data() + 5, len);
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("process") || !doc["process"].IsObject())
    return stream_error(res, "invalid_argument", "request is not a StartRequest");
  std::string user = user_of(req);
  if (!known_user(user)) return stream_error(res, "unauthenticated", "error looking up user '" + user + "'");
  const auto& p = doc["process"];
  std::string cmd = p.HasMember("cmd") && p["cmd"].IsString() ? p["cmd"].GetString() : "";
  std::vector<std::string> args;
  if (p.HasMember("args") && p["args"].IsArray())
    for (auto& a : p["args"].GetArray()) args.push_back(a.GetString());
  std::map<std::string, std::string> env{{"HOME", (sb->root / "home" / user).string()}, {"USER", user}};
  if (p.HasMember("envs") && p["envs"].IsObject())
    for (auto& e : p["envs"].GetObject()) env[e.name.GetString()] = e.value.GetString();
  std::string cwd = p.HasMember("cwd") && p["cwd"].IsString() ? p["cwd"].GetString() : "";
  auto mapped = State::map_path(*sb, cwd, user);
  if (!mapped) return stream_error(res, "invalid_argument", "cwd '" + cwd + "' is outside the sandbox");
  // process.proto: stdin "defaults to true" (kept open) unless the request says false.
  const bool with_stdin = !(doc.HasMember("stdin") && doc["stdin"].IsBool() && !doc["stdin"].GetBool());
  // A PTY: the process runs on a terminal of that size (stdin then plays no part).
  std::optional<TerminalSize> terminal;
  if (doc.HasMember("pty") && doc["pty"].IsObject()) terminal = pty_size(doc["pty"]);
  std::string tag = doc.HasMember("tag") && doc["tag"].IsString() ? doc["tag"].GetString() : "";
  if (state.faults.malformed_route == "start") {
    const std::string& kind = state.faults.malformed;
    res.status = 200;
    if (kind == "text") return res.set_content("all good", "text/plain");
    if (kind == "wrong-types")
      return res.set_content(frame("{\"event\":{\"start\":{\"pid\":\"one\"}}}"), "application/connect+json");
    return res.set_content(frame("this is not json"), "application/connect+json");
  }

  auto run = std::make_shared<Run>();
  run->state = &state;
  run->sandbox_id = sb->id;
  run->cut = state.faults.cut_streams_from > 0 && state.calls["start"] >= state.faults.cut_streams_from;
  run->cut_how = state.faults.cut_how;
  run->stall = state.faults.stall_start > 0 && state.calls["start"] == state.faults.stall_start;
  run->local_port = req.local_port;
  run->peer_port = req.remote_port;
  run->slow_ms = state.faults.slow_chunk_ms;
  run->start_delay_ms = state.faults.start_delay_ms;
  run->keepalive_ms = state.faults.keepalive_ms;
  if (run->keepalive_ms <= 0 && req.has_header("Keepalive-Ping-Interval"))
    run->keepalive_ms = std::atoi(req.get_header_value("Keepalive-Ping-Interval").c_str()) * 1000;
  try {
    run->child = spawn(cmd, args, env, mapped->string(), with_stdin, !sb->internet(), terminal);
    if (run->child.terminal) run->err_open = false;
  } catch (const std::exception& e) {
    run->reaped = true;
    return stream_error(res, "internal", e.what());
  }
  run->input = std::make_shared<ChildInput>(run->child.in_fd, run->child.terminal);
  run->child.in_fd = -1;  // the input owns it now
  sb->processes.insert(run->child.pid);
  sb->inputs[run->child.pid] = run->input;
  if (!tag.empty()) sb->tags[tag] = run->child.pid;
  run->tag = tag;
  lock.unlock();

  res.status = 200;
  res.set_chunked_content_provider(
      "application/connect+json", [run](size_t, httplib::DataSink& sink) { return run->step(sink); },
      [run, &state](bool) {
        if (run->reaped) return;
        std::lock_guard lock(state.mutex());
        state.drains.start([run] { run->drain(); });
      });
}

// The pid a unary request's ProcessSelector picks (its "process": {"pid"} or {"tag"}) of
// the processes running in `sb`; 0 after answering the request with envd's error.
pid_t selected_process(const FakeSandbox& sb, const rapidjson::Document& doc, httplib::Response& res) {
  const rapidjson::Value* selector = nullptr;
  if (!doc.HasParseError() && doc.IsObject() && doc.HasMember("process") && doc["process"].IsObject())
    selector = &doc["process"];
  const bool by_pid = selector && selector->HasMember("pid") && (*selector)["pid"].IsUint();
  const bool by_tag = selector && selector->HasMember("tag") && (*selector)["tag"].IsString();
  if (by_pid == by_tag) {
    connect_error(res, "invalid_argument", "the request selects no process by pid or tag, or both");
    return 0;
  }
  if (by_pid) {
    const auto pid = static_cast<pid_t>((*selector)["pid"].GetUint());
    if (sb.processes.count(pid)) return pid;
    connect_error(res, "not_found", "process with pid " + std::to_string(pid) + " not found");
    return 0;
  }
  const std::string tag = (*selector)["tag"].GetString();
  if (auto it = sb.tags.find(tag); it != sb.tags.end()) return it->second;
  connect_error(res, "not_found", "process with tag " + tag + " not found");
  return 0;
}

// A unary request's sandbox (as sandbox_for finds it, counted under `route`) and JSON
// body; nullptr after answering the request with the failure. Caller holds the mutex.
FakeSandbox* unary_request(State& state, const std::string& route, const httplib::Request& req,
                           httplib::Response& res, rapidjson::Document& doc) {
  FakeSandbox* sb = sandbox_for(state, route, req, res);
  if (!sb) return nullptr;
  if (req.get_header_value("Content-Type") != "application/json") {
    connect_error(res, "unimplemented", "only the JSON codec is served here");
    return nullptr;
  }
  doc.Parse(req.body.c_str(), req.body.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    connect_error(res, "invalid_argument", "the request is not a JSON object");
    return nullptr;
  }
  return sb;
}

// process.Process/SendSignal: like envd, signals exactly the selected process (by pid or
// tag), never its group.
void send_signal(State& state, const httplib::Request& req, httplib::Response& res) {
  std::lock_guard lock(state.mutex());
  rapidjson::Document doc;
  FakeSandbox* sb = unary_request(state, "signal", req, res, doc);
  if (!sb) return;
  const pid_t pid = selected_process(*sb, doc, res);
  if (pid == 0) return;
  const std::string signal = doc.HasMember("signal") && doc["signal"].IsString() ? doc["signal"].GetString() : "";
  if (signal != "SIGNAL_SIGKILL" && signal != "SIGNAL_SIGTERM")
    return connect_error(res, "unimplemented", "invalid signal: " + signal);
  ::kill(pid, signal == "SIGNAL_SIGTERM" ? SIGTERM : SIGKILL);
  res.set_content("{}", "application/json");
}

// process.Process/SendInput: ProcessInput's bytes (base64 in JSON) to the selected
// process's stdin, answered once it took them all (a child that does not read holds the
// call, as envd's blocking write does).
void send_input(State& state, const httplib::Request& req, httplib::Response& res) {
  std::shared_ptr<ChildInput> input;
  pid_t pid = 0;
  std::string data;
  {
    std::lock_guard lock(state.mutex());
    rapidjson::Document doc;
    FakeSandbox* sb = unary_request(state, "input", req, res, doc);
    if (!sb) return;
    pid = selected_process(*sb, doc, res);
    if (pid == 0) return;
    const rapidjson::Value* in = doc.HasMember("input") && doc["input"].IsObject() ? &doc["input"] : nullptr;
    const bool stdin_bytes = in && in->HasMember("stdin") && (*in)["stdin"].IsString();
    const bool pty_bytes = in && in->HasMember("pty") && (*in)["pty"].IsString();
    if (stdin_bytes == pty_bytes)
      return connect_error(res, "invalid_argument", "ProcessInput holds neither stdin nor pty bytes, or both");
    input = sb->inputs.at(pid);
    if (pty_bytes && !input->terminal())
      return connect_error(res, "failed_precondition",
                           "tty not assigned to process — input should be written to the stdin, not the tty");
    if (stdin_bytes && input->terminal())
      return connect_error(res, "failed_precondition",
                           "tty assigned to process — input should be written to the pty, not the stdin");
    data = unb64((*in)[pty_bytes ? "pty" : "stdin"].GetString());
    state.input_bodies.push_back(req.body);
  }
  if (const int error = input->write(data); error == EBADF)
    return connect_error(res, "failed_precondition", "stdin not enabled or closed");
  else if (error != 0)
    return connect_error(res, error == EPIPE ? "failed_precondition" : "internal",
                         "error writing to stdin of process '" + std::to_string(pid) + "': " + strerror(error));
  res.set_content("{}", "application/json");
}

// process.Process/CloseStdin: the selected process reads the end of its input. An envd
// before 0.5.2 has no such procedure: its router answers 404 in plain text.
void close_stdin(State& state, const httplib::Request& req, httplib::Response& res) {
  std::lock_guard lock(state.mutex());
  rapidjson::Document doc;
  FakeSandbox* sb = unary_request(state, "close-stdin", req, res, doc);
  if (!sb) return;
  int major = 0, minor = 0, patch = 0;
  if (std::sscanf(sb->envd_version.c_str(), "%d.%d.%d", &major, &minor, &patch) == 3 &&
      std::make_tuple(major, minor, patch) < std::make_tuple(0, 5, 2)) {
    res.status = 404;
    res.set_content("404 page not found\n", "text/plain; charset=utf-8");
    return;
  }
  const pid_t pid = selected_process(*sb, doc, res);
  if (pid == 0) return;
  ChildInput& input = *sb->inputs.at(pid);
  if (input.terminal())
    return connect_error(res, "failed_precondition", "cannot close stdin for PTY process — send Ctrl+D (0x04) instead");
  input.close();  // a close without a write in flight: a moment at most
  res.set_content("{}", "application/json");
}

// process.Process/Update: the selected process's terminal takes the PTY's size (its
// foreground job gets SIGWINCH); a request without one changes nothing.
void update(State& state, const httplib::Request& req, httplib::Response& res) {
  std::lock_guard lock(state.mutex());
  rapidjson::Document doc;
  FakeSandbox* sb = unary_request(state, "update", req, res, doc);
  if (!sb) return;
  const pid_t pid = selected_process(*sb, doc, res);
  if (pid == 0) return;
  if (doc.HasMember("pty") && doc["pty"].IsObject()) {
    if (const int error = sb->inputs.at(pid)->resize(pty_size(doc["pty"])); error != 0)
      return connect_error(res, "internal",
                           std::string("error resizing tty: ") +
                               (error == ENOTTY ? "tty not assigned to process" : strerror(error)));
  }
  res.set_content("{}", "application/json");
}

void upload(State& state, const httplib::Request& req, httplib::Response& res) {
  std::unique_lock lock(state.mutex());
  state.hold("files", lock);
  FakeSandbox* sb = sandbox_for(state, "files", req, res);
  if (!sb) return;
  std::string user = req.has_param("username") ? req.get_param_value("username") : user_of(req);
  if (!known_user(user)) return http_error(res, 401, "error looking up user '" + user + "': user: unknown user " + user);
  std::string path = req.get_param_value("path");
  std::vector<std::pair<std::string, const std::string*>> files;  // sandbox path, content
  if (req.is_multipart_form_data()) {
    for (const auto& [field, file] : req.files)
      files.emplace_back(path.empty() ? file.filename : path, &file.content);
  } else {
    if (path.empty()) return http_error(res, 400, "the path query parameter is required for octet-stream uploads");
    files.emplace_back(path, &req.body);
  }
  std::string out = "[";
  for (const auto& [p, content] : files) {
    auto mapped = State::map_path(*sb, p, user);
    if (!mapped) return http_error(res, 400, "path '" + p + "' is outside the sandbox");
    fs::create_directories(mapped->parent_path());
    std::ofstream(*mapped, std::ios::binary) << *content;
    std::string shown = "/" + fs::relative(*mapped, sb->root).string();
    out += std::string(out.size() > 1 ? "," : "") + "{\"path\":\"" + shown + "\",\"name\":\"" +
           mapped->filename().string() + "\",\"type\":\"file\"}";
  }
  res.set_content(out + "]", "application/json");
}

void download(State& state, const httplib::Request& req, httplib::Response& res) {
  std::lock_guard lock(state.mutex());
  ++state.calls["download"];  // every GET /files, answered or refused
  FakeSandbox* sb = sandbox_for(state, "files", req, res);
  if (!sb) return;
  std::string user = req.has_param("username") ? req.get_param_value("username") : user_of(req);
  std::string path = req.get_param_value("path");
  auto mapped = State::map_path(*sb, path, user);
  if (!mapped || !fs::is_regular_file(*mapped)) return http_error(res, 404, "path '" + path + "' does not exist");
  // Streamed from the open file as envd does, so a client that stops reading stops it.
  auto in = std::make_shared<std::ifstream>(*mapped, std::ios::binary);
  const std::uint64_t size = fs::file_size(*mapped);
  const int slow_ms = state.faults.slow_chunk_ms;
  res.set_header("Content-Disposition", "attachment; filename=\"" + mapped->filename().string() + "\"");
  res.set_content_provider(size, "application/octet-stream",
                           [in, slow_ms](size_t offset, size_t length, httplib::DataSink& sink) {
                             if (slow_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(slow_ms));
                             char buf[65536];
                             in->seekg(static_cast<std::streamoff>(offset));
                             in->read(buf, static_cast<std::streamsize>(std::min(length, sizeof buf)));
                             if (in->gcount() <= 0) return false;
                             return sink.write(buf, static_cast<size_t>(in->gcount()));
                           });
}

}  // namespace

void register_envd(httplib::Server& server, State& state) {
  server.Get("/health", [](const httplib::Request&, httplib::Response& res) { res.status = 204; });
  server.Post("/process.Process/Start",
              [&state](const httplib::Request& req, httplib::Response& res) { start(state, req, res); });
  server.Post("/process.Process/SendSignal",
              [&state](const httplib::Request& req, httplib::Response& res) { send_signal(state, req, res); });
  server.Post("/process.Process/SendInput",
              [&state](const httplib::Request& req, httplib::Response& res) { send_input(state, req, res); });
  server.Post("/process.Process/CloseStdin",
              [&state](const httplib::Request& req, httplib::Response& res) { close_stdin(state, req, res); });
  server.Post("/process.Process/Update",
              [&state](const httplib::Request& req, httplib::Response& res) { update(state, req, res); });
  server.Post("/files", [&state](const httplib::Request& req, httplib::Response& res) { upload(state, req, res); });
  server.Get("/files", [&state](const httplib::Request& req, httplib::Response& res) { download(state, req, res); });
}

}  // namespace corral::e2b::standin
