// Daytona's split command log: every stdout chunk is preceded by the bytes 01 01 01 and
// every stderr chunk by 02 02 02. The log arrives in arbitrary pieces (WebSocket
// messages), so a prefix may straddle two of them; the demultiplexer holds back at most
// the two bytes that might begin one.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace corral::daytona {

class LogDemux {
 public:
  using Sink = std::function<void(std::string_view)>;
  LogDemux(Sink on_stdout, Sink on_stderr) : out_(std::move(on_stdout)), err_(std::move(on_stderr)) {}

  // Feeds the next piece of the log; passes every byte that is surely output on to the
  // stream its last prefix named (stdout before any prefix).
  void feed(std::string_view piece);
  // Ends the log: bytes held back as a possible prefix were output after all.
  void finish();

 private:
  void deliver(std::string_view bytes);

  Sink out_, err_;
  bool to_stderr_ = false;
  std::string held_;  // up to 2 bytes that may be the start of a prefix
};

}  // namespace corral::daytona
