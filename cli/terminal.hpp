// The terminal side of core's Ui: command output passed through byte for byte,
// corral's own messages on stderr, the run's phases as a live line when stderr is a
// terminal (or as JSON lines, --progress json), and the Ctrl-C flag that stops a run cleanly.
//
// Threads: every method may be called from any thread (a plugin's output threads, the
// shards of a fan-out); one mutex orders what reaches stderr, and a ticker thread redraws
// the live line while a phase is in flight.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/ui.hpp"
#include "corral/errors.hpp"
#include "progress_board.hpp"

namespace corral::cli {

class TerminalUi : public corral::Ui {
 public:
  explicit TerminalUi(bool verbose);
  // Erases the live line (never leaving half a line) and stops its ticker.
  ~TerminalUi() override;
  TerminalUi(const TerminalUi&) = delete;
  TerminalUi& operator=(const TerminalUi&) = delete;

  void out(std::string_view data) override;
  void err(std::string_view data) override;
  void info(const std::string& message) override;
  void warn(const std::string& message) override;
  void progress(const std::string& message) override;
  void phase(const PhaseEvent& event) override;
  bool cancelled() override;
  int stop_requests() override;
  int stop_signal() override;
  // Reads this process's stdin, for a command that reads it.
  long read_input(char* buffer, std::size_t capacity, int timeout_ms) override;
  bool input_waiting() override;
  // The size of the terminal on stdin.
  bool window_size(std::uint16_t& rows, std::uint16_t& cols) override;
  // Makes the terminal on stdin raw while a command's terminal runs (every key, Ctrl-C
  // included, goes to the command), and puts it back after; no live line meanwhile.
  void command_terminal(bool on) override;
  // Where the phases become spans while an operation is traced; null = none. Set before
  // the operation starts, cleared after it ends.
  PhaseTracer* tracer() override { return tracer_; }
  void set_tracer(PhaseTracer* tracer) { tracer_ = tracer; }
  // Prints "corral: error: ..." and the hint.
  void error(const Error& e);
  void error(const std::string& message, const std::string& hint = {});
  // Prints a plain line to stderr ("corral: ...").
  void note(const std::string& message) override;
  // --progress: how phases are shown from now on.
  void set_progress_mode(ProgressMode mode);

 private:
  using Clock = std::chrono::steady_clock;
  // The rest are called with mutex_ held.
  // Writes a line of corral's own to stderr, the live line erased first and drawn again after.
  void message(const std::string& text);
  void clear_progress();
  // Draws the live line if it is shown at all and `force` or its last draw is 100 ms old.
  void draw(bool force);
  bool live() const;
  // Writes `line` (a JSON object and its newline) unless the command's stderr is mid-line,
  // where it waits for that line's end (flush_json) so the two never interleave.
  void write_json(std::string line);
  void flush_json();
  void start_ticker();
  void tick();

  bool verbose_;
  bool tty_;
  bool color_;
  bool progress_shown_ = false;
  bool stdout_closed_ = false;
  bool stderr_broken_ = false;  // a write to stderr failed: no more progress there
  bool terminal_raw_ = false;   // a command's terminal has the user's (command_terminal)
  // read_input's own non-blocking descriptor of stdin (-1: stdin itself); unset until asked.
  // Only the one thread that reads input touches these.
  std::optional<int> input_fd_;
  bool input_is_socket_ = false;
  ProgressMode mode_ = ProgressMode::automatic;
  PhaseTracer* tracer_ = nullptr;

  std::mutex mutex_;
  PhaseBoard board_;
  Clock::time_point last_draw_{};
  bool err_midline_ = false;  // the command's stderr so far ends without a newline
  std::vector<std::string> pending_json_;
  struct JsonPace {
    Clock::time_point at{};   // the last byte count written
    std::uint64_t tenth = 0;  // the tenth of the total it reached
  };
  std::map<std::pair<std::string, int>, JsonPace> json_pace_;  // per phase and shard
  std::thread ticker_;
  std::condition_variable wake_;
  bool stopping_ = false;
};

// Installs handlers for SIGINT, SIGTERM and SIGHUP that ask the run to stop (a third
// signal exits at once) and ignores SIGPIPE so a closed stdout is an error, not death.
void install_signal_handlers();
// True once a stop signal arrived.
bool stop_requested();

}  // namespace corral::cli
