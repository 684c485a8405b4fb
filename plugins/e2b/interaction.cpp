#include "interaction.hpp"

#include <csignal>

namespace corral::e2b {

namespace {

std::string signal_name(int sig) {
  return sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : sig == SIGINT ? "SIGINT" : "signal " + std::to_string(sig);
}

}  // namespace

Interaction::Interaction(const Envd& envd, const Command& command, const sdk::Host& host, bool closes_stdin)
    : envd_(envd), command_(command), host_(host), closes_stdin_(closes_stdin) {
  if (command.tty) {
    TerminalSize size;
    (void)host.window_size(size.rows, size.cols);  // the first ask answers, when the size is known
    terminal_ = size;
  }
}

Interaction::~Interaction() {
  finished_ = true;
  pump_.reset();
}

Envd& Interaction::control() {
  if (!control_) {
    control_client_.emplace();
    control_.emplace(envd_.through(*control_client_));
  }
  return *control_;
}

void Interaction::tick(std::uint32_t pid) {
  pid_ = pid;
  if (command_.forward_stdin && !pumping_) {
    pumping_ = true;
    input_client_.emplace();
    input_.emplace(envd_.through(*input_client_));
    pump_.emplace(
        host_,
        [this, pid](std::string_view data, const std::atomic<bool>&) { return pass_on(pid, data); },
        [this, pid] { end_input(pid); });
  }
  const int sig = host_.take_signal();
  signalled_ = signalled_ || sig > 0;
  if (sig > 0 && !control().signal_group(pid, sig))
    host_.warn("could not pass " + signal_name(sig) + " on to the command in E2B sandbox " + envd_.sandbox_id() +
               "; it is killed if it has not ended when --stop-timeout has passed");
  if (terminal_) {
    TerminalSize size;
    if (host_.window_size(size.rows, size.cols) && size.rows > 0 && size.cols > 0)
      (void)control().resize(pid, size);  // best effort: the next change tries again
  }
}

void Interaction::ended() {
  // The command itself has ended: only its group is left to reach, never its pid.
  if (signalled_ && pid_ != 0) (void)control().signal_group(pid_, SIGKILL, /*fall_back=*/false);
}

bool Interaction::pass_on(std::uint32_t pid, std::string_view data) {
  const auto stop = [this] { return finished_.load(); };
  try {
    if (!terminal_ && !closes_stdin_)
      throw Error(ErrorCode::unsupported,
                  "envd in E2B sandbox " + envd_.sandbox_id() +
                      " is older than 0.5.2 and cannot end a command's input (CloseStdin)",
                  "run it with --no-stdin, or in a sandbox of a template built with a current E2B CLI");
    while (!data.empty()) {
      const std::string_view part = data.substr(0, Envd::kMaxInputBytes);
      if (input_->send_input(pid, part, terminal_.has_value(), stop) == InputOutcome::refused) return false;
      data.remove_prefix(part.size());
    }
    return true;
  } catch (const Error& e) {
    failed(e);
    return false;
  }
}

void Interaction::end_input(std::uint32_t pid) {
  // A terminal's input has no end: the user's keys go on until the command ends. An envd
  // without CloseStdin started the command with an empty stdin: nothing to close.
  if (terminal_ || !closes_stdin_) return;
  try {
    (void)input_->close_stdin(pid, [this] { return finished_.load(); });
  } catch (const Error& e) {
    failed(e);
  }
}

void Interaction::failed(const Error& e) {
  if (finished_) return;  // the command ended: a call given up is no failure
  std::lock_guard lock(failure_mutex_);
  if (failure_) return;
  failure_ = Error(e.code(), "the input piped into corral could not all reach the command: " + std::string(e.what()),
                   e.hint());
  input_failed_ = true;
}

std::optional<Error> Interaction::failure() const {
  std::lock_guard lock(failure_mutex_);
  return failure_;
}

}  // namespace corral::e2b
