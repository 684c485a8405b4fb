// The terminal side of core's Ui: command output passed through byte for byte,
// corral's own messages on stderr, progress only when stderr is a terminal, and the
// Ctrl-C flag that stops a run cleanly.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "corral/errors.hpp"
#include "base/ui.hpp"

namespace corral::cli {

class TerminalUi : public corral::Ui {
 public:
  explicit TerminalUi(bool verbose);
  void out(std::string_view data) override;
  void err(std::string_view data) override;
  void info(const std::string& message) override;
  void warn(const std::string& message) override;
  void progress(const std::string& message) override;
  bool cancelled() override;
  // Prints "corral: error: ..." and the hint.
  void error(const Error& e);
  void error(const std::string& message, const std::string& hint = {});
  // Prints a plain line to stderr ("corral: ...").
  void note(const std::string& message) override;

 private:
  void clear_progress();
  bool verbose_;
  bool tty_;
  bool color_;
  bool progress_shown_ = false;
  bool stdout_closed_ = false;
};

// Installs handlers for SIGINT, SIGTERM and SIGHUP that ask the run to stop (a third
// signal exits at once) and ignores SIGPIPE so a closed stdout is an error, not death.
void install_signal_handlers();
// True once a stop signal arrived.
bool stop_requested();


}  // namespace corral::cli
