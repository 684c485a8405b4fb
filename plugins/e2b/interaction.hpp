// What the user gives a running command besides its start, through envd's process API:
// the input piped into corral (exec-stdin: SendInput, then CloseStdin at its end), the
// signals corral is asked to pass on (exec-signals) and, on a terminal of its own
// (exec-tty), its size as the user's changes (Update).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string_view>

#include "corral/sdk.hpp"
#include "corral/sdk/http.hpp"
#include "corral/sdk/input_pump.hpp"
#include "envd.hpp"

namespace corral::e2b {

// Threads: made, ticked and destroyed on the exec call's thread; its input pump runs on a
// thread of its own with a client of its own (the call's client is busy with the stream).
class Interaction {
 public:
  // For `command` run through `envd` (whose target it reaches through clients of its own)
  // in exec call `host`. `closes_stdin`: whether that envd has CloseStdin (envd_closes_stdin);
  // without it the command gets an empty stdin, and input that arrives fails the run.
  Interaction(const Envd& envd, const Command& command, const sdk::Host& host, bool closes_stdin);
  // Stops passing input on (a call in flight is given up) and waits for the pump.
  ~Interaction();
  Interaction(const Interaction&) = delete;
  Interaction& operator=(const Interaction&) = delete;

  // What the command's Start asks of its stdin and terminal.
  bool open_stdin() const { return command_.forward_stdin && !command_.tty && closes_stdin_; }
  std::optional<TerminalSize> terminal() const { return terminal_; }

  // Envd::run's WhileRunning, with the command's pid: the first time, starts passing the
  // input on; every time, passes on the signal the user asked for and the terminal's new
  // size. The signal goes to the command's process group by /bin/kill: envd's SendSignal
  // has neither SIGINT nor SIGHUP, reaches only the process, and after SIGTERM envd stops
  // passing its output on, which would lose what a trap prints.
  void tick(std::uint32_t pid);

  // After the command ended: when it was passed a signal, what it left running in its
  // process group (a background job, which ignores SIGINT) is killed, as the user's stop
  // asked and as a Ctrl-C before signals were passed on did.
  void ended();

  // Why the input could not all reach the command (envd unreachable, an answer not of its
  // process API); the command then has to stop, as its input would otherwise end short
  // or never. A command that ended or closed its stdin is no failure: it took no more.
  std::optional<Error> failure() const;
  // Whether there is such a failure; cheap enough to poll with the stream. Any thread.
  bool input_failed() const { return input_failed_; }

 private:
  // The pump's sink: `data` to the command, in calls of at most Envd::kMaxInputBytes;
  // false once the command takes no more.
  bool pass_on(std::uint32_t pid, std::string_view data);
  // The end of the input: the command's stdin is closed (a terminal has no end: nothing).
  void end_input(std::uint32_t pid);
  // Remembers the first failure to pass the input on, unless the command already ended.
  void failed(const Error& e);
  // The envd the call's own thread reaches while the stream runs (signals, resizes).
  Envd& control();

  const Envd& envd_;
  const Command& command_;
  const sdk::Host& host_;
  bool closes_stdin_;
  std::optional<TerminalSize> terminal_;
  std::uint32_t pid_ = 0;  // the command's, once known
  bool pumping_ = false;
  bool signalled_ = false;
  std::optional<sdk::http::Client> control_client_;
  std::optional<Envd> control_;
  std::optional<sdk::http::Client> input_client_;  // the pump thread's
  std::optional<Envd> input_;
  std::atomic<bool> finished_{false};  // the command ended: calls in flight give up
  std::atomic<bool> input_failed_{false};
  mutable std::mutex failure_mutex_;
  std::optional<Error> failure_;
  std::optional<sdk::InputPump> pump_;  // last: stopped first
};

}  // namespace corral::e2b
