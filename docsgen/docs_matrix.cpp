#include "docs_matrix.hpp"

#include <fmt/format.h>
#include <rapidjson/prettywriter.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "corral/json.hpp"
#include "docs_blocks.hpp"
#include "corral/errors.hpp"

namespace corral::docs {
namespace {

std::string provider_cell(const ProviderSpec& s) {
  std::string text = fmt::format("[{}]({})", s.name, page_file(s));
  if (!s.aliases.empty()) text += fmt::format(" (aliases: {})", fmt::join(s.aliases, ", "));
  return text;
}

}  // namespace

std::string page_file(const ProviderSpec& spec) { return spec.name + ".md"; }


namespace {

constexpr const char* kFixHint =
    "complete the \"docs\" object (category, location, gpu, cleanupOwner, bestFit, caveat), \"targets\" and each "
    "option's \"help\" in the plugin's spec; fix or remove registry entries that do not load";

std::string problem_lines(const ProviderSpec& spec, const std::filesystem::path& library) {
  std::string out;
  for (const std::string& p : spec_problems(spec))
    out += fmt::format("\n  provider '{}' (plugin {}): {}", spec.name, library.string(), p);
  return out;
}

}  // namespace

void require_documented(const ProviderSpec& spec, const std::filesystem::path& library) {
  std::string lines = problem_lines(spec, library);
  if (!lines.empty())
    throw ConfigError(
                      fmt::format("cannot document provider '{}':{}", spec.name, lines), kFixHint);
}

std::vector<ProviderSpec> documented_specs(const std::vector<ProviderEntry>& entries) {
  std::vector<ProviderSpec> specs;
  std::string lines;
  for (const ProviderEntry& e : entries) {
    if (!e.ok()) {
      lines += fmt::format("\n  registry entry '{}' did not load: {}", e.name, e.error ? e.error->message : "unknown");
      continue;
    }
    lines += problem_lines(*e.spec, e.library);
    specs.push_back(*e.spec);
  }
  if (!lines.empty())
    throw ConfigError(fmt::format("cannot generate the provider docs:{}", lines), kFixHint);
  std::sort(specs.begin(), specs.end(), [](const ProviderSpec& a, const ProviderSpec& b) { return a.name < b.name; });
  return specs;
}

std::string workspace_sync(const FeatureSet& features) {
  std::vector<std::string> ways;
  if (features.has(Feature::archive_sync)) ways.emplace_back("archive");
  if (features.has(Feature::workspace_mount)) ways.emplace_back("mount");
  return ways.empty() ? "none" : fmt::format("{}", fmt::join(ways, ", "));
}

std::string lifecycle(const ProviderSpec& spec) {
  std::vector<std::string> parts;
  parts.emplace_back(spec.features.has(Feature::run_session) ? "kept and reused on request" : "one run per sandbox");
  if (spec.features.has(Feature::keep_alive)) parts.emplace_back("extendable");
  if (spec.features.has(Feature::pause_resume)) parts.emplace_back("pausable");
  if (spec.features.has(Feature::cleanup)) parts.emplace_back("leftovers found by `corral stop --orphans`");
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string meanings(const ProviderSpec& spec) {
  auto stated = [](const std::string& text) { return text.empty() ? std::string("not stated") : text; };
  std::vector<std::string> parts = {"isolation: " + stated(spec.docs.isolation)};
  if (spec.features.has(Feature::pause_resume)) parts.push_back("pause: " + stated(spec.docs.pause));
  if (spec.features.has(Feature::fork)) parts.push_back("fork: " + stated(spec.docs.fork));
  if (spec.features.has(Feature::network_policy)) parts.push_back("network: " + stated(spec.docs.network));
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::vector<std::string> secret_sources(const OptionSpec& option, const ProviderSpec& spec) {
  if (!option.env.empty()) return option.env;
  return {spec.name + "." + option.name};  // a config key: secrets are never flags
}

std::string authentication(const ProviderSpec& spec) {
  std::vector<std::string> each;
  for (const OptionSpec& o : spec.options) {
    if (!o.secret) continue;
    std::vector<std::string> quoted;
    for (const std::string& s : secret_sources(o, spec)) quoted.push_back("`" + s + "`");
    each.push_back(fmt::format("{}", fmt::join(quoted, " or ")));
  }
  if (!spec.docs.authentication.empty()) each.push_back(spec.docs.authentication);
  return each.empty() ? "none" : fmt::format("{}", fmt::join(each, ", "));
}

std::string cell(std::string_view text) {
  std::string out;
  bool in_code = false;  // inside a `code span`, where Markdown shows '<' as is
  for (char c : text) {
    if (c == '`') in_code = !in_code;
    if (c == '|') out += "\\|";  // even in code spans, GFM tables need the escape
    else if (c == '\n' || c == '\r') out += ' ';
    else if (c == '<' && !in_code) out += "&lt;";  // "<port>" would vanish as an HTML tag
    else out += c;
  }
  return out;
}

namespace {

// The features cell: each name, marked when the kit verified it or saw it fail.
std::string features_cell(const ProviderSpec& s, const RowVerification* v) {
  if (s.features.empty()) return "none";
  std::vector<std::string> marked;
  for (const std::string& name : s.features.names()) {
    std::string verdict;
    if (v) {
      auto it = v->features.find(name);
      if (it != v->features.end()) verdict = it->second;
    }
    marked.push_back(name + (verdict == "verified" ? " ✓" : verdict == "failed" ? " ✗" : ""));
  }
  return fmt::format("{}", fmt::join(marked, ", "));
}

// The Verified cell: which kit showed it and when, and the run contract's verdict.
std::string verified_cell(const RowVerification* v) {
  if (!v) return "no record: declared only";
  const char* contract = v->contract == "verified" ? "✓" : v->contract == "failed" ? "✗" : "not verified";
  return fmt::format("kit of corral {}, {}; run contract {}", v->kit, v->date, contract);
}

const RowVerification* find_row(const Verifications& verified, const ProviderSpec& s) {
  auto it = verified.find(s.name);
  return it == verified.end() ? nullptr : &it->second;
}

}  // namespace

std::string matrix_markdown(const std::vector<ProviderSpec>& specs, const Verifications& verified) {
  std::string out =
      "<!-- Generated by `corral docs matrix` from the plugins' specs and verification records: change a spec "
      "or a record, then regenerate; do not edit this block. -->\n\n";
  out += "| Provider | Kind | Features | Verified | What they mean here | Workspace sync | Targets | Runs; GPU | "
         "Lifecycle; cleanup | Authentication | Best fit | Main caveat |\n";
  out += "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const ProviderSpec& s : specs) {
    const RowVerification* v = find_row(verified, s);
    const std::vector<std::string> row = {
        provider_cell(s),
        std::string(to_string(s.kind)),
        features_cell(s, v),
        verified_cell(v),
        meanings(s),
        workspace_sync(s.features),
        fmt::format("{}", fmt::join(s.targets, ", ")),
        fmt::format("{}; GPU: {}", s.docs.location, s.docs.gpu),
        fmt::format("{}; cleanup: {}", lifecycle(s), s.docs.cleanup_owner),
        authentication(s),
        s.docs.best_fit,
        s.docs.caveat,
    };
    out += "|";
    for (const std::string& c : row) out += " " + cell(c) + " |";
    out += "\n";
  }
  if (specs.empty()) out += "\nNo provider is installed.\n";

  out += "\n### Legend\n\n**Kind**\n\n";
  for (ProviderKind k : kAllKinds) out += fmt::format("- `{}`: {}.\n", to_string(k), describe(k));
  out += "\n**Features**\n\n";
  for (Feature f : kAllFeatures) out += fmt::format("- `{}`: {}.\n", to_string(f), describe(f));
  out +=
      "\n**Marks**\n\n"
      "- ✓ **verified**: `corral conformance` ran every check of the feature against the plugin and each passed; "
      "**Verified** names the corral whose kit ran and the day. CI runs the kit against every shipped plugin, on its "
      "stand-in, on each change, and fails when what it shows no longer matches the record this table is made from.\n"
      "- ✗ **failed**: a check of the feature failed.\n"
      "- unmarked: **declared** by the plugin's spec and not verified: no check of the kit covers it (such as "
      "`network-allowlist-domains`, which needs real DNS), or the provider has no record.\n";
  out +=
      "\n**Columns**\n\n"
      "- **What they mean here**: the provider's own account of what a yes hides: what keeps a command in "
      "(`isolation`), what a pause keeps and for how long, whether forks are made one to many in one call or one at "
      "a time, and which network policies it offers and where they are enforced; `not stated` where its spec says "
      "nothing.\n"
      "- **Workspace sync**: `archive` means corral packs the working tree (tracked and untracked files that are "
      "not ignored) and uploads it before each run; `mount` means the provider mounts the live working tree, so "
      "commands change local files; `none` means the command sees no workspace.\n"
      "- **Targets**: the platforms the sandbox runs.\n"
      "- **Runs; GPU**: where the sandbox lives (`local`: this machine; `cloud`: the provider's service; "
      "`self-hosted`: infrastructure you run) and whether it offers GPUs.\n"
      "- **Lifecycle; cleanup**: whether a sandbox outlives one run (`corral run --keep`, reused with `--id`), can be "
      "extended or paused, and who removes what is left behind.\n"
      "- **Authentication**: the environment variables (or flags) that carry the provider's secret settings; "
      "`none` when it needs no credentials.\n"
      "- **Best fit**, **Main caveat**: the provider author's own summary.\n";
  return out;
}

std::string matrix_json(const std::vector<ProviderSpec>& specs, const Verifications& verified) {
  rapidjson::StringBuffer compact;
  json::Writer w(compact);
  w.StartObject();
  json::write_string(w, "generator", "corral docs matrix --format json");
  w.Key("kinds");
  w.StartArray();
  for (ProviderKind k : kAllKinds) {
    w.StartObject();
    json::write_string(w, "name", to_string(k));
    json::write_string(w, "description", describe(k));
    w.EndObject();
  }
  w.EndArray();
  w.Key("features");
  w.StartArray();
  for (Feature f : kAllFeatures) {
    w.StartObject();
    json::write_string(w, "name", to_string(f));
    json::write_string(w, "description", describe(f));
    w.EndObject();
  }
  w.EndArray();
  w.Key("providers");
  w.StartArray();
  for (const ProviderSpec& s : specs) {
    w.StartObject();
    json::write_string(w, "name", s.name);
    json::write_strings(w, "aliases", s.aliases);
    json::write_string(w, "page", page_file(s));
    json::write_string(w, "family", s.family);
    json::write_string(w, "kind", to_string(s.kind));
    json::write_strings(w, "targets", s.targets);
    json::write_strings(w, "features", s.features.names());
    w.Key("verification");
    if (const RowVerification* v = find_row(verified, s)) {
      w.StartObject();
      json::write_string(w, "kit", v->kit);
      json::write_string(w, "date", v->date);
      json::write_string(w, "contract", v->contract);
      json::write_map(w, "features", StringMap(v->features.begin(), v->features.end()));
      w.EndObject();
    } else {
      w.Null();
    }
    json::write_string(w, "workspaceSync", workspace_sync(s.features));
    w.Key("meanings");
    w.StartObject();
    json::write_string(w, "isolation", s.docs.isolation);
    if (s.features.has(Feature::pause_resume)) json::write_string(w, "pause", s.docs.pause);
    if (s.features.has(Feature::fork)) json::write_string(w, "fork", s.docs.fork);
    if (s.features.has(Feature::network_policy)) json::write_string(w, "network", s.docs.network);
    w.EndObject();
    json::write_string(w, "lifecycle", lifecycle(s));
    json::write_string(w, "category", s.docs.category);
    json::write_string(w, "location", s.docs.location);
    json::write_string(w, "gpu", s.docs.gpu);
    json::write_string(w, "cleanupOwner", s.docs.cleanup_owner);
    json::write_string(w, "bestFit", s.docs.best_fit);
    json::write_string(w, "caveat", s.docs.caveat);
    w.Key("authentication");
    w.StartArray();
    for (const OptionSpec& o : s.options) {
      if (!o.secret) continue;
      w.StartObject();
      json::write_string(w, "option", o.name);
      json::write_string(w, "configKey", s.name + "." + o.name);
      json::write_strings(w, "env", o.env);
      w.EndObject();
    }
    w.EndArray();
    if (!s.docs.authentication.empty()) json::write_string(w, "externalAuthentication", s.docs.authentication);
    w.Key("options");
    w.StartArray();
    for (const OptionSpec& o : s.options) {
      w.StartObject();
      json::write_string(w, "name", o.name);
      // corral refuses a secret on the command line: it has no flag to show.
      w.Key("flag");
      if (o.secret) w.Null();
      else w.String(s.flag(o).c_str());
      json::write_string(w, "type", o.type);
      if (o.default_value) json::write_string(w, "default", *o.default_value);
      json::write_strings(w, "env", o.env);
      w.Key("secret");
      w.Bool(o.secret);
      // Secret and trusted options are never read from a repository's corral.yaml.
      w.Key("repositoryMaySet");
      w.Bool(!(o.trusted || o.secret));
      json::write_strings(w, "choices", o.choices);
      json::write_string(w, "help", o.help);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();

  // Re-emit indented, one value per line, so a stale file shows a readable diff.
  json::Document doc = json::parse({compact.GetString(), compact.GetSize()}, "provider matrix");
  rapidjson::StringBuffer pretty;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> pw(pretty);
  pw.SetIndent(' ', 2);
  doc.Accept(pw);
  return std::string(pretty.GetString(), pretty.GetSize()) + "\n";
}

std::string matrix_skeleton() {
  return fmt::format("# Providers\n\n{}\n{}\n", kMatrixMarkers.begin, kMatrixMarkers.end);
}

}  // namespace corral::docs
