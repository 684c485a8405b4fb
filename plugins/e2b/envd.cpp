#include "envd.hpp"

#include <map>

#include "base64.hpp"
#include "corral/sdk/connect.hpp"
#include "errors.hpp"
#include "settings.hpp"

namespace corral::e2b {
namespace {

namespace http = sdk::http;
namespace connect = sdk::connect;

// envd pings a stream this often when asked (the header E2B's SDKs send); a stream silent
// for three pings is stalled.
constexpr const char* kKeepaliveSeconds = "50";
constexpr long kIdleSeconds = 150;

std::string process_json(const ProcessRequest& p) {
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
  // Unset means "stdin open": a command reading stdin would then wait forever.
  w.Key("stdin");
  w.Bool(false);
  w.EndObject();
  return {buffer.GetString(), buffer.GetSize()};
}

int signal_number(std::string_view name) {
  static const std::map<std::string_view, int> known = {
      {"hangup", 1},  {"interrupt", 2}, {"quit", 3},       {"aborted", 6},
      {"killed", 9},  {"segmentation fault", 11}, {"broken pipe", 13}, {"terminated", 15}};
  auto it = known.find(name);
  return it == known.end() ? 0 : it->second;
}

// What one Start stream told us.
struct StreamState {
  bool ended = false;  // an `end` event arrived
  int exit_code = 0;
  std::uint32_t pid = 0;
  std::optional<connect::StreamError> error;  // from the end-of-stream envelope
  std::string decoded;                        // reused buffer for output chunks
};

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
    throw Error(ErrorCode::unavailable, "envd sent a process event that is not valid JSON");
  auto event = doc.IsObject() ? doc.FindMember("event") : doc.MemberEnd();
  if (event == doc.MemberEnd() || !event->value.IsObject()) return;
  const json::Value& e = event->value;
  if (auto it = e.FindMember("data"); it != e.MemberEnd() && it->value.IsObject()) {
    for (auto& m : it->value.GetObject()) {
      if (!m.value.IsString()) continue;
      base64_decode(std::string_view(m.value.GetString(), m.value.GetStringLength()), st.decoded);
      std::string_view name(m.name.GetString(), m.name.GetStringLength());
      if (name == "stderr") {
        if (hooks.on_stderr) hooks.on_stderr(st.decoded);
      } else if (hooks.on_stdout) {  // stdout, or pty output
        hooks.on_stdout(st.decoded);
      }
    }
  } else if (auto it = e.FindMember("start"); it != e.MemberEnd() && it->value.IsObject()) {
    st.pid = static_cast<std::uint32_t>(json::get_int(it->value, "pid"));
  } else if (auto it = e.FindMember("end"); it != e.MemberEnd() && it->value.IsObject()) {
    st.ended = true;
    st.exit_code = exit_code_of(it->value);
  }
  // keepalive: nothing to do; its arrival already reset the idle clock.
}

}  // namespace

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
  h.emplace_back("Authorization", "Basic " + base64_encode(target_.user + ":"));
  return h;
}

Error Envd::failure(const http::Response& response, const std::string& what) const {
  // E2B's edge answers 502 for a sandbox that is not running any more.
  if (response.status == 502) return sandbox_gone(target_.sandbox_id);
  if (response.status == 401 || response.status == 403)
    return http::status_error(response, what,
                              "the sandbox refused the access token or the user '" + target_.user +
                                  "'; check --e2b-user (CORRAL_E2B_USER)");
  return api_error(response, what);
}

int Envd::run(const ProcessRequest& process, const ProcessHooks& hooks, const std::string& step) {
  const std::string what = "E2B sandbox " + target_.sandbox_id + ": " + step;
  http::Request r;
  r.method = "POST";
  r.url = target_.base_url + "/process.Process/Start";
  r.headers = headers();
  r.headers.emplace_back("Content-Type", connect::kStreamContentType);
  r.headers.emplace_back(connect::kProtocolVersionHeader, "1");
  r.headers.emplace_back("Keepalive-Ping-Interval", kKeepaliveSeconds);
  r.body = connect::envelope(process_json(process));
  r.timeout_seconds = 0;  // a command may run for hours; the idle guard catches stalls
  r.idle_timeout_seconds = kIdleSeconds;
  r.cancelled = hooks.stop;
  r.what = what;

  StreamState st;
  connect::Decoder decoder;
  r.on_body = [&](std::string_view chunk) {
    decoder.feed(chunk, [&](connect::Message& m) { handle_event(m, st, hooks); });
  };
  http::Response response;
  try {
    response = client_.send(r);
  } catch (const Error&) {
    // Cancelled, stalled or cut: never leave the command running in the sandbox.
    if (st.pid != 0 && !st.ended) kill(st.pid);
    throw;
  }
  if (!response.ok()) throw failure(response, what);
  if (st.ended) return st.exit_code;
  if (st.error)
    throw Error(connect::code_for(st.error->code),
                what + ": envd reported " + st.error->code + ": " + st.error->message,
                "check the command, the workdir (--e2b-workdir) and the user (--e2b-user)");
  throw Error(ErrorCode::unavailable, what + ": the process stream ended before the command finished (no end event)",
              "the sandbox may have stopped or passed its lifetime; check `corral status --id LEASE` and rerun");
}

void Envd::upload(const std::string& local_path, const std::string& remote_path,
                  const std::function<bool()>& cancelled) {
  const std::string what = "E2B upload to sandbox " + target_.sandbox_id;
  http::Request r;
  r.method = "POST";
  r.url = target_.base_url + "/files?path=" + http::url_encode(remote_path) +
          "&username=" + http::url_encode(target_.user);
  r.headers = headers();
  r.file = http::FilePart{"file", local_path, remote_path.substr(remote_path.rfind('/') + 1),
                          "application/octet-stream"};
  r.timeout_seconds = 0;  // size-dependent; the idle guard catches stalls
  r.idle_timeout_seconds = 60;
  r.cancelled = cancelled;
  r.what = what;
  http::Response response = client_.send(r);
  if (!response.ok()) throw failure(response, what);
}

bool Envd::kill(std::uint32_t pid) {
  http::Request r;
  r.method = "POST";
  r.url = target_.base_url + "/process.Process/SendSignal";
  r.headers = headers();
  r.headers.emplace_back("Content-Type", "application/json");
  r.headers.emplace_back(connect::kProtocolVersionHeader, "1");
  r.body = "{\"process\":{\"pid\":" + std::to_string(pid) + "},\"signal\":\"SIGNAL_SIGKILL\"}";
  r.timeout_seconds = 10;
  r.what = "E2B stop process " + std::to_string(pid);
  try {
    return client_.send(r).ok();
  } catch (const Error&) {
    return false;
  }
}

}  // namespace corral::e2b
