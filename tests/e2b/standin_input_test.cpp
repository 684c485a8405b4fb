// The stand-in envd's process input, spoken to on the wire as process.proto and the
// Connect protocol define it (JSON codec): SendInput's base64 bytes reach the process's
// stdin or its terminal, CloseStdin ends a stdin, Update resizes a terminal, and each
// refusal is the Connect error envd answers.
#include <doctest/doctest.h>
#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "cli.hpp"
#include "corral/json.hpp"
#include "corral/sdk/base64.hpp"
#include "server.hpp"

using namespace corral;
using namespace corral::test;

namespace {

// The bytes of base64 `text`.
std::string unbase64(const std::string& text) {
  std::string out;
  corral::sdk::base64_decode_lenient(text, out, "test");
  return out;
}

// A client of the stand-in's envd for one sandbox, routed by headers as E2B_SANDBOX_URL is.
class EnvdClient {
 public:
  EnvdClient(e2b::standin::StandIn& server, std::string sandbox_id)
      : url_(server.sandbox_url()), id_(std::move(sandbox_id)) {}

  httplib::Headers headers() const { return {{"E2b-Sandbox-Id", id_}, {"E2b-Sandbox-Port", "49983"}}; }

  // A unary call: its status and body.
  std::pair<int, std::string> call(const std::string& method, const std::string& body) const {
    httplib::Client c(url_);
    auto r = c.Post(("/process.Process/" + method).c_str(), headers(), body, "application/json");
    REQUIRE(r);
    return {r->status, r->body};
  }

  // The Connect error code of a unary call's answer ("" for success).
  std::string error_code(const std::string& method, const std::string& body, int expected_status) const {
    auto [status, text] = call(method, body);
    CHECK(status == expected_status);
    if (status == 200) {
      CHECK(text == "{}");
      return "";
    }
    return json::get_string(json::parse(text, "error"), "code");
  }

  const std::string& url() const { return url_; }

 private:
  std::string url_;
  std::string id_;
};

// One Start call streaming on a thread of its own: the events it sent so far.
class StartStream {
 public:
  StartStream(const EnvdClient& envd, const std::string& start_request) {
    const std::uint32_t n = static_cast<std::uint32_t>(start_request.size());
    std::string body{0, static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8),
                     static_cast<char>(n)};
    body += start_request;
    thread_ = std::thread([this, body, url = envd.url(), headers = envd.headers()] {
      httplib::Client c(url);
      httplib::Request req;
      req.method = "POST";
      req.path = "/process.Process/Start";
      req.headers = headers;
      req.body = body;
      req.set_header("Content-Type", "application/connect+json");
      req.content_receiver = [this](const char* data, size_t len, uint64_t, uint64_t) {
        std::lock_guard lock(mutex_);
        buffer_.append(data, len);
        while (buffer_.size() >= 5) {
          const size_t size = (static_cast<unsigned char>(buffer_[1]) << 24) |
                              (static_cast<unsigned char>(buffer_[2]) << 16) |
                              (static_cast<unsigned char>(buffer_[3]) << 8) | static_cast<unsigned char>(buffer_[4]);
          if (buffer_.size() < 5 + size) break;
          if (buffer_[0] == 0) events_.push_back(buffer_.substr(5, size));
          buffer_.erase(0, 5 + size);
        }
        changed_.notify_all();
        return true;
      };
      (void)c.send(req);
      std::lock_guard lock(mutex_);
      done_ = true;
      changed_.notify_all();
    });
  }
  // A test that failed midway must not wait on a process still reading: it is killed.
  ~StartStream() {
    {
      std::lock_guard lock(mutex_);
      if (!done_ && pid_ > 0) ::kill(static_cast<pid_t>(pid_), SIGKILL);
    }
    thread_.join();
  }

