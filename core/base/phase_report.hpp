// One phase the user waits for, reported to a Ui from its start to its end: an object
// per phase, so phases that overlap are reported independently.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "base/ui.hpp"

namespace corral {

class PhaseReport {
 public:
  // Reports `phase` started; `total` bytes to move, 0 for a wait.
  PhaseReport(Ui& ui, std::string phase, std::uint64_t total = 0);
  // Reports it failed unless done() was called: a throw on the way out ends it too.
  ~PhaseReport();
  PhaseReport(const PhaseReport&) = delete;
  PhaseReport& operator=(const PhaseReport&) = delete;

  // Reports `moved` bytes of the total so far (clamped to it; never decreasing); a phase
  // started without a total takes `total` when it is known.
  void bytes(std::uint64_t moved, std::uint64_t total = 0);
  // Reports the phase complete: a byte-counted phase at its total, then done.
  void done();
  // The traceparent of the phase's span, for a process that continues the trace; "" when
  // the Ui does not trace.
  std::string traceparent() const { return span_ ? span_->traceparent() : std::string(); }

 private:
  void end(PhaseEvent::State state);
  Ui& ui_;
  std::string phase_;
  std::uint64_t total_;
  std::uint64_t moved_ = 0;
  std::chrono::steady_clock::time_point start_;
  bool ended_ = false;
  std::unique_ptr<PhaseSpan> span_;  // when the Ui traces
};

}  // namespace corral
