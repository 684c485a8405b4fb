// Decodes one output stream as the command wrapper (command_line.hpp) encodes it in the
// sandbox. Daytona's log cannot carry arbitrary bytes (see log_demux.hpp: its copy loop
// drops NUL bytes, and output holding 01 01 01 or 02 02 02 reads as a stream prefix), so
// the wrapper sends each stream as ASCII lines, one or more per chunk the command wrote:
//  - base64 lines (`base64`, wrapped at any width; each chunk is padded on its own, so
//    '=' may end any 4-character group, not only the last);
//  - or, in a sandbox without `base64`, hex lines as `od -An -v -tx1` prints them: a
//    line that starts with a space holds bytes as space-separated pairs of hex digits.
// Newlines only separate lines; the decoded bytes are the command's output, byte for byte.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace corral::daytona {

class OutputDecoder {
 public:
  using Sink = std::function<void(std::string_view)>;
  // `what` names the stream in errors ("Daytona sandbox ID: run the command: stdout").
  OutputDecoder(std::string what, Sink sink) : what_(std::move(what)), sink_(std::move(sink)) {}

  // Decodes the next piece of the stream (cut anywhere) and passes every complete byte on
  // at once. Throws Error(internal) on text the wrapper cannot have written.
  void feed(std::string_view text);
  // Ends the stream; throws Error(internal) when it ends inside an encoded byte.
  void finish();

 private:
  [[noreturn]] void garbled(const std::string& why) const;

  enum class Line { start, base64, hex };
  std::string what_;
  Sink sink_;
  Line line_ = Line::start;
  std::uint32_t bits_ = 0;  // the current group's bits so far
  int digits_ = 0;          // characters of the current group (4 for base64, 2 for hex)
  int padding_ = 0;         // '=' seen in the current base64 group
  std::uint64_t offset_ = 0;  // encoded characters read, for error messages
};

}  // namespace corral::daytona
