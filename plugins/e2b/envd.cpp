#include "envd.hpp"

#include <csignal>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>

#include "corral/sdk/base64.hpp"
#include "corral/sdk/connect.hpp"
#include "corral/os/random.hpp"
#include "corral/sdk/streamed_transfer.hpp"
#include "errors.hpp"
#include "settings.hpp"
#include "spec.hpp"

namespace corral::e2b {

// What one Start stream has told so far.
struct StreamState {
  bool ended = false;  // an `end` event arrived
  int exit_code = 0;
  std::uint32_t pid = 0;  // from the `start` event; 0 until then
  std::optional<sdk::connect::StreamError> error;  // from the end-of-stream envelope
  std::string decoded;                             // reused buffer for output chunks
};

namespace {

namespace http = sdk::http;
namespace connect = sdk::connect;

// envd pings a stream as often as asked; E2B's SDKs ask every 50 s. corral asks for a
// ping every third of its stall limit, so a quiet command never looks stalled.
constexpr std::int64_t kMaxKeepaliveSeconds = 50;
// envd's own deadline (Connect-Timeout-Ms) comes this long after corral's, so corral's
// timeout normally acts first and envd's only when corral is gone.
constexpr std::int64_t kDeadlineGraceSeconds = 30;
constexpr long kKillTimeout = 10;
// envd signals only the pid it started (no process group): every command runs as its own
// session leader so that its pid names the group a kill has to reach.
constexpr const char* kSetsid = "/usr/bin/setsid";
constexpr const char* kKill = "/bin/kill";

// The Keepalive-Ping-Interval (whole seconds) for a stream allowed `stall_seconds` of silence.
std::string keepalive_interval(std::int64_t stall_seconds) {
  return std::to_string(std::clamp<std::int64_t>(stall_seconds / 3, 1, kMaxKeepaliveSeconds));
}

// "pty": process.PTY of a terminal of `size`.
void write_pty(json::Writer& w, TerminalSize size) {
  w.Key("pty");
  w.StartObject();
  w.Key("size");
  w.StartObject();
  w.Key("cols");
  w.Uint(size.cols);
  w.Key("rows");
  w.Uint(size.rows);
  w.EndObject();
  w.EndObject();
}

std::string process_json(const ProcessRequest& p, const std::string& tag) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  w.Key("process");
  w.StartObject();
  json::write_string(w, "cmd", p.cmd);
  std::vector<std::string> args = p.args;
  json::write_strings(w, "args", args);
  json::write_map(w, "envs", p.envs);
  if (!p.cwd.empty()) json::write_string(w, "cwd", p.cwd);
  w.EndObject();
  if (p.pty) write_pty(w, *p.pty);
  // The tag finds the process again when the stream broke before its `start` event.
  json::write_string(w, "tag", tag);
  // Unset means "stdin open": a command reading stdin nobody feeds would wait forever.
  w.Key("stdin");
  w.Bool(p.open_stdin && !p.pty);
  w.EndObject();
  return {buffer.GetString(), buffer.GetSize()};
}

// A tag no other process in the sandbox has.
std::string new_tag() { return os::random_tag("corral-"); }

// process.ProcessSelector of process `pid` (> 0), else of the process tagged `tag`.
void write_selector(json::Writer& w, std::uint32_t pid, const std::string& tag) {
  w.Key("process");
  w.StartObject();
  if (pid != 0) {
    w.Key("pid");
    w.Uint(pid);
  } else {
    json::write_string(w, "tag", tag);
  }
  w.EndObject();
}

// A unary request's JSON body: the selector of `pid`, then what `rest` writes.
template <class Rest>
std::string selector_json(std::uint32_t pid, const std::string& tag, Rest&& rest) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  write_selector(w, pid, tag);
  rest(w);
  w.EndObject();
  return {buffer.GetString(), buffer.GetSize()};
}

// /bin/kill's name of the signals corral passes on; empty for any other.
std::string kill_option(int sig) {
  switch (sig) {
    case SIGKILL: return "-KILL";
    case SIGTERM: return "-TERM";
    case SIGINT: return "-INT";
    case SIGHUP: return "-HUP";
    default: return "";
  }
}