  // Waits (bounded) for an event holding `text`; the event, or "" when none came.
  std::string wait_for(const std::string& text) {
    std::unique_lock lock(mutex_);
    std::string found;
    changed_.wait_for(lock, std::chrono::seconds(15), [&] {
      for (const auto& e : events_)
        if (e.find(text) != std::string::npos) return found = e, true;
      return done_;
    });
    return found;
  }
  // Everything the terminal wrote so far (its `pty` data events, decoded).
  std::string decoded_pty() {
    std::lock_guard lock(mutex_);
    std::string out;
    for (const auto& e : events_) {
      const auto doc = json::parse(e, "event");
      const json::Value* data = json::find(doc["event"], "data");
      if (const json::Value* pty = data ? json::find(*data, "pty") : nullptr; pty && pty->IsString())
        out += unbase64(pty->GetString());
    }
    return out;
  }
  // The pid of the start event.
  std::uint32_t pid() {
    const std::string start = wait_for("\"start\"");
    REQUIRE(!start.empty());
    const auto pid = static_cast<std::uint32_t>(json::parse(start, "start")["event"]["start"]["pid"].GetUint());
    std::lock_guard lock(mutex_);
    return pid_ = pid;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::string buffer_;
  std::vector<std::string> events_;
  bool done_ = false;
  std::uint32_t pid_ = 0;
  std::thread thread_;
};

std::string selector(std::uint32_t pid) { return "{\"pid\":" + std::to_string(pid) + "}"; }

}  // namespace

TEST_CASE("stand-in envd: SendInput reaches the process's stdin and CloseStdin ends it, on the wire") {
  e2b::standin::StandIn server;
  const std::string id = server.with([](auto& st) { return st.add_sandbox("base", false, 600).id; });
  EnvdClient envd(server, id);

  StartStream cat(envd, R"({"process":{"cmd":"cat"},"tag":"reader","stdin":true})");
  const std::uint32_t pid = cat.pid();
  // Bytes are base64 (proto3 JSON); the process is picked by pid or by tag.
  CHECK(envd.error_code("SendInput", "{\"process\":" + selector(pid) + ",\"input\":{\"stdin\":\"aGVsbG8K\"}}", 200)
            .empty());
  CHECK(!cat.wait_for("\"stdout\":\"aGVsbG8K\"").empty());
  CHECK(envd.error_code("SendInput", R"({"process":{"tag":"reader"},"input":{"stdin":"AAH/"}})", 200).empty());
  CHECK(!cat.wait_for("\"stdout\":\"AAH/\"").empty());
  // The wrong kind of input, a selector of both kinds, input of both kinds: refused.
  CHECK(envd.error_code("SendInput", "{\"process\":" + selector(pid) + ",\"input\":{\"pty\":\"AA==\"}}", 400) ==
        "failed_precondition");
  CHECK(envd.error_code("SendInput", "{\"process\":{\"pid\":" + std::to_string(pid) +
                                         ",\"tag\":\"reader\"},\"input\":{\"stdin\":\"AA==\"}}",
                        400) == "invalid_argument");
  CHECK(envd.error_code("SendInput",
                        "{\"process\":" + selector(pid) + ",\"input\":{\"stdin\":\"AA==\",\"pty\":\"AA==\"}}",
                        400) == "invalid_argument");
  // CloseStdin: cat reads the end of its input and exits 0 (no exitCode: proto3 omits it).
  CHECK(envd.error_code("CloseStdin", "{\"process\":" + selector(pid) + "}", 200).empty());
  const std::string end = cat.wait_for("\"end\"");
  REQUIRE(!end.empty());
  CHECK(end.find("exitCode") == std::string::npos);
  CHECK(end.find("\"exited\":true") != std::string::npos);
  // Gone: not_found, by pid and by tag.
  CHECK(envd.error_code("SendInput", "{\"process\":" + selector(pid) + ",\"input\":{\"stdin\":\"AA==\"}}", 404) ==
        "not_found");
  CHECK(envd.error_code("CloseStdin", R"({"process":{"tag":"reader"}})", 404) == "not_found");
}

