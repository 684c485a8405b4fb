#include "progress_board.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "base/sizes.hpp"
#include "corral/errors.hpp"
#include "json_line.hpp"

namespace corral::cli {
namespace {

constexpr std::size_t kMinWidth = 20;  // below this a line says nothing useful
constexpr std::size_t kBarWidth = 12;

// "[=====>      ]" for `done` of `total`.
std::string bar(std::uint64_t done, std::uint64_t total) {
  const std::size_t filled = total ? static_cast<std::size_t>(done * kBarWidth / total) : 0;
  std::string b = "[" + std::string(filled, '=');
  if (filled < kBarWidth) b += '>' + std::string(kBarWidth - filled - 1, ' ');
  return b + "]";
}

std::string seconds(PhaseBoard::Clock::duration d) {
  return fmt::format("{:.1f}s", std::chrono::duration<double>(d).count());
}

std::size_t columns_of(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// `text` cut to at most `columns` code points, never inside a UTF-8 sequence: at the end
// of a word when one ends in the second half of the room, "..." marking the cut.
std::string fit(const std::string& text, std::size_t columns) {
  constexpr std::string_view kCut = "...";
  if (columns_of(text) <= columns) return text;
  const std::size_t room = columns > kCut.size() ? columns - kCut.size() : 0;
  std::size_t count = 0, end = text.size();
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;  // a continuation byte
    if (count++ == room) {
      end = i;
      break;
    }
  }
  std::string head = text.substr(0, end);
  if (const auto space = head.find_last_of(' '); space != std::string::npos && columns_of(head.substr(0, space)) >= room / 2)
    head.resize(space);
  while (!head.empty() && (head.back() == ' ' || head.back() == '|')) head.pop_back();  // no separator left hanging
  return head + std::string(kCut);
}

}  // namespace

ProgressMode parse_progress_mode(const std::string& text) {
  if (text == "auto") return ProgressMode::automatic;
  if (text == "never") return ProgressMode::never;
  if (text == "json") return ProgressMode::json;
  throw Error(ErrorCode::invalid_argument, fmt::format("--progress {}: not a progress mode", text),
              "use --progress auto (a live line on a terminal), never, or json (one JSON object per line)");
}

void PhaseBoard::update(const PhaseEvent& e, Clock::time_point now) {
  auto it = std::find_if(active_.begin(), active_.end(),
                         [&](const Active& a) { return a.phase == e.phase && a.shard == e.shard; });
  switch (e.state) {
    case PhaseEvent::State::start:
      if (it == active_.end()) it = active_.insert(active_.end(), Active{e.phase, e.shard, now});
      it->start = now;
      it->bytes = 0;
      it->total = e.total;
      it->counted = e.total > 0;
      return;
    case PhaseEvent::State::bytes:
      if (it == active_.end()) return;
      it->bytes = std::max(it->bytes, e.bytes);
      it->total = std::max(it->total, e.total);
      it->counted = true;
      return;
    case PhaseEvent::State::done:
    case PhaseEvent::State::failed:
      if (it != active_.end()) active_.erase(it);
      return;
  }
}

bool PhaseBoard::idle() const {
  if (!note_.empty()) return false;
  return std::all_of(active_.begin(), active_.end(),
                     [&](const Active& a) { return output_started_ && a.phase == "exec"; });
}

std::vector<std::string> PhaseBoard::items(Clock::time_point now, bool with_bars) const {
  // One item per phase name: a fan-out's shards in the same phase are summed up.
  std::vector<std::string> names;
  for (const Active& a : active_)
    if (!(output_started_ && a.phase == "exec") && std::find(names.begin(), names.end(), a.phase) == names.end())
      names.push_back(a.phase);
  std::vector<std::string> out;
  for (const std::string& name : names) {
    int count = 0;
    bool counted = false;
    std::uint64_t bytes = 0, total = 0;
    Clock::time_point first = now;
    for (const Active& a : active_) {
      if (a.phase != name) continue;
      ++count;
      counted = counted || a.counted;
      bytes += a.bytes;
      total += a.total;
      first = std::min(first, a.start);
    }
    std::string item = count > 1 ? fmt::format("{} x{}", name, count) : name;
    const auto elapsed = now - first;
    if (!counted) {
      out.push_back(item + " " + seconds(elapsed));
      continue;
    }
    const double secs = std::chrono::duration<double>(elapsed).count();
    const std::string rate = secs > 0.05 ? " " + format_size(static_cast<std::uint64_t>(bytes / secs)) + "/s" : "";
    if (total) {
      const unsigned percent = static_cast<unsigned>(std::min<std::uint64_t>(bytes, total) * 100 / total);
      item += with_bars ? " " + bar(std::min(bytes, total), total) : "";
      item += fmt::format(" {}% {}/{}", percent, format_size(bytes), format_size(total));
    } else {
      item += " " + format_size(bytes);
    }
    out.push_back(item + (with_bars ? rate : ""));
  }
  return out;
}

std::string PhaseBoard::line(Clock::time_point now, std::size_t width) const {
  if (width < kMinWidth || idle()) return "";
  const std::size_t room = width - 1;
  std::string text;
  // The full line if it fits, else without bars and rates, else cut at the edge.
  for (bool with_bars : {true, false}) {
    std::vector<std::string> parts = items(now, with_bars);
    if (!note_.empty()) parts.push_back(note_ + "...");
    text = "corral: " + fmt::format("{}", fmt::join(parts, " | "));
    if (columns_of(text) <= room) return text;
  }
  return fit(text, room);
}

std::string phase_json_line(const PhaseEvent& e) {
  static const char* const kStates[] = {"start", "progress", "done", "failed"};
  return json_line([&](json::Writer& w) {
    w.StartObject();
    json::write_string(w, "phase", e.phase);
    json::write_string(w, "state", kStates[static_cast<int>(e.state)]);
    if (e.state == PhaseEvent::State::bytes || e.total > 0) {
      w.Key("bytes");
      w.Uint64(e.bytes);
      w.Key("total");
      w.Uint64(e.total);
    }
    if (e.state == PhaseEvent::State::done || e.state == PhaseEvent::State::failed) {
      w.Key("ms");
      w.Int64(e.ms);
    }
    if (e.shard >= 0) {
      w.Key("shard");
      w.Int(e.shard);
    }
    if (!e.provider.empty()) json::write_string(w, "provider", e.provider);
    if (e.state == PhaseEvent::State::start && !e.reason.empty()) {
      json::write_string(w, "reason", e.reason);
      w.Key("inUse");
      w.Int(e.in_use);
      w.Key("limit");
      w.Int(e.limit);
      if (e.ms > 0) {
        w.Key("waitMs");
        w.Int64(e.ms);
      }
    }
    w.EndObject();
  });
}

}  // namespace corral::cli