// Signal numbers of the names Go's ProcessState.String() prints on Linux.
int signal_number(std::string_view name) {
  static const std::map<std::string_view, int> known = {
      {"hangup", 1},           {"interrupt", 2},                {"quit", 3},
      {"illegal instruction", 4}, {"trace/breakpoint trap", 5}, {"aborted", 6},
      {"bus error", 7},        {"floating point exception", 8}, {"killed", 9},
      {"user defined signal 1", 10}, {"segmentation fault", 11}, {"user defined signal 2", 12},
      {"broken pipe", 13},     {"alarm clock", 14},             {"terminated", 15},
      {"stack fault", 16},     {"child exited", 17},            {"continued", 18},
      {"stopped (signal)", 19}, {"stopped", 20},                {"stopped (tty input)", 21},
      {"stopped (tty output)", 22}, {"urgent I/O condition", 23}, {"CPU time limit exceeded", 24},
      {"file size limit exceeded", 25}, {"virtual timer expired", 26}, {"profiling timer expired", 27},
      {"window changed", 28},  {"I/O possible", 29},            {"power failure", 30},
      {"bad system call", 31}};
  constexpr std::string_view core = " (core dumped)";
  if (name.size() > core.size() && name.substr(name.size() - core.size()) == core)
    name.remove_suffix(core.size());
  auto it = known.find(name);
  return it == known.end() ? 0 : it->second;
}

void handle_event(connect::Message& message, StreamState& st, const ProcessHooks& hooks) {
  if (message.end_stream()) {
    st.error = connect::end_stream_error(message.payload);
    return;
  }
  // Parsed in place: output events are most of a stream's bytes, and an in-situ parse
  // neither copies nor allocates their base64 strings.
  json::Document doc;
  doc.ParseInsitu(message.payload.data());
  if (doc.HasParseError())
    throw http::unexpected_answer("envd", "a process event is not valid JSON");
  const json::Value* event = json::find(doc, "event");
  if (!event || !event->IsObject()) return;
  const json::Value& e = *event;
  try {
    if (const json::Value* data = json::find(e, "data"); data && data->IsObject()) {
      for (auto& m : data->GetObject()) {
        if (!m.value.IsString()) continue;
        sdk::base64_decode_lenient(std::string_view(m.value.GetString(), m.value.GetStringLength()), st.decoded,
                                    "envd sent output");
        std::string_view name(m.name.GetString(), m.name.GetStringLength());
        if (name == "stderr") {
          if (hooks.on_stderr) hooks.on_stderr(st.decoded);
        } else if (hooks.on_stdout) {  // stdout, or pty output
          hooks.on_stdout(st.decoded);
        }
      }
    } else if (const json::Value* start = json::find(e, "start"); start && start->IsObject()) {
      st.pid = static_cast<std::uint32_t>(json::get_int(*start, "pid"));
    } else if (const json::Value* end = json::find(e, "end"); end && end->IsObject()) {
      st.exit_code = exit_code_of(*end);
      st.ended = true;
    }
  } catch (const Error& err) {
    if (err.code() != ErrorCode::invalid_argument) throw;  // the hooks' own errors pass
    throw http::unexpected_answer("envd", err.what());      // a field of the wrong type
  }
  // keepalive: nothing to do; its arrival already reset the idle clock.
}

// Refuses a 2xx answer that is not a Connect JSON stream (a proxy's page, say).
void check_stream_type(const http::Response& response, const std::string& what) {
  std::string type = response.header("content-type");
  type = type.substr(0, type.find(';'));
  while (!type.empty() && type.back() == ' ') type.pop_back();
  if (type != connect::kStreamContentType)
    throw http::unexpected_answer(what, "HTTP " + std::to_string(response.status) + " with content type '" + type +
                                            "' instead of " + connect::kStreamContentType);
}

}  // namespace

std::string envd_base_url(const std::string& sandbox_url, const std::string& sandbox_id, const std::string& domain) {
  if (!sandbox_url.empty()) return sandbox_url;
  return "https://" + std::to_string(kEnvdPort) + "-" + sandbox_id + "." + domain;
}

