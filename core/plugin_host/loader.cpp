#include "plugin_host/loader.hpp"

#include <cstring>
#include <fmt/format.h>

#include "corral/json.hpp"
#include "plugin_host/crash_guard.hpp"
#include "plugin_host/elf_exports.hpp"
#include "base/hash.hpp"
#include "corral/os/trusted_path.hpp"

namespace fs = std::filesystem;

namespace corral {

std::string_view to_string(LoadFailure cause) {
  switch (cause) {
    case LoadFailure::missing_file: return "missing-file";
    case LoadFailure::untrusted_file: return "untrusted-file";
    case LoadFailure::checksum_mismatch: return "checksum-mismatch";
    case LoadFailure::not_a_library: return "not-a-library";
    case LoadFailure::missing_entry_point: return "missing-entry-point";
    case LoadFailure::load_failed: return "load-failed";
    case LoadFailure::abi_mismatch: return "abi-mismatch";
    case LoadFailure::bad_descriptor: return "bad-descriptor";
    case LoadFailure::bad_spec: return "bad-spec";
    case LoadFailure::missing_primitive: return "missing-primitive";
    case LoadFailure::crashed: return "crashed";
    case LoadFailure::hung: return "hung";
    case LoadFailure::bad_registry: return "bad-registry";
    case LoadFailure::not_probed: return "not-probed";
  }
  return "?";
}

std::optional<LoadFailure> parse_load_failure(std::string_view text) {
  for (int i = 0; i <= static_cast<int>(LoadFailure::not_probed); ++i)
    if (to_string(static_cast<LoadFailure>(i)) == text) return static_cast<LoadFailure>(i);
  return std::nullopt;
}

Plugin::Plugin(boost::dll::shared_library library, const corral_plugin_v1& table, ProviderSpec spec,
               fs::path path)
    : library_(std::move(library)), table_(table), spec_(std::move(spec)), path_(std::move(path)) {}

namespace {

LoadResult fail(LoadFailure cause, std::string message) { return {nullptr, LoadError{cause, std::move(message)}}; }

// The plugin at `file` lacks `member`, which every plugin provides.
LoadResult missing_required(const std::string& file, const std::string& provider, const char* member) {
  return fail(LoadFailure::missing_primitive,
              fmt::format("plugin {}: provider '{}' does not provide the required primitive '{}'", file, provider,
                          member));
}

}  // namespace

LoadResult load_plugin(const fs::path& path, const LoadOptions& options) {
  const std::string file = path.string();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    return fail(LoadFailure::missing_file, fmt::format("plugin {}: no such file", file));
  // Load the very file the trust check walked to, not whatever the links say later.
  fs::path target = path;
  if (options.check_permissions) {
    os::TrustCheck trust = os::check_trusted_path(path);
    if (trust.distrust)
      return fail(LoadFailure::untrusted_file,
                  fmt::format("plugin {}: refused because {}", file, trust.distrust->describe()));
    target = trust.resolved;
  }
  if (!options.expected_sha256.empty()) {
    std::string actual;
    try {
      actual = sha256_file(target);
    } catch (const std::exception& e) {
      return fail(LoadFailure::missing_file, fmt::format("plugin {}: {}", file, e.what()));
    }
    if (actual != options.expected_sha256)
      return fail(LoadFailure::checksum_mismatch,
                  fmt::format("plugin {}: sha256 mismatch: the registry pins {}, the file has {}", file,
                              options.expected_sha256, actual));
  }

  // Read the symbol table before running any of the library's code.
  try {
    if (!elf_exports(target, CORRAL_PLUGIN_ENTRY_SYMBOL))
      return fail(LoadFailure::missing_entry_point,
                  fmt::format("plugin {}: does not export '{}'; is it a corral plugin built with "
                              "CORRAL_PLUGIN(...)?",
                              file, CORRAL_PLUGIN_ENTRY_SYMBOL));
  } catch (const std::exception& e) {
    return fail(LoadFailure::not_a_library,
                fmt::format("plugin {}: not a shared library for this platform ({})", file, e.what()));
  }

  boost::dll::shared_library library;
  try {
    library.load(target, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    return fail(LoadFailure::load_failed, fmt::format("plugin {}: cannot be loaded: {}", file, e.what()));
  }
  CrashGuard::watch_terminate_of(library.native());
  auto entry = library.get<const corral_plugin_v1*()>(CORRAL_PLUGIN_ENTRY_SYMBOL);
  const corral_plugin_v1* descriptor = entry();
  if (!descriptor)
    return fail(LoadFailure::bad_descriptor, fmt::format("plugin {}: entry point returned no descriptor", file));
  if (descriptor->abi_version != CORRAL_ABI_VERSION)
    return fail(LoadFailure::abi_mismatch,
                fmt::format("plugin {}: built for plugin ABI version {}, this corral speaks version {}; "
                            "rebuild the plugin against this corral's SDK",
                            file, descriptor->abi_version, CORRAL_ABI_VERSION));
  constexpr size_t kMinimumSize = offsetof(corral_plugin_v1, exec) + sizeof(corral_call_fn);
  if (descriptor->struct_size < kMinimumSize)
    return fail(LoadFailure::bad_descriptor,
                fmt::format("plugin {}: descriptor is {} bytes, expected at least {}", file,
                            descriptor->struct_size, kMinimumSize));
  corral_plugin_v1 table{};
  std::memcpy(&table, descriptor, std::min<size_t>(descriptor->struct_size, sizeof table));
  if (!table.spec_json || !table.name)
    return fail(LoadFailure::bad_descriptor, fmt::format("plugin {}: descriptor has no name or spec", file));

  ProviderSpec spec;
  try {
    spec = json::spec_from_json(table.spec_json);
  } catch (const Error& e) {
    return fail(LoadFailure::bad_spec, fmt::format("plugin {}: invalid provider spec: {}{}", file, e.what(),
                                                   e.hint().empty() ? "" : " (" + e.hint() + ")"));
  }
  if (std::vector<std::string> problems = spec_problems(spec); !problems.empty())
    return fail(LoadFailure::bad_spec,
                fmt::format("plugin {}: provider '{}' has an incomplete spec: {} (complete the \"docs\" object: "
                            "category, location, gpu, cleanupOwner, bestFit, caveat; \"targets\"; each option's "
                            "\"help\")",
                            file, spec.name, fmt::join(problems, "; ")));
  if (spec.name != table.name)
    return fail(LoadFailure::bad_descriptor,
                fmt::format("plugin {}: descriptor name '{}' differs from spec name '{}'", file, table.name,
                            spec.name));

  const std::pair<const char*, bool> lifecycle[] = {{"open", table.open != nullptr}, {"close", table.close != nullptr}};
  for (const auto& [member, present] : lifecycle)
    if (!present) return missing_required(file, spec.name, member);
  for (const PrimitiveInfo& primitive : kPrimitives)
    if (primitive.required && !(table.*primitive.slot)) return missing_required(file, spec.name, primitive.name);
  for (Feature feature : kAllFeatures) {
    if (!spec.features.has(feature)) continue;
    for (Primitive needed : required_primitives(feature))
      if (!primitive_entry(table, needed))
        return fail(LoadFailure::missing_primitive,
                    fmt::format("plugin {}: provider '{}' advertises feature '{}' but does not provide its "
                                "primitive '{}'",
                                file, spec.name, to_string(feature), primitive_name(needed)));
  }
  return {std::make_shared<Plugin>(std::move(library), table, std::move(spec), path), std::nullopt};
}

}  // namespace corral
