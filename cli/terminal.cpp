#include "terminal.hpp"

#include <poll.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <exception>

#include "base/printable.hpp"
#include "corral/os/fd_write.hpp"

namespace corral::cli {
namespace {

std::atomic<int> g_signals{0};
std::atomic<int> g_first_signal{0};  // the signal of the first ask, passed on to the command
// The user's terminal settings while a command's terminal has it raw (`run -t`): put back
// by the signal handler too, should corral give up at the third signal.
termios g_saved_terminal{};
std::atomic<bool> g_terminal_raw{false};

// Puts the user's terminal back as it was before `run -t` made it raw (async-signal-safe).
void restore_terminal() {
  if (g_terminal_raw.exchange(false)) ::tcsetattr(0, TCSADRAIN, &g_saved_terminal);
}
// The live line is on the screen: the stop message erases it instead of starting a new line.
std::atomic<bool> g_line_shown{false};

constexpr std::chrono::milliseconds kRedraw{100};  // at most 10 redraws a second
constexpr char kErase[] = "\r\033[K";

void on_stop_signal(int sig) {
  int expected = 0;
  g_first_signal.compare_exchange_strong(expected, sig);
  int n = ++g_signals;
  const bool erase = g_line_shown.exchange(false);
  if (erase) (void)!::write(2, kErase, sizeof kErase - 1);
  if (n == 1) {
    const char msg[] = "\ncorral: stopping the command and cleaning up (Ctrl-C twice more to abandon cleanup)\n";
    (void)!::write(2, msg + erase, sizeof msg - 1 - erase);
  } else if (n >= 3) {
    restore_terminal();
    const char msg[] = "\ncorral: abandoned cleanup; `corral list` shows what may be left\n";
    (void)!::write(2, msg + erase, sizeof msg - 1 - erase);
    ::_exit(130);
  }
}

// Columns of the terminal on stderr, asked at every draw so a resize (SIGWINCH) takes
// effect at the next one; COLUMNS when the terminal does not say; 0 when neither does.
std::size_t terminal_width() {
  winsize size{};
  if (::ioctl(2, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  const char* columns = std::getenv("COLUMNS");
  if (!columns) return 0;
  char* end = nullptr;
  const long n = std::strtol(columns, &end, 10);
  return end != columns && *end == '\0' && n > 0 && n < 100000 ? static_cast<std::size_t>(n) : 0;
}

}  // namespace

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  // A terminal made raw for `run -t` is put back on every way out: exit and a crash in C++.
  std::atexit(restore_terminal);
  static const std::terminate_handler previous = std::set_terminate([] {
    restore_terminal();
    if (previous) previous();
    std::abort();
  });
}

bool stop_requested() { return g_signals.load() > 0; }

TerminalUi::TerminalUi(bool verbose) : verbose_(verbose), tty_(::isatty(2) == 1) {
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  color_ = tty_ && !(no_color && *no_color) && !(term && std::string_view(term) == "dumb");
}

TerminalUi::~TerminalUi() {
  restore_terminal();  // whatever path the run took
  if (input_fd_ && *input_fd_ >= 0) ::close(*input_fd_);
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  std::lock_guard lock(mutex_);
  clear_progress();
  if (!pending_json_.empty()) {
    // The command's stderr ended mid-line: end that line rather than lose the events.
    err_midline_ = false;
    if (!stderr_broken_) os::write_all(2, "\n");
    flush_json();
  }
}

void TerminalUi::set_progress_mode(ProgressMode mode) {
  std::lock_guard lock(mutex_);
  mode_ = mode;
}

bool TerminalUi::live() const {
  return mode_ == ProgressMode::automatic && tty_ && !stderr_broken_ && !stop_requested() && !terminal_raw_;
}

void TerminalUi::clear_progress() {
  if (!progress_shown_) return;
  g_line_shown = false;
  progress_shown_ = false;
  if (!os::write_all(2, kErase)) stderr_broken_ = true;
}

void TerminalUi::draw(bool force) {
  if (!live()) return;
  const Clock::time_point now = Clock::now();
  if (!force && now - last_draw_ < kRedraw) return;
  const std::string text = board_.line(now, terminal_width());
  if (text.empty()) {
    clear_progress();
    return;
  }
  last_draw_ = now;
  const std::string line =
      std::string("\r") + (color_ ? "\033[2m" : "") + printable(text) + (color_ ? "\033[0m" : "") + "\033[K";
  if (!os::write_all(2, line)) {
    stderr_broken_ = true;
    return;
  }
  progress_shown_ = true;
  g_line_shown = true;
}

void TerminalUi::start_ticker() {
  if (ticker_.joinable() || stopping_) return;
  ticker_ = std::thread([this] { tick(); });
}

void TerminalUi::tick() {
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, kRedraw, [this] { return stopping_; })) {
    if (stop_requested()) {
      progress_shown_ = false;  // the stop message erased it
      continue;
    }
    if (!board_.idle()) draw(true);
  }
}

void TerminalUi::write_json(std::string line) {
  pending_json_.push_back(std::move(line));
  if (!err_midline_) flush_json();
}

void TerminalUi::flush_json() {
  for (const std::string& line : pending_json_)
    if (!stderr_broken_ && !os::write_all(2, line)) stderr_broken_ = true;
  pending_json_.clear();
}