bool envd_closes_stdin(const std::string& version) {
  int part[3] = {0, 0, 0};
  std::size_t at = version.rfind('v', 0) == 0 ? 1 : 0;  // "v0.5.2" as well
  for (int i = 0; i < 3; ++i) {
    std::size_t end = at;
    while (end < version.size() && std::isdigit(static_cast<unsigned char>(version[end]))) ++end;
    if (end == at || end - at > 6) return true;  // not a version corral can read
    part[i] = std::stoi(version.substr(at, end - at));
    if (i < 2 && (end >= version.size() || version[end] != '.')) return true;
    at = end + 1;
  }
  return std::make_tuple(part[0], part[1], part[2]) >= std::make_tuple(0, 5, 2);
}

int exit_code_of(const json::Value& end) {
  const std::int64_t code = json::get_int(end, "exitCode", 0);
  const std::string status = json::get_string(end, "status");
  if (code < 0 || (code == 0 && !json::get_bool(end, "exited", true))) {
    // Go reports -1 for a process killed by a signal; the status names it.
    const std::string prefix = "signal: ";
    if (status.rfind(prefix, 0) == 0)
      if (int sig = signal_number(std::string_view(status).substr(prefix.size())); sig > 0) return 128 + sig;
    if (code < 0) return 255;
  }
  return static_cast<int>(code & 0xff);
}

std::vector<std::pair<std::string, std::string>> Envd::headers() const {
  std::vector<std::pair<std::string, std::string>> h;
  if (target_.route_by_headers) {
    h.emplace_back("E2b-Sandbox-Id", target_.sandbox_id);
    h.emplace_back("E2b-Sandbox-Port", std::to_string(kEnvdPort));
  }
  if (!target_.access_token.empty()) h.emplace_back("X-Access-Token", target_.access_token);
  // envd takes the acting user from HTTP Basic auth with an empty password.
  h.emplace_back("Authorization", "Basic " + sdk::base64_encode(target_.user + ":"));
  return h;
}

Error Envd::failure(const http::Response& response, const std::string& what) const {
  // E2B's edge answers 502 for a sandbox that is not running any more, but a gateway on
  // the way may too: the provider asks the control plane before it says "gone".
  if (response.status == 502)
    return Error(ErrorCode::unavailable, what + ": HTTP 502 from E2B's edge (the sandbox is not running, or the edge failed)",
                 "check `corral status --id LEASE`; retry in a moment if the sandbox is there");
  if (response.status == 401 || response.status == 403)
    return http::status_error(response, what,
                              "the sandbox refused the access token or the user '" + target_.user + "'; check " +
                                  identity().settings.flag("user") + " (" + identity().settings.env("user") + ")");
  return api_error(response, what);
}

http::Response Envd::start(const ProcessRequest& process, const std::string& tag, const ProcessHooks& hooks,
                           const std::string& what, long timeout_seconds, StreamState& st,
                           const WhileRunning& while_running) {
  http::Request r;
  r.method = "POST";
  r.url = target_.base_url + "/process.Process/Start";
  r.headers = headers();
  r.headers.emplace_back("Content-Type", connect::kStreamContentType);
  r.headers.emplace_back(connect::kProtocolVersionHeader, "1");
  r.headers.emplace_back("Keepalive-Ping-Interval", keepalive_interval(stall_seconds_));
  if (process.timeout_seconds > 0)
    r.headers.emplace_back("Connect-Timeout-Ms", std::to_string((process.timeout_seconds + kDeadlineGraceSeconds) * 1000));
  r.body = connect::envelope(process_json(process, tag));
  r.timeout_seconds = timeout_seconds;  // 0 for commands: they may run for hours
  r.idle_timeout_seconds = static_cast<long>(stall_seconds_);
  if (timeout_seconds == 0) r.timeout_setting = setting_name("stall-timeout");  // the stall limit is the only one
  r.cancelled = hooks.stop;
  if (while_running)
    r.cancelled = [&] {
      if (st.pid != 0 && !st.ended) while_running(st.pid);
      return hooks.stop && hooks.stop();
    };
  r.what = what;
  r.sandbox_stream = "command";
  connect::Decoder decoder;
  r.on_headers = [&](const http::Response& head) { check_stream_type(head, what); };
  r.on_body = [&](std::string_view chunk) {
    bool in_event = false;  // the events' own errors pass as they are
    try {
      decoder.feed(chunk, [&](connect::Message& m) {
        in_event = true;
        handle_event(m, st, hooks);
        in_event = false;
      });
    } catch (const Error& e) {
      if (in_event) throw;
      // The framing is broken: name the stream, as every other envd failure does.
      throw Error(e.code(), what + ": " + e.what(),
                  "envd sent a stream corral cannot read; rerun, and report it to E2B if it repeats");
    }
  };
  http::Response response = client_.send(r);
  if (response.ok()) {
    check_stream_type(response, what);  // also when the body was empty
    if (!decoder.at_boundary())
      throw Error(ErrorCode::unavailable, what + ": the process stream was cut in the middle of a message",
                  "the connection to the sandbox broke; check `corral status --id LEASE` and rerun");
  }
  return response;
}

