// Daytona copies a command's output into its log line by line and adds a newline to a
// last line that has none. To give back the output byte for byte, the command wrapper
// prints a marker line of its own at the end of each stream, right after the command's
// last byte: "abc" + marker + "\n" comes out as one line. Stripping that exact ending
// restores "abc"; "abc\n" + marker + "\n" restores "abc\n".
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace corral::daytona {

// A fresh marker: a unit-separator-framed random token no real output contains.
std::string new_end_marker();

// Passes a stream on as it arrives, holding back only a tail that could be the start of
// `marker` + "\n", and drops that ending when the stream finishes with it.
class EndMarkerFilter {
 public:
  using Sink = std::function<void(std::string_view)>;
  EndMarkerFilter(std::string marker, Sink sink) : ending_(std::move(marker) + "\n"), sink_(std::move(sink)) {}

  void feed(std::string_view data);
  // Ends the stream; true when it ended with the marker (the command's output is then
  // complete), false when the marker never came (held bytes are delivered as output).
  bool finish();

 private:
  std::string ending_;
  Sink sink_;
  std::string held_;
};

}  // namespace corral::daytona