TEST_CASE("stand-in envd: input to a process whose stdin is not open, or was closed, is failed_precondition") {
  e2b::standin::StandIn server;
  const std::string id = server.with([](auto& st) { return st.add_sandbox("base", false, 600).id; });
  EnvdClient envd(server, id);
  const std::string input = R"(,"input":{"stdin":"AA=="}})";

  StartStream without(envd, R"({"process":{"cmd":"sleep","args":["2"]},"stdin":false})");
  const std::uint32_t quiet = without.pid();
  CHECK(envd.error_code("SendInput", "{\"process\":" + selector(quiet) + input, 400) == "failed_precondition");

  // The process closed its stdin itself: the write fails as envd's does (EPIPE).
  StartStream closing(envd, R"({"process":{"cmd":"sh","args":["-c","exec 0<&-; echo closed; sleep 2"]},"stdin":true})");
  const std::uint32_t pid = closing.pid();
  REQUIRE(!closing.wait_for("\"stdout\"").empty());
  CHECK(envd.error_code("SendInput", "{\"process\":" + selector(pid) + input, 400) == "failed_precondition");
  // Closing what is closed is no error, as in envd.
  CHECK(envd.error_code("CloseStdin", "{\"process\":" + selector(pid) + "}", 200).empty());
  CHECK(envd.error_code("CloseStdin", "{\"process\":" + selector(pid) + "}", 200).empty());
  CHECK(!without.wait_for("\"end\"").empty());
  CHECK(!closing.wait_for("\"end\"").empty());
}

TEST_CASE("stand-in envd: a PTY process gets its keys as pty input, its size by Update, and no CloseStdin") {
  e2b::standin::StandIn server;
  const std::string id = server.with([](auto& st) { return st.add_sandbox("base", false, 600).id; });
  EnvdClient envd(server, id);
  // (The size changes once the line is read: a trapped signal would cut the read short.)
  StartStream shell(envd, R"({"process":{"cmd":"sh","args":["-c",)"
                          R"("stty size; echo ready; read line; echo got-$line; trap 'stty size' WINCH; )"
                          R"(echo waiting; sleep 1"]},"pty":{"size":{"cols":91,"rows":17}},"stdin":false})");
  const std::uint32_t pid = shell.pid();
  REQUIRE(!shell.wait_for("\"pty\"").empty());  // a terminal's output is DataEvent.pty
  // "17 91\r\nready\r\n" as the terminal writes it, in one event or several: wait for the last.
  auto output = [&] { return shell.decoded_pty(); };
  CHECK(eventually([&] { return output().find("ready") != std::string::npos; }));
  CHECK(output().find("17 91") != std::string::npos);
  // Keys are pty input ("hi" and Enter); stdin input and CloseStdin are refused for a terminal.
  CHECK(envd.error_code("SendInput", "{\"process\":" + selector(pid) + ",\"input\":{\"stdin\":\"AA==\"}}", 400) ==
        "failed_precondition");
  CHECK(envd.error_code("CloseStdin", "{\"process\":" + selector(pid) + "}", 400) == "failed_precondition");
  CHECK(envd.error_code("SendInput", "{\"process\":" + selector(pid) + ",\"input\":{\"pty\":\"aGkN\"}}", 200).empty());
  CHECK(eventually([&] { return output().find("got-hi") != std::string::npos; }));
  CHECK(eventually([&] { return output().find("waiting") != std::string::npos; }));
  CHECK(envd.error_code("Update", "{\"process\":" + selector(pid) + ",\"pty\":{\"size\":{\"cols\":120,\"rows\":40}}}",
                        200)
            .empty());
  CHECK(eventually([&] { return output().find("40 120") != std::string::npos; }));
  CHECK(!shell.wait_for("\"end\"").empty());
  // A process on pipes has no terminal to resize.
  StartStream plain(envd, R"({"process":{"cmd":"sleep","args":["1"]},"stdin":false})");
  CHECK(envd.error_code("Update", "{\"process\":" + selector(plain.pid()) + ",\"pty\":{\"size\":{\"cols\":1,\"rows\":1}}}",
                        500) == "internal");
}
