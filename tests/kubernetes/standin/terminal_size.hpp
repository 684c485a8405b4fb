// The resize channel (4) of an exec with tty=true, as the kubelet reads it: one stream of
// JSON TerminalSize values ({"Width":cols,"Height":rows}, client-go's remotecommand type)
// that may be split across messages or share one; a size with a zero dimension is skipped,
// and the first value that is none ends the reading (later resizes are ignored).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace corral::kubernetes::standin {

struct TerminalSize {
  std::uint16_t rows = 0, cols = 0;
};

class TerminalSizeReader {
 public:
  // Takes the data of one channel-4 message; returns the sizes it completed, in order.
  std::vector<TerminalSize> take(std::string_view data);
  // Whether a value that is no TerminalSize ended the reading.
  bool broken() const { return broken_; }

 private:
  std::optional<TerminalSize> next_value();
  std::string pending_;
  bool broken_ = false;
};

}  // namespace corral::kubernetes::standin