int Envd::run(const ProcessRequest& process, const ProcessHooks& hooks, const std::string& step,
               const WhileRunning& while_running) {
  const std::string what = "E2B sandbox " + target_.sandbox_id + ": " + step;
  ProcessRequest session = process;
  // On a terminal, envd starts the process as a session leader already (setsid there would
  // fork, leaving the command without its controlling terminal).
  if (!process.pty) {
    session.cmd = kSetsid;
    // -w: should setsid have to fork (it never does under envd), it still reports the exit code.
    session.args = {"-w", process.cmd};
    session.args.insert(session.args.end(), process.args.begin(), process.args.end());
  }
  const std::string tag = new_tag();
  StreamState st;
  http::Response response;
  try {
    response = start(session, tag, hooks, what, 0, st, while_running);
  } catch (const Error& e) {
    // Cancelled, timed out, stalled or cut: envd keeps a process running when its client
    // goes away, so stop it unless it surely never started.
    const bool may_run = st.pid != 0 || e.code() == ErrorCode::cancelled || e.code() == ErrorCode::unavailable ||
                         e.code() == ErrorCode::timeout;
    if (!st.ended && may_run) stop_remote(st.pid, tag, hooks);
    throw;
  }
  if (!response.ok()) throw failure(response, what);
  if (st.ended) return st.exit_code;
  // No `end` event: stop what may run (an error before `start` means it never did).
  if (st.pid != 0 || !st.error) stop_remote(st.pid, tag, hooks);
  if (st.error)
    throw Error(connect::code_for(st.error->code),
                what + ": envd reported " + st.error->code + ": " + st.error->message,
                "check the command, the workdir (" + identity().settings.flag("workdir") + ") and the user (" +
                    identity().settings.flag("user") + ")");
  throw Error(ErrorCode::unavailable, what + ": the process stream ended before the command finished (no end event)",
              "the sandbox may have stopped or passed its lifetime; check `corral status --id LEASE` and rerun");
}

void Envd::stop_remote(std::uint32_t pid, const std::string& tag, const ProcessHooks& hooks) {
  const bool confirmed = pid != 0 ? signal_group(pid, SIGKILL) : send_signal(0, tag, SIGKILL);
  if (!confirmed && hooks.warn)
    hooks.warn("could not confirm that the command stopped in E2B sandbox " + target_.sandbox_id +
               "; it may keep running there until the sandbox is stopped or its lifetime ends");
}

bool Envd::signal_group(std::uint32_t pid, int sig, bool fall_back) {
  if (pid <= 1) return false;  // `kill -1` is every process's, and no command is init
  const std::string option = kill_option(sig);
  if (option.empty()) return false;
  ProcessRequest k{kKill, {option, "--", "-" + std::to_string(pid)}, {}, "", kKillTimeout};
  StreamState st;
  try {
    http::Response r = start(k, new_tag(), ProcessHooks{}, "E2B signal process group " + std::to_string(pid),
                             kKillTimeout, st);
    if (r.ok() && st.ended && st.exit_code == 0) return true;
  } catch (const Error&) {
    // fall back to signalling the process itself
  }
  return fall_back && (sig == SIGKILL || sig == SIGTERM) && send_signal(pid, "", sig);
}

bool Envd::send_signal(std::uint32_t pid, const std::string& tag, int sig) {
  const std::string body = selector_json(pid, tag, [sig](json::Writer& w) {
    json::write_string(w, "signal", sig == SIGTERM ? "SIGNAL_SIGTERM" : "SIGNAL_SIGKILL");
  });
  try {
    http::Response response = unary("SendSignal", body, "E2B signal process", kKillTimeout);
    // not_found: no such process runs any more, which is what a kill wants.
    return response.ok() || response.status == 404;
  } catch (const Error&) {
    return false;
  }
}

