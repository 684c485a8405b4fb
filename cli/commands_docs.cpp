// `corral docs`: the capability matrix and provider pages, generated from the loaded
// plugins' specs, printed, written in place (keeping hand-written text) or checked.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "commands.hpp"
#include "docs_blocks.hpp"
#include "docs_matrix.hpp"
#include "docs_page.hpp"
#include "corral/errors.hpp"

namespace fs = std::filesystem;

namespace corral::cli {
namespace {

// `--check` found a file that differs from what would be generated (like `diff`).
constexpr int kExitStale = 1;

// A file's text, or nullopt when it does not exist; unreadable files are an error.
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

// One file the generator owns (wholly or in part) and the command that regenerates it.
struct Output {
  fs::path file;
  std::string expected;
  std::string regenerate;
};

// Writes each output whose file differs; reports each on stderr.
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

// Compares each output with its file; prints a diff for each stale one and fails if any.
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

int finish(Context& ctx, const DocsArgs& args, const std::vector<Output>& outputs) {
  if (!args.check.empty()) return check_outputs(ctx, outputs, {});
  return write_outputs(ctx, outputs);
}

// The matrix file's new text: the generated block placed into the existing file.
std::string matrix_file_text(const std::optional<std::string>& existing, const std::string& block,
                             const fs::path& file) {
  return docs::replace_block(existing ? *existing : docs::matrix_skeleton(), docs::kMatrixMarkers, block,
                             file.string());
}

int matrix_command(Context& ctx, const DocsArgs& args) {
  const std::vector<ProviderSpec> specs = docs::documented_specs(ctx.registry().entries());
  const bool json = args.format == "json";
  const std::string generated = json ? docs::matrix_json(specs) : docs::matrix_markdown(specs);
  const fs::path file = args.check.empty() ? args.write : args.check;
  if (file.empty()) {
    ctx.ui.out(generated);
    return 0;
  }
  std::string expected = json ? generated : matrix_file_text(read_text(file), generated, file);
  std::string regenerate =
      fmt::format("corral docs matrix{} --write {}", json ? " --format json" : "", file.string());
  return finish(ctx, args, {{file, std::move(expected), std::move(regenerate)}});
}

int provider_command(Context& ctx, const DocsArgs& args) {
  const ProviderEntry& e = ctx.registry().entry(args.name);
  const ProviderSpec& spec = *e.spec;
  docs::require_documented(spec, e.library);
  const fs::path file = args.check.empty() ? args.write : args.check;
  if (file.empty()) {
    ctx.ui.out(docs::provider_page(spec, docs::default_prose(spec)));
    return 0;
  }
  std::string expected = docs::regenerate_page(spec, read_text(file), file.string());
  return finish(ctx, args,
                {{file, std::move(expected), fmt::format("corral docs provider {} --write {}", spec.name, file.string())}});
}

// Generated pages in `dir` that no loaded provider owns any more.
std::vector<fs::path> orphan_pages(const fs::path& dir, const std::vector<ProviderSpec>& specs) {
  std::set<std::string> owned;
  for (const ProviderSpec& s : specs) owned.insert(docs::page_file(s));
  std::vector<fs::path> orphans;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const fs::path& p = entry.path();
    if (p.extension() != ".md" || owned.count(p.filename().string()) || p.filename() == "README.md") continue;
    std::optional<std::string> text = read_text(p);
    if (text && text->rfind(docs::kPageMark, 0) == 0) orphans.push_back(p);
  }
  std::sort(orphans.begin(), orphans.end());
  return orphans;
}

int all_command(Context& ctx, const DocsArgs& args) {
  const std::vector<ProviderSpec> specs = docs::documented_specs(ctx.registry().entries());
  const fs::path dir = args.dir;
  // The committed docs must come from the built-in providers only: scripts/docs.sh runs
  // this hermetically, so a developer's private registries never leak into them.
  const std::string regenerate =
      fmt::format("scripts/docs.sh` (built-in providers only) or `corral docs all --dir {}", dir.string());
  std::error_code ec;
  if (!args.check_all && !fs::is_directory(dir, ec) && !fs::create_directories(dir, ec))
    throw Error(ErrorCode::invalid_argument, fmt::format("cannot create {}: {}", dir.string(), ec.message()));

  std::vector<Output> outputs;
  const fs::path readme = dir / "README.md";
  outputs.push_back({readme, matrix_file_text(read_text(readme), docs::matrix_markdown(specs), readme), regenerate});
  outputs.push_back({dir / "providers.json", docs::matrix_json(specs), regenerate});
  for (const ProviderSpec& s : specs) {
    const fs::path page = dir / docs::page_file(s);
    outputs.push_back({page, docs::regenerate_page(s, read_text(page), page.string()), regenerate});
  }
  std::vector<std::string> orphans;
  for (const fs::path& p : orphan_pages(dir, specs))
    orphans.push_back(fmt::format("{} describes provider '{}', which no registry loads", p.string(), p.stem().string()));
  if (args.check_all) return check_outputs(ctx, outputs, orphans);
  for (const std::string& o : orphans) ctx.ui.warn(o + "; remove the page if the provider is gone");
  return write_outputs(ctx, outputs);
}

}  // namespace

int docs_command(Context& ctx, const DocsArgs& args) {
  switch (args.action) {
    case DocsArgs::Action::matrix: return matrix_command(ctx, args);
    case DocsArgs::Action::provider: return provider_command(ctx, args);
    case DocsArgs::Action::all: return all_command(ctx, args);
  }
  return kExitInternal;
}

}  // namespace corral::cli
