#include "exec_stream.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "corral/json.hpp"
#include "corral/sdk/http.hpp"
#include "spec.hpp"

namespace corral::kubernetes {
namespace {

constexpr char kStdin = 0, kStdout = 1, kStderr = 2, kStatus = 3;
constexpr char kCloseSignal = static_cast<char>(255);
constexpr std::size_t kStdinChunk = 32 * 1024;

// Reads a local file as channel-0 messages, then (v5) the close of stdin.
class StdinSource {
 public:
  StdinSource(const std::string& path, const std::string& what) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw Error(ErrorCode::internal, what + ": cannot read " + path);
  }
  ~StdinSource() {
    if (fd_ >= 0) ::close(fd_);
  }
  StdinSource(const StdinSource&) = delete;
  StdinSource& operator=(const StdinSource&) = delete;

  // The next message: a chunk of the file, then [255, 0] when `closes` (v5), then nothing.
  std::optional<std::string> next(bool closes) {
    if (done_) return std::nullopt;
    std::string message(1 + kStdinChunk, kStdin);
    ssize_t n;
    do n = ::read(fd_, message.data() + 1, kStdinChunk);
    while (n < 0 && errno == EINTR);
    if (n > 0) {
      message.resize(1 + static_cast<std::size_t>(n));
      return message;
    }
    done_ = true;
    if (!closes) return std::nullopt;
    return std::string{kCloseSignal, kStdin};
  }

 private:
  int fd_ = -1;
  bool done_ = false;
};

}  // namespace

int exit_code_of_status(std::string_view status_json, const std::string& what) {
  json::Document doc;
  try {
    doc = json::parse(status_json, "exec status");
  } catch (const Error&) {
    throw sdk::http::unexpected_answer(what, "the exec status is not JSON");
  }
  if (json::get_string(doc, "status") == "Success") return 0;
  if (json::get_string(doc, "reason") == "NonZeroExitCode")
    if (const json::Value* details = json::find(doc, "details"))
      if (const json::Value* causes = json::find(*details, "causes"); causes && causes->IsArray())
        for (const json::Value& c : causes->GetArray())
          if (json::get_string(c, "reason") == "ExitCode") {
            try {
              return std::stoi(json::get_string(c, "message"));
            } catch (const std::exception&) {
              break;
            }
          }
  throw Error(ErrorCode::unavailable, what + ": the command could not run: " + json::get_string(doc, "message"),
              "the image needs /bin/sh; check " + identity().settings.either("image"));
}

ExecEnd exec_in_pod(Api& api, const std::string& ns, const std::string& pod, const std::string& container,
                    const std::vector<std::string>& argv, const sdk::remote::CommandHooks& hooks,
                    const std::string& stdin_path, const std::string& what) {
  std::string path = "/api/v1/namespaces/" + ns + "/pods/" + pod +
                     "/exec?container=" + sdk::http::url_encode(container) + "&stdout=true&stderr=true";
  if (!stdin_path.empty()) path += "&stdin=true";
  for (const std::string& arg : argv) path += "&command=" + sdk::http::url_encode(arg);
  sdk::websocket::Request request = api.websocket(path, what, hooks.stop);
  request.subprotocols = {"v5.channel.k8s.io", "v4.channel.k8s.io"};
  request.whole_messages = true;
  ExecEnd end;
  request.on_open = [&end](const std::string& protocol) { end.protocol = protocol; };
  std::optional<StdinSource> input;
  if (!stdin_path.empty()) {
    input.emplace(stdin_path, what);
    request.next_message = [&] { return input->next(end.protocol == "v5.channel.k8s.io"); };
  }
  sdk::websocket::follow(request, [&](std::string_view message, bool) {
    if (message.empty()) return;
    const std::string_view data = message.substr(1);
    switch (message.front()) {
      case kStdout:
        if (!data.empty()) hooks.on_stdout(data);
        break;
      case kStderr:
        if (!data.empty()) hooks.on_stderr(data);
        break;
      case kStatus:
        end.exit_code = exit_code_of_status(data, what);
        break;
      default:
        break;  // stdin echoes and resize channels carry nothing for us
    }
  });
  return end;
}

}  // namespace corral::kubernetes
