#include "terminal_size.hpp"

#include "corral/json.hpp"

namespace corral::kubernetes::standin {
namespace {

// A field of TerminalSize: Go's uint16, so a number from 0 to 65535; nullopt otherwise.
std::optional<std::uint16_t> dimension(const json::Value& size, const char* key) {
  const json::Value* v = json::find(size, key);
  if (!v) return 0;  // Go leaves a missing field at zero
  if (!v->IsUint() || v->GetUint() > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(v->GetUint());
}

}  // namespace

std::vector<TerminalSize> TerminalSizeReader::take(std::string_view data) {
  std::vector<TerminalSize> sizes;
  if (broken_) return sizes;
  pending_.append(data);
  while (std::optional<TerminalSize> size = next_value()) {
    if (size->rows != 0 && size->cols != 0) sizes.push_back(*size);
  }
  return sizes;
}

std::optional<TerminalSize> TerminalSizeReader::next_value() {
  const std::size_t start = pending_.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) {
    pending_.clear();
    return std::nullopt;
  }
  if (pending_[start] != '{') {
    broken_ = true;
    return std::nullopt;
  }
  // A TerminalSize holds numbers only: its first '}' ends it.
  const std::size_t end = pending_.find('}', start);
  if (end == std::string::npos) return std::nullopt;  // the rest comes in a later message
  const std::string text = pending_.substr(start, end + 1 - start);
  pending_.erase(0, end + 1);
  try {
    json::Document doc = json::parse(text, "terminal size");
    const auto cols = dimension(doc, "Width");
    const auto rows = dimension(doc, "Height");
    if (cols && rows) return TerminalSize{*rows, *cols};
  } catch (const Error&) {
  }
  broken_ = true;
  return std::nullopt;
}

}  // namespace corral::kubernetes::standin
