#include "plugin_host/registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>

#include "corral/errors.hpp"
#include "corral/json.hpp"
#include "corral/os/read_file.hpp"
#include "base/hash.hpp"
#include "plugin_host/isolated_plugin.hpp"
#include "base/paths.hpp"
#include "plugin_host/plugin_probe.hpp"
#include "plugin_host/registry_file.hpp"
#include "plugin_host/spec_cache.hpp"
#include "corral/os/trusted_path.hpp"

namespace fs = std::filesystem;

namespace corral {
namespace {

const char* const kListHint = "`corral providers` shows every registry entry and its status";

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

// The provider a plugin file most likely holds, by the names plugins are given
// ("libcorral-acme.so" holds "acme"): what a broken entry answers to, as nothing of
// its plugin could be read.
std::string name_from_file(const fs::path& library) {
  std::string name = library.filename().string();
  if (size_t so = name.find(".so"); so != std::string::npos) name.erase(so);
  for (std::string_view prefix : {"lib", "corral-"})
    if (name.rfind(prefix, 0) == 0 && name.size() > prefix.size()) name.erase(0, prefix.size());
  return name;
}

ProviderEntry broken(const RegistrySource& source, fs::path library, LoadFailure cause, std::string message,
                     std::string meant = {}) {
  ProviderEntry e;
  e.name = library.empty() ? source.file.filename().string() : library.filename().string();
  e.meant = !meant.empty() ? std::move(meant) : library.empty() ? std::string() : name_from_file(library);
  e.library = std::move(library);
  e.source = source;
  e.error = LoadError{cause, std::move(message)};
  return e;
}

ProbeResult failed(LoadFailure cause, std::string message) {
  ProbeResult r;
  r.error = LoadError{cause, std::move(message)};
  return r;
}

// What the plugin at `library` is, as its probe found it: from the cache when the file
// is the one probed before, else from a fresh probe. Never runs the plugin's code here.
// Sets `*sha256`, when given, to the file's sha256 once it is known.
ProbeResult inspect(const fs::path& library, const std::string& pin, const SpecCache& cache,
                    Probing probing = Probing::when_needed, std::string* sha256 = nullptr) {
  const std::string file = library.string();
  std::error_code ec;
  if (!fs::is_regular_file(library, ec)) return failed(LoadFailure::missing_file, fmt::format("plugin {}: no such file", file));
  // Untrusted files are not even probed: a child process still runs their code as you.
  os::TrustCheck trust = os::check_trusted_path(library);
  if (trust.distrust)
    return failed(LoadFailure::untrusted_file,
                  fmt::format("plugin {}: refused because {}", file, trust.distrust->describe()));
  const fs::path& real = trust.resolved;
  std::optional<FileStamp> stamp = stamp_of(real);
  if (!stamp) return failed(LoadFailure::missing_file, fmt::format("plugin {}: no such file", file));
  std::optional<CachedProbe> cached = cache.get(real);
  if (cached && cached->stamp != *stamp) cached.reset();
  if (!cached && probing == Probing::never)
    return failed(LoadFailure::not_probed, fmt::format("plugin {}: not probed yet (`corral providers` probes it)", file));
  std::string sha;
  try {
    sha = cached ? cached->sha256 : sha256_file(real);
  } catch (const std::exception& e) {
    return failed(LoadFailure::missing_file, fmt::format("plugin {}: {}", file, e.what()));
  }
  if (sha256) *sha256 = sha;
  if (!pin.empty() && pin != sha)
    return failed(LoadFailure::checksum_mismatch,
                  fmt::format("plugin {}: sha256 mismatch: the registry pins {}, the file has {}", file, pin, sha));
  if (cached) return cached->result;

  ProbeResult result = probe_plugin(real, probe_deadline());
  if (result.error && result.error->cause == LoadFailure::hung)
    result.error->message += fmt::format("; it is not tried again until the file changes or {} is removed",
                                         cache.file_for(real).string());
  // A plugin that could not be loaded for want of another library may load once that is
  // installed, without its own file changing: probe it again next time.
  const bool lasting = result.ok() || result.error->cause != LoadFailure::load_failed;
  if (lasting && stamp_of(real) == stamp) cache.put(real, {*stamp, sha, result});
  return result;
}

// One entry of a registry file and the sha256 it pins ("" when none).
struct Listed {
  ProviderEntry entry;
  std::string pin;
};

// The entry of the plugin at `library`, working or with its load error.
Listed list_plugin(const RegistrySource& source, const fs::path& library, const std::string& pin,
                   const SpecCache& cache, Probing probing) {
  std::string sha256;
  ProbeResult probed = inspect(library, pin, cache, probing, &sha256);
  if (probed.error) return {broken(source, library, probed.error->cause, probed.error->message), pin};
  ProviderSpec spec;
  try {
    spec = json::spec_from_json(probed.spec_json);
  } catch (const Error& e) {
    // The name it gives, when that much can be read, is what it answers to.
    std::string name;
    try {
      name = json::get_string(json::parse(probed.spec_json, "spec"), "name");
    } catch (const Error&) {
    }
    return {broken(source, library, LoadFailure::bad_spec,
                   fmt::format("plugin {}: invalid provider spec: {}", library.string(), e.what()), name),
            pin};
  }
  ProviderEntry e;
  e.name = spec.name;
  e.library = library;
  e.source = source;
  e.spec = std::make_shared<const ProviderSpec>(std::move(spec));
  e.plugin_version = probed.plugin_version;
  e.abi_version = probed.abi_version;
  e.sha256 = std::move(sha256);
  return {std::move(e), pin};
}

// A registry lists a few plugins: anything larger is not one.
constexpr std::uint64_t kMaxRegistryBytes = 1 << 20;

// The entries one registry file lists, each inspected (or with its error).
std::vector<Listed> read_registry(const RegistrySource& source, const SpecCache& cache, Probing probing) {
  const std::string file = source.file.string();
  os::TrustCheck trust = os::check_trusted_path(source.file);
  if (trust.distrust)
    return {{broken(source, {}, LoadFailure::untrusted_file,
                    fmt::format("registry {}: refused because {}", file, trust.distrust->describe())),
             ""}};
  std::optional<std::string> text;
  try {
    text = os::read_regular_file(trust.resolved, kMaxRegistryBytes, "registry");
  } catch (const Error& e) {
    return {{broken(source, {}, LoadFailure::bad_registry, e.what()), ""}};
  }
  if (!text) return {{broken(source, {}, LoadFailure::missing_file, fmt::format("registry {}: no such file", file)), ""}};
  // Relative paths are relative to the file as it was named, not to where a link leads.
  RegistryText parsed = parse_registry(*text, source.file);
  if (parsed.error) return {{broken(source, {}, LoadFailure::bad_registry, *parsed.error), ""}};
  std::vector<Listed> out;
  for (RegistryItem& item : parsed.items) {
    if (item.error) {
      out.push_back({broken(source, item.library, LoadFailure::bad_registry, *item.error), ""});
      continue;
    }
    out.push_back(list_plugin(source, item.library, item.sha256, cache, probing));
    out.back().entry.isolation = item.isolation;
    out.back().entry.record = item.record;
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

Registry Registry::load(const std::vector<RegistrySource>& sources, Probing probing) {
  Registry r;
  r.sources_ = sources;
  const SpecCache cache = SpecCache::standard();
  std::map<std::string, Listed> by_name;
  std::vector<Listed> broken_entries;
  for (const RegistrySource& source : sources) {
    std::error_code ec;
    if (!fs::exists(source.file, ec)) {
      broken_entries.push_back({broken(source, {}, LoadFailure::missing_file,
                                       fmt::format("registry {}: no such file", source.file.string())),
                                ""});
      continue;
    }
    for (Listed& listed : read_registry(source, cache, probing)) {
      ProviderEntry& e = listed.entry;
      if (!e.ok()) {
        // A broken entry meant to replace an earlier working one must not leave that one
        // running unnoticed: the provider is refused, naming both.
        if (auto it = by_name.find(e.meant); it != by_name.end()) {
          const ProviderEntry& earlier = it->second.entry;
          ProviderEntry refused = broken(
              source, e.library, e.error->cause,
              fmt::format("the entry for '{}' in {} is broken ({}), and corral does not fall back to the one in {}: "
                          "fix or remove the later entry",
                          e.meant, source.file.string(), e.error->message, earlier.source.file.string()),
              e.meant);
          refused.overridden = earlier.overridden;
          refused.overridden.push_back(earlier.source.file.string());
          broken_entries.push_back({std::move(refused), ""});
          by_name.erase(it);
          continue;
        }
        broken_entries.push_back(std::move(listed));
        continue;
      }
      if (auto it = by_name.find(e.name); it != by_name.end()) {
        e.overridden = it->second.entry.overridden;
        e.overridden.push_back(it->second.entry.source.file.string());
      }
      by_name.insert_or_assign(e.name, std::move(listed));
    }
  }
  for (auto& [_, listed] : by_name) {
    r.entries_.push_back(std::move(listed.entry));
    r.pins_.push_back(std::move(listed.pin));
  }
  for (auto& listed : broken_entries) {
    r.entries_.push_back(std::move(listed.entry));
    r.pins_.push_back(std::move(listed.pin));
  }
  r.plugins_.resize(r.entries_.size());
  return r;
}

const ProviderEntry* Registry::find(std::string_view name) const {
  for (const ProviderEntry& e : entries())
    if (e.ok() && e.spec->name == name) return &e;
  for (const ProviderEntry& e : entries())
    if (e.ok() && e.spec->answers_to(name)) return &e;
  return nullptr;
}

const ProviderEntry* Registry::find_broken(std::string_view name) const {
  for (const ProviderEntry& e : entries())
    if (!e.ok() && e.meant == name) return &e;
  for (const ProviderEntry& e : entries())
    if (!e.ok() && !e.library.empty() && e.library.filename().string().find(name) != std::string::npos) return &e;
  return nullptr;
}

const ProviderEntry& Registry::entry(std::string_view name) const {
  if (const ProviderEntry* found = find(name)) return *found;
  if (const ProviderEntry* broken = find_broken(name))
    throw ConfigError(fmt::format("provider '{}' could not be loaded: {}", name, broken->error->message), kListHint);
  // A registry file refused whole may be the one that lists it: what it holds is unknown,
  // though its name may tell.
  const ProviderEntry* refused = nullptr;
  for (const ProviderEntry& e : entries()) {
    if (e.ok() || !e.library.empty()) continue;
    if (e.source.file.stem().string().find(name) != std::string::npos)
      throw ConfigError(fmt::format("provider '{}' could not be loaded: {}", name, e.error->message),
                        "fix that file; " + std::string(kListHint));
    if (!refused) refused = &e;
  }
  if (refused)
    throw ConfigError(fmt::format("unknown provider '{}', and a registry that may list it was refused: {}", name,
                                  refused->error->message),
                      "fix that file; " + std::string(kListHint));
  std::vector<std::string> available = names();
  throw Error(ErrorCode::invalid_argument, fmt::format("unknown provider '{}'", name),
              available.empty() ? "no providers are installed; check `corral providers`"
                                : fmt::format("available providers: {}", fmt::join(available, ", ")));
}

size_t Registry::index_of(const ProviderEntry& entry) const {
  if (&entry >= entries_.data() && &entry < entries_.data() + entries_.size())
    return static_cast<size_t>(&entry - entries_.data());
  auto same = [&](const ProviderEntry& e) {  // a copy of one of ours
    return e.name == entry.name && e.library == entry.library && e.source.file == entry.source.file;
  };
  size_t i = static_cast<size_t>(std::find_if(entries_.begin(), entries_.end(), same) - entries_.begin());
  if (i == entries_.size())
    throw Error(ErrorCode::internal, fmt::format("provider entry '{}' is not from this registry", entry.name));
  return i;
}

namespace {

// Throws unless the entry's probe found a working plugin.
void require_ok(const ProviderEntry& e) {
  if (!e.ok())
    throw ConfigError(fmt::format("provider '{}' could not be loaded: {}", e.name, e.error->message), kListHint);
}

// Names, options and secrets were decided from the probe's spec: the code that runs must
// be the code that was probed. Throws ConfigError when `where` describes it otherwise.
void require_as_probed(const ProviderEntry& e, const ProviderSpec& spec, const std::string& version,
                       std::uint32_t abi, const char* where) {
  const char* changed = json::to_json(spec) != json::to_json(*e.spec) ? "provider spec"
                        : version != e.plugin_version                 ? "plugin version"
                        : abi != e.abi_version                        ? "ABI version"
                                                                      : nullptr;
  if (changed)
    throw ConfigError(fmt::format("plugin {}: its {} in {} differs from the one its probe reported",
                                  e.library.string(), changed, where),
                      "a plugin must describe itself the same way every time; if the file was just replaced, "
                      "run the command again");
}

}  // namespace

std::shared_ptr<const Plugin> Registry::plugin(const ProviderEntry& entry) const {
  // A fan-out opens its shards' sessions from several threads: load each plugin once.
  static std::mutex loading;
  std::lock_guard guard(loading);
  const size_t i = index_of(entry);
  if (plugins_[i]) return plugins_[i];
  const ProviderEntry& e = entries_[i];
  require_ok(e);
  LoadResult loaded = load_plugin(e.library, LoadOptions{pins_[i], true});
  if (!loaded.plugin) throw ConfigError(loaded.error->message, kListHint);
  require_as_probed(e, loaded.plugin->spec(), loaded.plugin->version(), loaded.plugin->table().abi_version,
                    "this process");
  plugins_[i] = std::move(loaded.plugin);
  return plugins_[i];
}

std::unique_ptr<PluginInstance> Registry::instance(const ProviderEntry& entry) const {
  const size_t i = index_of(entry);
  const ProviderEntry& e = entries_[i];
  const IsolationSettings& how = entry.isolation;  // a copy may ask otherwise (conformance)
  if (how.mode == Isolation::in_process) return in_process_instance(plugin(e), how);
  require_ok(e);
  // The checks the registry made when it listed the entry, made again now that the
  // helper is about to start: the file may have changed since (the helper checks too).
  ProbeResult now = inspect(e.library, pins_[i], SpecCache::standard());
  if (now.error) throw ConfigError(now.error->message, kListHint);
  HelperHello hello;
  std::unique_ptr<PluginInstance> instance = isolated_instance(e.library, pins_[i], how, hello);
  require_as_probed(e, instance->spec(), hello.plugin_version, hello.abi_version, "its helper process");
  return instance;
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  for (const ProviderEntry& e : entries())
    if (e.ok()) out.push_back(e.name);
  return out;
}

}  // namespace corral