void TerminalUi::phase(const PhaseEvent& event) {
  std::lock_guard lock(mutex_);
  const Clock::time_point now = Clock::now();
  if (mode_ == ProgressMode::json) {
    // Byte counts at most 10 times a second per phase, and at each tenth of the total:
    // a bounded number of lines, and the steps of a fast transfer still show.
    if (event.state == PhaseEvent::State::bytes) {
      JsonPace& pace = json_pace_[{event.phase, event.shard}];
      const std::uint64_t tenth = event.total ? event.bytes * 10 / event.total : 0;
      if (now - pace.at < kRedraw && (!event.total || tenth == pace.tenth)) return;
      pace = {now, tenth};
    }
    write_json(phase_json_line(event));
    return;
  }
  if (mode_ != ProgressMode::automatic || !tty_) return;
  board_.update(event, now);
  start_ticker();
  if (board_.idle()) clear_progress();
  else draw(false);
}

void TerminalUi::out(std::string_view data) {
  std::lock_guard lock(mutex_);
  if (data.empty()) return;
  board_.output_started();
  clear_progress();
  if (stdout_closed_) return;
  // A reader that went away (`| head`) must not stop the command: drop the rest.
  if (!os::write_all(1, data)) stdout_closed_ = true;
}

void TerminalUi::err(std::string_view data) {
  std::lock_guard lock(mutex_);
  if (data.empty()) return;
  board_.output_started();
  clear_progress();
  os::write_all(2, data);
  err_midline_ = data.back() != '\n';
  if (!err_midline_) flush_json();
}

void TerminalUi::message(const std::string& text) {
  clear_progress();
  os::write_all(2, text);  // the ticker draws the live line again below it
}

void TerminalUi::info(const std::string& message_text) {
  if (!verbose_) return;
  std::lock_guard lock(mutex_);
  message("corral: " + printable(message_text, true) + "\n");
}

void TerminalUi::warn(const std::string& message_text) {
  std::lock_guard lock(mutex_);
  message(std::string(color_ ? "\033[33mcorral: warning:\033[0m " : "corral: warning: ") +
          printable(message_text, true) + "\n");
}

void TerminalUi::progress(const std::string& message_text) {
  std::lock_guard lock(mutex_);
  if (!tty_) {
    if (verbose_ && !message_text.empty()) message("corral: " + printable(message_text) + "\n");
    return;
  }
  if (mode_ != ProgressMode::automatic) return;
  board_.set_note(printable(message_text));
  if (board_.idle()) clear_progress();
  else draw(false);
}

bool TerminalUi::cancelled() { return stop_requested(); }

int TerminalUi::stop_requests() { return g_signals.load(); }

int TerminalUi::stop_signal() { return g_first_signal.load(); }

long TerminalUi::read_input(char* buffer, std::size_t capacity, int timeout_ms) {
  // Another process may share corral's stdin and take what poll saw before it is read: a
  // pipe or terminal is read through a non-blocking descriptor of corral's own, so a read
  // never waits (a file's read does not wait anyway; a socket's is asked not to).
  if (!input_fd_) {
    struct stat st {};
    input_fd_ = -1;
    if (::fstat(0, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)))
      input_fd_ = ::open("/proc/self/fd/0", O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    input_is_socket_ = S_ISSOCK(st.st_mode);
  }
  const int fd = *input_fd_ >= 0 ? *input_fd_ : 0;
  pollfd p{fd, POLLIN, 0};
  const int ready = ::poll(&p, 1, timeout_ms);
  if (ready == 0 || (ready < 0 && errno == EINTR)) return -1;
  if (ready < 0 || (p.revents & POLLNVAL)) return 0;  // no stdin at all: nothing to read
  const ssize_t got = input_is_socket_ ? ::recv(fd, buffer, capacity, MSG_DONTWAIT) : ::read(fd, buffer, capacity);
  if (got < 0 && (errno == EINTR || errno == EAGAIN)) return -1;
  return got < 0 ? 0 : static_cast<long>(got);  // a read error ends the input as its end would
}

bool TerminalUi::window_size(std::uint16_t& rows, std::uint16_t& cols) {
  winsize size{};
  if (::ioctl(0, TIOCGWINSZ, &size) != 0 || size.ws_row == 0 || size.ws_col == 0) return false;
  rows = size.ws_row;
  cols = size.ws_col;
  return true;
}

void TerminalUi::command_terminal(bool on) {
  std::lock_guard lock(mutex_);
  if (on == terminal_raw_) return;
  if (!on) {
    restore_terminal();
    terminal_raw_ = false;
    return;
  }
  termios raw{};
  if (::tcgetattr(0, &g_saved_terminal) != 0) return;  // not a terminal after all: nothing to change
  clear_progress();
  raw = g_saved_terminal;
  ::cfmakeraw(&raw);
  g_terminal_raw = true;
  if (::tcsetattr(0, TCSADRAIN, &raw) != 0) g_terminal_raw = false;
  terminal_raw_ = g_terminal_raw.load();
}

bool TerminalUi::input_waiting() {
  struct stat st {};
  if (::fstat(0, &st) != 0) return false;
  if (S_ISREG(st.st_mode)) return st.st_size > ::lseek(0, 0, SEEK_CUR);
  // A device (/dev/null) is always "readable"; only a pipe or socket with bytes in it is waiting.
  if (!S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode)) return false;
  pollfd p{0, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

void TerminalUi::error(const Error& e) { error(e.what(), e.hint()); }

void TerminalUi::error(const std::string& message_text, const std::string& hint) {
  std::string text = std::string(color_ ? "\033[31mcorral: error:\033[0m " : "corral: error: ") +
                     printable(message_text, true) + "\n";
  if (!hint.empty()) text += "  hint: " + printable(hint, true) + "\n";
  std::lock_guard lock(mutex_);
  message(text);
}

void TerminalUi::note(const std::string& message_text) {
  std::lock_guard lock(mutex_);
  message("corral: " + printable(message_text, true) + "\n");
}

}  // namespace corral::cli
