#include "terminal.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>

#include "corral/sdk/fd_write.hpp"
#include "base/printable.hpp"

namespace corral::cli {
namespace {

std::atomic<int> g_signals{0};

void on_stop_signal(int) {
  int n = ++g_signals;
  if (n == 1) {
    const char msg[] = "\ncorral: stopping the command and cleaning up (Ctrl-C twice more to abandon cleanup)\n";
    (void)!::write(2, msg, sizeof msg - 1);
  } else if (n >= 3) {
    const char msg[] = "\ncorral: abandoned cleanup; `corral list` shows what may be left\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(130);
  }
}

}  // namespace

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}

bool stop_requested() { return g_signals.load() > 0; }


TerminalUi::TerminalUi(bool verbose) : verbose_(verbose), tty_(::isatty(2) == 1) {
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  color_ = tty_ && !(no_color && *no_color) && !(term && std::string_view(term) == "dumb");
}

void TerminalUi::clear_progress() {
  if (!progress_shown_) return;
  sdk::write_all(2, "\r\033[K");
  progress_shown_ = false;
}

void TerminalUi::out(std::string_view data) {
  clear_progress();
  if (stdout_closed_) return;
  // A reader that went away (`| head`) must not stop the command: drop the rest.
  if (!sdk::write_all(1, data)) stdout_closed_ = true;
}

void TerminalUi::err(std::string_view data) {
  clear_progress();
  sdk::write_all(2, data);
}

void TerminalUi::info(const std::string& message) {
  if (!verbose_) return;
  clear_progress();
  sdk::write_all(2, "corral: " + printable(message, true) + "\n");
}

void TerminalUi::warn(const std::string& message) {
  clear_progress();
  sdk::write_all(2, std::string(color_ ? "\033[33mcorral: warning:\033[0m " : "corral: warning: ") + printable(message, true) + "\n");
}

void TerminalUi::progress(const std::string& message) {
  if (!tty_) {
    if (verbose_ && !message.empty()) sdk::write_all(2, "corral: " + printable(message) + "\n");
    return;
  }
  clear_progress();
  if (message.empty()) return;
  sdk::write_all(2, std::string(color_ ? "\033[2m" : "") + "corral: " + printable(message) + "…" + (color_ ? "\033[0m" : ""));
  progress_shown_ = true;
}

bool TerminalUi::cancelled() { return stop_requested(); }

void TerminalUi::error(const Error& e) { error(e.what(), e.hint()); }

void TerminalUi::error(const std::string& message, const std::string& hint) {
  clear_progress();
  std::string text = std::string(color_ ? "\033[31mcorral: error:\033[0m " : "corral: error: ") + printable(message, true) + "\n";
  if (!hint.empty()) text += "  hint: " + printable(hint, true) + "\n";
  sdk::write_all(2, text);
}

void TerminalUi::note(const std::string& message) {
  clear_progress();
  sdk::write_all(2, "corral: " + printable(message, true) + "\n");
}

}  // namespace corral::cli
