// What the live progress line shows: the phases in flight (several at once when a pack
// overlaps a create or shards run side by side), and how one line of them is drawn to fit
// a terminal's width. Pure: no terminal, no clock of its own, so tests can draw it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/ui.hpp"

namespace corral::cli {

// --progress: auto draws the live line when stderr is a terminal; never draws nothing;
// json writes one JSON object per phase event on stderr (README.md, Progress).
enum class ProgressMode { automatic, never, json };

// The mode `text` names; a usage error (invalid-argument) for anything else.
ProgressMode parse_progress_mode(const std::string& text);

class PhaseBoard {
 public:
  using Clock = std::chrono::steady_clock;

  // Takes a phase's start (added), bytes (updated) or end (removed), seen at `now`.
  void update(const PhaseEvent& event, Clock::time_point now);
  // The latest note about a slow step (Ui::progress); "" clears it.
  void set_note(std::string note) { note_ = std::move(note); }
  // Hides the exec waits: the command's output has started, which ends the wait for it.
  void output_started() { output_started_ = true; }
  // True when nothing would be drawn: no note and no phase shown.
  bool idle() const;
  // The line without colour or newline, at most `width` - 1 columns (a full line would
  // make some terminals wrap), or "" when nothing fits in `width` or nothing is shown.
  std::string line(Clock::time_point now, std::size_t width) const;

 private:
  struct Active {
    std::string phase;
    int shard;
    Clock::time_point start;
    std::uint64_t bytes = 0;
    std::uint64_t total = 0;
    bool counted = false;  // has moved bytes: shown with its size, not only its time
  };
  // The phases grouped by name in the order they started, as the line's items.
  std::vector<std::string> items(Clock::time_point now, bool with_bars) const;

  std::vector<Active> active_;
  std::string note_;
  bool output_started_ = false;
};

// `event` as one JSON object and its newline, with the keys README.md (Progress) lists.
std::string phase_json_line(const PhaseEvent& event);

}  // namespace corral::cli
