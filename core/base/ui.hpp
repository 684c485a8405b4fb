// What core tells the user. The CLI writes it to the terminal; tests capture it.
#pragma once

#include <string>
#include <string_view>

namespace corral {

class Ui {
 public:
  virtual ~Ui() = default;
  virtual void out(std::string_view data) = 0;        // the command's stdout, byte for byte
  virtual void err(std::string_view data) = 0;        // the command's stderr, byte for byte
  virtual void info(const std::string& message) = 0;  // shown with --verbose
  virtual void note(const std::string& message) = 0;  // always shown
  virtual void warn(const std::string& message) = 0;
  virtual void progress(const std::string& message) = 0;
  virtual bool cancelled() = 0;  // true once the user asked to stop (Ctrl-C)
};

}  // namespace corral
