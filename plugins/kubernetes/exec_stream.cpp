#include "exec_stream.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "corral/sdk/printable.hpp"
#include "corral/json.hpp"
#include "corral/sdk/http.hpp"
#include "corral/sdk/input_pump.hpp"
#include "spec.hpp"

namespace corral::kubernetes {
namespace {

constexpr char kStdin = 0, kStdout = 1, kStderr = 2, kStatus = 3, kResize = 4;
constexpr char kCloseSignal = static_cast<char>(255);
// The most of the command's stdin waiting to go out: a server reading slower than the
// input comes holds the reading back.
constexpr std::size_t kMaxQueued = 1 << 20;
constexpr auto kStopCheck = std::chrono::milliseconds(100);

// Reads local file `fd` as InputPump reads the user's input (a file never makes it wait).
long read_file(int fd, char* buffer, std::size_t capacity) {
  ssize_t n;
  do n = ::read(fd, buffer, capacity);
  while (n < 0 && errno == EINTR);
  return n < 0 ? 0 : static_cast<long>(n);  // a read error ends the input (tar then fails naming it)
}

// The command's stdin as channel-0 messages: what an InputPump reads (a local file, the
// user's input) queued as it comes, then (v5) the close of stdin at its end; with a
// terminal, the user's terminal size on channel 4 first and at each change. The stream's
// thread takes them (next_message) and is woken for each one that comes later.
class StdinFeed {
 public:
  StdinFeed(const ExecInput& input, const std::string& what) : input_(input) {
    if (input.file.empty()) return;
    fd_ = ::open(input.file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw Error(ErrorCode::internal, what + ": cannot read " + input.file);
  }
  ~StdinFeed() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    room_.notify_all();
    pump_.reset();  // its thread gone before what it uses
    if (fd_ >= 0) ::close(fd_);
  }
  StdinFeed(const StdinFeed&) = delete;
  StdinFeed& operator=(const StdinFeed&) = delete;

  // Starts reading once the stream is open: `closes` (v5) sends the close of stdin at the
  // input's end; `wake` has the stream take what came.
  void start(bool closes, std::function<void()> wake) {
    wake_ = std::move(wake);
    started_ = true;
    poll_window_size();  // the command's terminal takes the user's size before any key
    sdk::InputPump::Sink sink = [this](std::string_view data, const std::atomic<bool>&) {
      std::string message(1, kStdin);
      message.append(data);
      return put(std::move(message));
    };
    sdk::InputPump::EndFn on_end = [this, closes] {
      if (closes) put(std::string{kCloseSignal, kStdin});
    };
    if (input_.user) pump_.emplace(*input_.user, std::move(sink), std::move(on_end));
    else pump_.emplace([fd = fd_](char* b, std::size_t n, int) { return read_file(fd, b, n); }, std::move(sink),
                       std::move(on_end));
  }

  // With a terminal, once started: queues the user's terminal size when it changed since
  // last asked. On the stream's thread, which drains the queue: it never waits for room.
  void poll_window_size() {
    std::uint16_t rows = 0, cols = 0;
    if (!started_ || !input_.terminal || !input_.user || !input_.user->window_size(rows, cols)) return;
    if (rows == 0 || cols == 0) return;
    {
      std::lock_guard lock(mutex_);
      std::string message = resize_message(rows, cols);
      queued_ += message.size();
      queue_.push_back(std::move(message));
    }
    wake_();
  }

  // The next message waiting to be sent, if any (the stream's thread).
  std::optional<std::string> next() {
    std::lock_guard lock(mutex_);
    if (queue_.empty()) return std::nullopt;
    std::string message = std::move(queue_.front());
    queue_.pop_front();
    queued_ -= message.size();
    room_.notify_all();
    return message;
  }

 private:
  // Queues `message` once there is room and wakes the stream; false once the stream ended.
  bool put(std::string message) {
    {
      std::unique_lock lock(mutex_);
      while (!stopping_ && queued_ >= kMaxQueued) room_.wait_for(lock, kStopCheck);
      if (stopping_) return false;
      queued_ += message.size();
      queue_.push_back(std::move(message));
    }
    wake_();
    return true;
  }

  const ExecInput& input_;
  int fd_ = -1;
  std::function<void()> wake_;
  bool started_ = false;  // the stream's thread only
  std::mutex mutex_;
  std::condition_variable room_;
  std::deque<std::string> queue_;
  std::size_t queued_ = 0;
  bool stopping_ = false;
  std::optional<sdk::InputPump> pump_;  // last: stopped first
};

}  // namespace

std::string resize_message(std::uint16_t rows, std::uint16_t cols) {
  return std::string(1, kResize) + "{\"Width\":" + std::to_string(cols) + ",\"Height\":" + std::to_string(rows) + "}";
}

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
                    const ExecInput& input, const std::string& what) {
  const bool terminal = input.terminal && input.user;
  // With a terminal stderr is stdout: kubectl asks for no stderr then, and the kubelet
  // would drop it anyway.
  std::string path = "/api/v1/namespaces/" + ns + "/pods/" + pod + "/exec?container=" +
                     sdk::http::url_encode(container) + (terminal ? "&stdout=true&tty=true" : "&stdout=true&stderr=true");
  if (input.any()) path += "&stdin=true";
  for (const std::string& arg : argv) path += "&command=" + sdk::http::url_encode(arg);
  sdk::websocket::Request request = api.websocket(path, what, hooks.stop);
  request.subprotocols = {kExecV5, "v4.channel.k8s.io"};
  request.whole_messages = true;
  ExecEnd end;
  request.on_open = [&end](const std::string& protocol) { end.protocol = protocol; };
  std::optional<StdinFeed> feed;
  if (input.any()) {
    feed.emplace(input, what);
    request.next_message = [&] { return feed->next(); };
    request.on_wake = [&](std::function<void()> wake) { feed->start(end.protocol == kExecV5, std::move(wake)); };
    // The host's window size is polled as its stop is: about ten times a second.
    if (terminal)
      request.cancelled = [&feed, stop = request.cancelled] {
        feed->poll_window_size();
        return stop && stop();
      };
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
