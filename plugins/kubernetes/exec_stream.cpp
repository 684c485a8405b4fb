#include "exec_stream.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "corral/sdk/printable.hpp"
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
  // The Status's fields; one of the wrong type is the server's fault, not the user's.
  std::string status, reason, message;
  std::optional<std::string> exit_cause;  // the message of its ExitCode cause
  try {
    if (!doc.IsObject()) throw Error(ErrorCode::invalid_argument, "it is not a JSON object");
    status = json::get_string(doc, "status");
    reason = json::get_string(doc, "reason");
    message = json::get_string(doc, "message");
    const json::Value* details = json::find(doc, "details");
    const json::Value* causes = details ? json::find(*details, "causes") : nullptr;
    if (causes && !causes->IsArray()) throw Error(ErrorCode::invalid_argument, "details.causes is not an array");
    if (causes)
      for (const json::Value& c : causes->GetArray())
        if (json::get_string(c, "reason") == "ExitCode") {
          exit_cause = json::get_string(c, "message");
          break;
        }
  } catch (const Error& e) {
    throw sdk::http::unexpected_answer(what, "the exec status is not a metav1.Status: " + std::string(e.what()));
  }
  if (status == "Success") return 0;
  if (reason == "NonZeroExitCode") {
    // The kubelet writes the code as the ExitCode cause's message, in decimal digits.
    if (!exit_cause)
      throw sdk::http::unexpected_answer(what, "the exec status says NonZeroExitCode but has no ExitCode cause");
    const std::string& text = *exit_cause;
    const bool digits = !text.empty() && text.size() <= 3 && text.find_first_not_of("0123456789") == std::string::npos;
    const int code = digits ? std::stoi(text) : 0;
    if (code < 1 || code > 255)
      throw sdk::http::unexpected_answer(what, "the exec status says NonZeroExitCode with the exit code '" +
                                                   sdk::printable(text) + "', which is none from 1 to 255");
    return code;
  }
  std::string why = sdk::printable(message);
  if (why.empty())
    why = "the API server gave no message (status '" + sdk::printable(status) + "', reason '" +
          sdk::printable(reason) + "')";
  throw Error(ErrorCode::unavailable, what + ": the command could not run: " + why,
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
