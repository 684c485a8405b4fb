// Daytona's split command log: every stdout chunk is preceded by the bytes 01 01 01 and
// every stderr chunk by 02 02 02. The log arrives in arbitrary pieces (WebSocket
// messages), so a prefix may straddle two of them; the demultiplexer holds back at most
// the two bytes that might begin one.
//
// The format itself is lossy and ambiguous for raw output, whoever reads it. The daemon
// (apps/daemon/pkg/session/execute.go) copies each stream into the log with a shell loop,
//   while IFS= read -r line || [ -n "$line" ]; do printf '\001\001\001%s\n' "$line"; done
// so: NUL bytes never reach the log (a shell's `read` drops them); a last line without a
// newline gets one; and the command's bytes are not escaped, so output holding 01 01 01
// or 02 02 02 is exactly a prefix: stderr "a\x01\x01\x01b" reads as stderr "a" and stdout
// "b", here and in the daemon's own DemuxLogBytes. (Its printf may also split a line longer
// than its stdio buffer over several writes, letting the other stream's lines in between
// without a prefix.) No reader can undo that, so corral never puts raw output in this
// log: the command wrapper encodes both streams into short ASCII lines
// (command_line.hpp, output_decoder.hpp), which hold none of 00, 01 or 02.
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
  // stream its last prefix named (stdout before any prefix). The bytes of one stream
  // within a piece go to its sink in one call: the daemon prefixes every line, and a
  // call per line would cost a write per line downstream.
  void feed(std::string_view piece);
  // Ends the log: bytes held back as a possible prefix were output after all.
  void finish();

 private:
  void deliver(std::string_view bytes);
  // Passes what deliver() gathered for the current stream to its sink.
  void flush();

  Sink out_, err_;
  bool to_stderr_ = false;
  std::string held_;  // up to 2 bytes that may be the start of a prefix
  std::string gathered_;  // output of the current stream not yet passed on
};

}  // namespace corral::daytona
