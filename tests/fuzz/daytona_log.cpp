// Daytona's command log as the plugin reads it: the prefixed log frames (01 01 01 stdout,
// 02 02 02 stderr) split by the demultiplexer, then each stream decoded from the wrapper's
// base64/hex lines. The log arrives in WebSocket messages cut anywhere, so where it is cut
// must change nothing: the input read in one piece, in three (cut where its first two bytes
// say) and one byte at a time gives the same streams, the same decoded bytes and the same
// refusal (corral::Error(internal), nothing else).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "corral/errors.hpp"
#include "log_demux.hpp"
#include "output_decoder.hpp"

namespace {

using Pieces = std::vector<std::string_view>;

// What one way of cutting the log produced.
struct Read {
  std::vector<std::pair<bool, std::string>> chunks;  // (stderr?, bytes), one stream's run merged
  std::string out, err;                               // decoded streams
  bool out_refused = false, err_refused = false;
  bool operator==(const Read&) const = default;
};

// Decodes one stream fed in pieces cut at `cuts` (those past its end ignored) into `decoded`;
// true when the decoder refused it.
bool decode(const std::string& bytes, const std::vector<std::size_t>& cuts, std::string& decoded) {
  corral::daytona::OutputDecoder d("fuzz", [&](std::string_view b) { decoded.append(b); });
  try {
    std::size_t at = 0;
    for (std::size_t cut : cuts) {
      if (cut > bytes.size()) break;
      d.feed(std::string_view(bytes).substr(at, cut - at));
      at = cut;
    }
    d.feed(std::string_view(bytes).substr(at));
    d.finish();
  } catch (const corral::Error& e) {
    if (e.code() != corral::ErrorCode::internal) std::abort();
    return true;
  }
  return false;
}

Read read(const Pieces& pieces, const std::vector<std::size_t>& decoder_cuts) {
  Read r;
  auto sink = [&r](bool to_stderr) {
    return [&r, to_stderr](std::string_view b) {
      if (b.empty()) std::abort();  // a sink is never called for nothing
      if (r.chunks.empty() || r.chunks.back().first != to_stderr) r.chunks.emplace_back(to_stderr, "");
      r.chunks.back().second.append(b);
    };
  };
  corral::daytona::LogDemux demux(sink(false), sink(true));
  for (std::string_view p : pieces) demux.feed(p);
  demux.finish();
  std::string out, err;
  for (const auto& [to_stderr, bytes] : r.chunks) (to_stderr ? err : out) += bytes;
  r.out_refused = decode(out, decoder_cuts, r.out);
  r.err_refused = decode(err, decoder_cuts, r.err);
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::string_view log(reinterpret_cast<const char*>(data) + 2, size - 2);
  std::size_t a = data[0] % (log.size() + 1), b = data[1] % (log.size() + 1);
  if (a > b) std::swap(a, b);
  const Read whole = read({log}, {});
  if (read({log.substr(0, a), log.substr(a, b - a), log.substr(b)}, {a, b}) != whole) std::abort();
  Pieces bytes;
  std::vector<std::size_t> every;
  for (std::size_t i = 0; i < log.size(); ++i) {
    bytes.push_back(log.substr(i, 1));
    every.push_back(i + 1);
  }
  if (read(bytes, every) != whole) std::abort();
  return 0;
}
