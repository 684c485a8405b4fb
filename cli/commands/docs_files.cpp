#include "commands/docs_files.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include "corral/errors.hpp"
#include "docs_blocks.hpp"

namespace fs = std::filesystem;

namespace corral::cli {
namespace {

// Replaces `file` with `text` through a temporary file and a rename, so a reader never
// sees half a file and a failed write leaves the old one.
void write_text(const fs::path& file, const std::string& text) {
  fs::path tmp = file;
  tmp += fmt::format(".tmp-{}", ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw Error(ErrorCode::invalid_argument, fmt::format("cannot write {}", file.string()),
                  "check that its folder exists and is writable");
    }
  }
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw Error(ErrorCode::invalid_argument, fmt::format("cannot replace {}: {}", file.string(), ec.message()));
  }
}

}  // namespace

std::optional<std::string> read_text(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::nullopt;
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw Error(ErrorCode::invalid_argument, fmt::format("cannot read {}", file.string()), "check its permissions");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int write_outputs(Context& ctx, const std::vector<Output>& outputs) {
  for (const Output& o : outputs) {
    if (read_text(o.file) == o.expected) {
      ctx.ui.note(fmt::format("{} is up to date", o.file.string()));
      continue;
    }
    write_text(o.file, o.expected);
    ctx.ui.note(fmt::format("wrote {}", o.file.string()));
  }
  return 0;
}

int check_outputs(Context& ctx, const std::vector<Output>& outputs, const std::vector<std::string>& extra_problems) {
  std::vector<std::string> stale;
  for (const Output& o : outputs) {
    std::optional<std::string> actual = read_text(o.file);
    if (!actual) {
      stale.push_back(fmt::format("{} does not exist", o.file.string()));
      continue;
    }
    if (auto diff = docs::stale_diff(o.file.string(), *actual, o.expected)) {
      ctx.ui.err(*diff);
      stale.push_back(fmt::format("{} is stale", o.file.string()));
    } else {
      ctx.ui.note(fmt::format("{} is up to date", o.file.string()));
    }
  }
  stale.insert(stale.end(), extra_problems.begin(), extra_problems.end());
  if (stale.empty()) return 0;
  std::set<std::string> fixes;
  for (const Output& o : outputs) fixes.insert(o.regenerate);
  ctx.ui.error(fmt::format("the provider docs differ from the plugins' specs:\n  {}", fmt::join(stale, "\n  ")),
               fmt::format("regenerate with `{}` and commit the result", fmt::join(fixes, "` and `")));
  return kExitStale;
}

}  // namespace corral::cli
