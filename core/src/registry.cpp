#include "registry.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "paths.hpp"

namespace fs = std::filesystem;

namespace corral {
namespace {

// *.yaml and *.yml files of `dir`, sorted, so "10-acme.yaml" orders before "20-x.yaml".
std::vector<fs::path> yaml_files(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    auto ext = e.path().extension();
    if ((ext == ".yaml" || ext == ".yml") && e.is_regular_file(ec)) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

ProviderEntry broken(const RegistrySource& source, fs::path library, LoadFailure cause, std::string message) {
  ProviderEntry e;
  e.name = library.empty() ? source.file.filename().string() : library.filename().string();
  e.library = std::move(library);
  e.source = source;
  e.error = LoadError{cause, std::move(message)};
  return e;
}

// The entries one registry file lists, each loaded (or with its load error).
std::vector<ProviderEntry> read_registry(const RegistrySource& source) {
  const std::string file = source.file.string();
  if (auto reason = untrusted_reason(source.file))
    return {broken(source, {}, LoadFailure::untrusted_file,
                   fmt::format("registry {}: refused because {} (fix with: chmod go-w)", file, *reason))};
  YAML::Node root;
  try {
    root = YAML::LoadFile(file);
  } catch (const YAML::Exception& e) {
    return {broken(source, {}, LoadFailure::bad_spec, fmt::format("registry {}: {}", file, e.what()))};
  }
  if (root.IsNull()) return {};
  YAML::Node plugins = root.IsMap() ? root["plugins"] : YAML::Node();
  if (!plugins || !plugins.IsSequence())
    return {broken(source, {}, LoadFailure::bad_spec,
                   fmt::format("registry {}: expected a top-level 'plugins:' list of {{path: ..., sha256: ...}}", file))};
  std::vector<ProviderEntry> out;
  for (const YAML::Node& item : plugins) {
    std::string path_text, sha;
    try {
      if (item.IsScalar()) path_text = item.as<std::string>();
      else if (item.IsMap()) {
        path_text = item["path"] ? item["path"].as<std::string>() : "";
        sha = item["sha256"] ? item["sha256"].as<std::string>() : "";
      }
    } catch (const YAML::Exception& e) {
      out.push_back(broken(source, {}, LoadFailure::bad_spec, fmt::format("registry {}: {}", file, e.what())));
      continue;
    }
    if (path_text.empty()) {
      out.push_back(broken(source, {}, LoadFailure::bad_spec,
                           fmt::format("registry {}: a plugin entry has no 'path'", file)));
      continue;
    }
    std::transform(sha.begin(), sha.end(), sha.begin(), [](unsigned char c) { return std::tolower(c); });
    fs::path library = path_text;
    if (library.is_relative()) library = (source.file.parent_path() / library).lexically_normal();
    LoadResult loaded = load_plugin(library, LoadOptions{sha, true});
    if (!loaded.plugin) {
      out.push_back(broken(source, library, loaded.error->cause, loaded.error->message));
      continue;
    }
    ProviderEntry e;
    e.name = loaded.plugin->spec().name;
    e.library = library;
    e.source = source;
    e.plugin = std::move(loaded.plugin);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

std::vector<RegistrySource> Registry::default_sources() {
  std::vector<RegistrySource> sources;
  std::error_code ec;
  fs::path shipped = paths::shipped_registry();
  if (fs::exists(shipped, ec)) sources.push_back({shipped, "shipped"});
  for (const fs::path& f : yaml_files(paths::etc_dir() / "providers.d")) sources.push_back({f, "system"});
  for (const fs::path& f : yaml_files(paths::config_dir() / "providers.d")) sources.push_back({f, "user"});
  if (const char* env = std::getenv("CORRAL_REGISTRY")) {
    std::string_view rest = env;
    while (!rest.empty()) {
      size_t colon = rest.find(':');
      fs::path p(std::string(rest.substr(0, colon)));
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
      if (p.empty()) continue;
      if (fs::is_directory(p, ec)) {
        for (const fs::path& f : yaml_files(p)) sources.push_back({f, "CORRAL_REGISTRY"});
      } else {
        sources.push_back({p, "CORRAL_REGISTRY"});
      }
    }
  }
  return sources;
}

Registry Registry::load(const std::vector<RegistrySource>& sources) {
  Registry r;
  r.sources_ = sources;
  std::map<std::string, ProviderEntry> by_name;
  std::vector<ProviderEntry> broken_entries;
  for (const RegistrySource& source : sources) {
    std::error_code ec;
    if (!fs::exists(source.file, ec)) {
      broken_entries.push_back(broken(source, {}, LoadFailure::missing_file,
                                      fmt::format("registry {}: no such file", source.file.string())));
      continue;
    }
    for (ProviderEntry& e : read_registry(source)) {
      if (!e.ok()) {
        broken_entries.push_back(std::move(e));
        continue;
      }
      if (auto it = by_name.find(e.name); it != by_name.end()) {
        e.overridden = it->second.overridden;
        e.overridden.push_back(it->second.source.file.string());
      }
      by_name.insert_or_assign(e.name, std::move(e));
    }
  }
  for (auto& [_, e] : by_name) r.entries_.push_back(std::move(e));
  for (auto& e : broken_entries) r.entries_.push_back(std::move(e));
  return r;
}

const ProviderEntry* Registry::find(std::string_view name) const {
  for (const ProviderEntry& e : entries_)
    if (e.ok() && e.plugin->spec().name == name) return &e;
  for (const ProviderEntry& e : entries_)
    if (e.ok() && e.plugin->spec().answers_to(name)) return &e;
  return nullptr;
}

const ProviderEntry* Registry::find_broken(std::string_view name) const {
  for (const ProviderEntry& e : entries_)
    if (!e.ok() && !e.library.empty() && e.library.filename().string().find(name) != std::string::npos) return &e;
  return nullptr;
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  for (const ProviderEntry& e : entries_)
    if (e.ok()) out.push_back(e.name);
  return out;
}

}  // namespace corral
