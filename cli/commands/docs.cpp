// `corral docs matrix|provider|all`: the capability matrix and provider pages, generated
// from the loaded plugins' specs, printed, written in place (keeping hand-written text)
// or checked (--check: a stale file exits 1 with a diff).
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <set>

#include "commands/commands.hpp"
#include "commands/docs_files.hpp"
#include "conformance/record.hpp"
#include "corral/errors.hpp"
#include "docs_blocks.hpp"
#include "docs_matrix.hpp"
#include "docs_page.hpp"
#include "options.hpp"

namespace fs = std::filesystem;

namespace corral::cli {
namespace {

// --write FILE or --check FILE; neither prints the generated text.
struct FileOptions {
  std::string write;  // file to rewrite in place
  std::string check;  // file to compare with the generated text
  fs::path file() const { return check.empty() ? write : check; }
};

void add_file_options(CLI::App& app, FileOptions& o, const char* write_help) {
  CLI::Option* write = app.add_option("--write", o.write, write_help);
  write->excludes(app.add_option("--check", o.check, "Fail when FILE is not what --write would make"));
}

int finish(Context& ctx, const FileOptions& o, const std::vector<Output>& outputs) {
  if (!o.check.empty()) return check_outputs(ctx, outputs, {});
  return write_outputs(ctx, outputs);
}

// The matrix file's new text: the generated block placed into the existing file.
std::string matrix_file_text(const std::optional<std::string>& existing, const std::string& block,
                             const fs::path& file) {
  return docs::replace_block(existing ? *existing : docs::matrix_skeleton(), docs::kMatrixMarkers, block,
                             file.string());
}

// What the kit showed of each provider: its record in `records_dir` (NAME.json, kept with
// the docs and re-shown by CI on every change) when given, else the installed plugin's
// own record while it is for that very file. A malformed record is refused, named.
docs::Verifications verifications_of(const Registry& registry, const std::vector<ProviderSpec>& specs,
                                     const fs::path& records_dir) {
  docs::Verifications out;
  for (const ProviderSpec& s : specs) {
    std::optional<VerificationRecord> record;
    if (!records_dir.empty()) {
      const fs::path file = records_dir / (s.name + ".json");
      if ((record = read_record_file(file))) {
        if (record->provider != s.name)
          throw ConfigError(fmt::format("verification record {} is provider '{}'s, not '{}'s", file.string(),
                                        record->provider, s.name),
                            "name each record after its provider");
      }
    } else {
      record = read_verification(registry.entry(s.name)).record;
    }
    if (!record) continue;
    docs::RowVerification& row = out[s.name];
    row.kit = record->kit_version;
    row.date = record->date;
    row.contract = std::string(to_string(record->contract));
    for (const auto& [feature, verdict] : record->features) row.features[feature] = std::string(to_string(verdict));
  }
  return out;
}

struct MatrixOptions {
  std::string format = "markdown";  // markdown | json
  std::string records;              // --records DIR
  FileOptions file;
};

int matrix_command(Context& ctx, const MatrixOptions& o) {
  const std::vector<ProviderSpec> specs = docs::documented_specs(ctx.registry().entries());
  const docs::Verifications verified = verifications_of(ctx.registry(), specs, o.records);
  const bool json = o.format == "json";
  const std::string generated = json ? docs::matrix_json(specs, verified) : docs::matrix_markdown(specs, verified);
  const fs::path file = o.file.file();
  if (file.empty()) {
    ctx.ui.out(generated);
    return 0;
  }
  std::string expected = json ? generated : matrix_file_text(read_text(file), generated, file);
  std::string regenerate =
      fmt::format("corral docs matrix{} --write {}", json ? " --format json" : "", file.string());
  return finish(ctx, o.file, {{file, std::move(expected), std::move(regenerate)}});
}

Runner define_matrix(CLI::App& app) {
  auto o = std::make_shared<MatrixOptions>();
  app.add_option("--format", o->format, "markdown or json")
      ->check(CLI::IsMember({"markdown", "json"}))
      ->capture_default_str();
  app.add_option("--records", o->records,
                 "Mark features from the verification records in DIR (NAME.json) instead of the installed plugins' own");
  add_file_options(app, o->file, "Rewrite the matrix block of FILE (json: all of FILE)");
  return [o](Context& ctx) { return matrix_command(ctx, *o); };
}

struct PageOptions {
  std::string name;  // the provider's name or alias
  FileOptions file;
};

int provider_command(Context& ctx, const PageOptions& o) {
  const ProviderEntry& e = ctx.registry().entry(o.name);
  const ProviderSpec& spec = *e.spec;
  docs::require_documented(spec, e.library);
  const fs::path file = o.file.file();
  if (file.empty()) {
    ctx.ui.out(docs::provider_page(spec, docs::default_prose(spec)));
    return 0;
  }
  std::string expected = docs::regenerate_page(spec, read_text(file), file.string());
  return finish(ctx, o.file,
                {{file, std::move(expected), fmt::format("corral docs provider {} --write {}", spec.name, file.string())}});
}

Runner define_provider(CLI::App& app) {
  auto o = std::make_shared<PageOptions>();
  add_provider_argument(app, o->name);
  add_file_options(app, o->file, "Regenerate FILE, keeping its hand-written block");
  return [o](Context& ctx) { return provider_command(ctx, *o); };
}

struct AllOptions {
  std::string dir = "docs/providers";  // the folder of README.md, providers.json and the pages
  bool check = false;                  // check instead of write
};

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

// README.md's matrix block, providers.json and one page per provider, in `dir`, the
// features marked from `verified`.
std::vector<Output> all_outputs(const fs::path& dir, const std::vector<ProviderSpec>& specs,
                                const docs::Verifications& verified) {
  // The committed docs must come from the built-in providers only: scripts/docs.sh runs
  // this hermetically, so a developer's private registries never leak into them.
  const std::string regenerate =
      fmt::format("scripts/docs.sh` (built-in providers only) or `corral docs all --dir {}", dir.string());
  std::vector<Output> outputs;
  const fs::path readme = dir / "README.md";
  outputs.push_back(
      {readme, matrix_file_text(read_text(readme), docs::matrix_markdown(specs, verified), readme), regenerate});
  outputs.push_back({dir / "providers.json", docs::matrix_json(specs, verified), regenerate});
  for (const ProviderSpec& s : specs) {
    const fs::path page = dir / docs::page_file(s);
    outputs.push_back({page, docs::regenerate_page(s, read_text(page), page.string()), regenerate});
  }
  return outputs;
}

int all_command(Context& ctx, const AllOptions& o) {
  const std::vector<ProviderSpec> specs = docs::documented_specs(ctx.registry().entries());
  const fs::path dir = o.dir;
  std::error_code ec;
  if (!o.check && !fs::is_directory(dir, ec) && !fs::create_directories(dir, ec))
    throw Error(ErrorCode::invalid_argument, fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  // The records kept with the docs (docs/providers/records), which CI re-shows.
  const std::vector<Output> outputs = all_outputs(dir, specs, verifications_of(ctx.registry(), specs, dir / "records"));
  std::vector<std::string> orphans;
  for (const fs::path& p : orphan_pages(dir, specs))
    orphans.push_back(fmt::format("{} describes provider '{}', which no registry loads", p.string(), p.stem().string()));
  if (o.check) return check_outputs(ctx, outputs, orphans);
  for (const std::string& orphan : orphans) ctx.ui.warn(orphan + "; remove the page if the provider is gone");
  return write_outputs(ctx, outputs);
}

Runner define_all(CLI::App& app) {
  auto o = std::make_shared<AllOptions>();
  app.add_option("--dir", o->dir, "The folder")->capture_default_str();
  app.add_flag("--check", o->check, "Check every file instead of writing");
  return [o](Context& ctx) { return all_command(ctx, *o); };
}

// `docs` only groups its subcommands, one of which it needs.
Runner define_docs(CLI::App& app) {
  app.require_subcommand(1);
  return nullptr;
}

}  // namespace

const Command kDocs = {
    .name = "docs",
    .summary = "Generate the provider docs from the plugins' specs",
    .define = define_docs,
};

const Command kDocsMatrix = {
    .name = "matrix",
    .parent = "docs",
    .summary = "The capability matrix of every loaded provider",
    .define = define_matrix,
};

const Command kDocsProvider = {
    .name = "provider",
    .parent = "docs",
    .summary = "One provider's page; hand-written text is kept",
    .define = define_provider,
};

const Command kDocsAll = {
    .name = "all",
    .parent = "docs",
    .summary = "README.md matrix, providers.json and every page in a folder",
    .exit_status = "0; with --check, 1 (and a diff) when a file differs from what would be generated",
    .define = define_all,
};

}  // namespace corral::cli
