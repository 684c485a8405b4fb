#include "base/phase_report.hpp"

#include <algorithm>

namespace corral {

PhaseReport::PhaseReport(Ui& ui, std::string phase, std::uint64_t total)
    : ui_(ui), phase_(std::move(phase)), total_(total), start_(std::chrono::steady_clock::now()) {
  if (PhaseTracer* tracer = ui_.tracer()) span_ = tracer->start(phase_, -1);
  PhaseEvent e;
  e.phase = phase_;
  e.total = total_;
  ui_.phase(e);
}

PhaseReport::~PhaseReport() {
  if (!ended_) end(PhaseEvent::State::failed);
}

void PhaseReport::bytes(std::uint64_t moved, std::uint64_t total) {
  if (ended_) return;
  if (!total_ && total >= moved_) total_ = total;
  if (total_) moved = std::min(moved, total_);
  if (moved <= moved_ && moved_ != 0) return;
  moved_ = moved;
  PhaseEvent e;
  e.phase = phase_;
  e.state = PhaseEvent::State::bytes;
  e.bytes = moved_;
  e.total = total_;
  ui_.phase(e);
}

void PhaseReport::done() {
  if (ended_) return;
  if (total_ && moved_ < total_) bytes(total_);
  end(PhaseEvent::State::done);
}

void PhaseReport::end(PhaseEvent::State state) {
  ended_ = true;
  if (span_) {
    if (total_ || moved_) span_->attribute("corral.bytes", static_cast<std::int64_t>(moved_));
    span_->end(state == PhaseEvent::State::failed ? "the phase failed" : "");
  }
  PhaseEvent e;
  e.phase = phase_;
  e.state = state;
  e.bytes = moved_;
  e.total = total_;
  e.ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start_).count();
  ui_.phase(e);
}

}  // namespace corral