http::Response Envd::unary(const std::string& method, const std::string& body, const std::string& what,
                           long timeout_seconds, const std::function<bool()>& cancelled) {
  http::Request r;
  r.method = "POST";
  r.url = target_.base_url + "/process.Process/" + method;
  r.headers = headers();
  r.headers.emplace_back("Content-Type", "application/json");
  r.headers.emplace_back(connect::kProtocolVersionHeader, "1");
  r.body = body;
  r.timeout_seconds = timeout_seconds;
  r.cancelled = cancelled;
  r.what = what;
  return client_.send(r);
}

InputOutcome Envd::input_outcome(const http::Response& response, const std::string& what) const {
  if (response.ok()) return InputOutcome::taken;
  // envd's Connect errors about the process itself: it ended (not_found), or its stdin is
  // closed (failed_precondition; before envd told the two apart, a write to a closed pipe
  // was internal or unknown). Anything else is the way there failing: the edge's answer,
  // a refused token, a request envd does not know.
  static const std::set<std::string, std::less<>> about_the_process = {"not_found", "failed_precondition", "internal",
                                                                      "unknown"};
  try {
    const json::Document doc = json::parse(response.body, "envd's answer");
    if (const json::Value* code = json::find(doc, "code");
        code && code->IsString() && about_the_process.count(std::string_view(code->GetString(), code->GetStringLength())))
      return InputOutcome::refused;
  } catch (const Error&) {
    // not envd's: fall through
  }
  throw failure(response, what);
}

InputOutcome Envd::send_input(std::uint32_t pid, std::string_view data, bool pty,
                              const std::function<bool()>& cancelled) {
  if (data.size() > kMaxInputBytes) throw Error(ErrorCode::internal, "send_input: more than one call's input");
  const std::string what = "E2B sandbox " + target_.sandbox_id + ": pass the input on to the command";
  const std::string body = selector_json(pid, "", [&](json::Writer& w) {
    w.Key("input");
    w.StartObject();
    json::write_string(w, pty ? "pty" : "stdin", sdk::base64_encode(data));
    w.EndObject();
  });
  // No time bound: envd answers once the process read it, which may take as long as it
  // does; the caller cancels the call when the command ends.
  return input_outcome(unary("SendInput", body, what, 0, cancelled), what);
}

InputOutcome Envd::close_stdin(std::uint32_t pid, const std::function<bool()>& cancelled) {
  const std::string what = "E2B sandbox " + target_.sandbox_id + ": close the command's stdin";
  return input_outcome(unary("CloseStdin", selector_json(pid, "", [](json::Writer&) {}), what, kKillTimeout, cancelled),
                       what);
}

bool Envd::resize(std::uint32_t pid, TerminalSize size) {
  const std::string body = selector_json(pid, "", [size](json::Writer& w) { write_pty(w, size); });
  try {
    return unary("Update", body, "E2B resize the command's terminal", kKillTimeout).ok();
  } catch (const Error&) {
    return false;
  }
}

std::string Envd::file_url(const std::string& remote_path) const {
  return target_.base_url + "/files?path=" + http::url_encode(remote_path) +
         "&username=" + http::url_encode(target_.user);
}

void Envd::upload(const std::string& local_path, const std::string& remote_path,
                  const std::function<bool()>& cancelled, const http::TransferFn& on_transfer) {
  const std::string what = "E2B upload to sandbox " + target_.sandbox_id;
  send_transfer(http::streamed_upload(file_url(remote_path), what, local_path, remote_path, cancelled, on_transfer));
}

void Envd::download(const std::string& remote_path, const http::BodyFn& on_body,
                    const std::function<bool()>& cancelled, const http::TransferFn& on_transfer) {
  const std::string what = "E2B download from sandbox " + target_.sandbox_id;
  send_transfer(http::streamed_get(file_url(remote_path), what, on_body, cancelled, on_transfer));
}

void Envd::send_transfer(http::Request request) {
  const auto h = headers();
  request.headers.insert(request.headers.begin(), h.begin(), h.end());
  http::Response response = client_.send(request);
  if (!response.ok()) throw failure(response, request.what);
}

}  // namespace corral::e2b
