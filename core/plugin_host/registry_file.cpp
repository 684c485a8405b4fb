#include "plugin_host/registry_file.hpp"

#include "base/did_you_mean.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "corral/errors.hpp"

namespace fs = std::filesystem;

namespace corral {
namespace {

constexpr std::array<std::string_view, 6> kEntryKeys = {"path",         "sha256",       "isolation",
                                                        "call-timeout", "cancel-grace", "record"};

// A registry problem, thrown inside this file only and turned into an error string.
struct Refusal {
  std::string message;
};

// The text of a scalar `key` of `item`, or nullopt when absent; anything but a single
// value is refused.
std::optional<std::string> scalar(const YAML::Node& item, std::string_view key, const std::string& where) {
  const YAML::Node node = item[std::string(key)];
  if (!node || node.IsNull()) return std::nullopt;
  if (!node.IsScalar()) throw Refusal{fmt::format("{}: '{}' must be a single value", where, key)};
  return node.Scalar();
}

// A duration key of an entry (call-timeout, cancel-grace), or `fallback`.
std::chrono::milliseconds read_limit(const YAML::Node& item, std::string_view key, const std::string& where,
                                     std::chrono::milliseconds fallback) {
  const std::optional<std::string> text = scalar(item, key, where);
  if (!text) return fallback;
  std::int64_t secs = 0;
  try {
    secs = parse_duration(*text);
  } catch (const Error& e) {
    throw Refusal{fmt::format("{}: {}: {} (e.g. 30s, 5m)", where, key, e.what())};
  }
  if (secs <= 0) throw Refusal{fmt::format("{}: {} must be above zero, not '{}'", where, key, *text)};
  return std::chrono::seconds(secs);
}

// The isolation keys of an entry. call-timeout binds only a plugin corral can kill, so
// giving it without `isolation: process` is a mistake worth saying (cancel-grace binds
// both: in-process, corral names the plugin and exits).
IsolationSettings read_isolation(const YAML::Node& item, const std::string& where) {
  IsolationSettings s;
  if (std::optional<std::string> mode = scalar(item, "isolation", where)) {
    if (*mode == to_string(Isolation::process)) s.mode = Isolation::process;
    else if (*mode != to_string(Isolation::in_process))
      throw Refusal{fmt::format("{}: isolation '{}' is not one of: in-process, process", where, *mode)};
  }
  if (item["call-timeout"] && s.mode != Isolation::process)
    throw Refusal{fmt::format("{}: call-timeout applies only to a plugin run with 'isolation: process' (corral "
                              "cannot stop a call inside its own process); add that, or remove call-timeout",
                              where)};
  s.call_timeout = read_limit(item, "call-timeout", where, s.call_timeout);
  s.cancel_grace = read_limit(item, "cancel-grace", where, s.cancel_grace);
  return s;
}

// Refuses any key of `item` that is not an entry key, naming the nearest one.
void check_keys(const YAML::Node& item, const std::string& where) {
  for (const auto& kv : item) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string("?");
    if (std::find(kEntryKeys.begin(), kEntryKeys.end(), key) != kEntryKeys.end()) continue;
    const std::optional<std::string> near = nearest(key, std::vector<std::string>(kEntryKeys.begin(), kEntryKeys.end()));
    std::string guess = near ? fmt::format(" (did you mean '{}'?)", *near) : "";
    throw Refusal{fmt::format("{}: unknown key '{}'{}; an entry takes only {}", where, key, guess,
                              fmt::join(kEntryKeys, ", "))};
  }
}

// A sha256 pin as 64 lower-case hex digits.
std::string read_pin(const YAML::Node& item, const std::string& where) {
  std::string pin = scalar(item, "sha256", where).value_or("");
  std::transform(pin.begin(), pin.end(), pin.begin(), [](unsigned char c) { return std::tolower(c); });
  if (!pin.empty() && (pin.size() != 64 || pin.find_first_not_of("0123456789abcdef") != std::string::npos))
    throw Refusal{fmt::format("{}: sha256 must be 64 hexadecimal digits (as `sha256sum` prints them), not '{}'",
                              where, pin)};
  return pin;
}

// One entry of the list.
RegistryItem read_item(const YAML::Node& item, const fs::path& file, size_t index) {
  RegistryItem out;
  std::string where = fmt::format("registry {}: entry {}", file.string(), index + 1);
  try {
    if (!item.IsScalar() && !item.IsMap())
      throw Refusal{fmt::format("{}: must be a path or a mapping with 'path:'", where)};
    // The library first, so a refused entry still says which plugin it was.
    const std::string path_text = item.IsScalar() ? item.Scalar() : scalar(item, "path", where).value_or("");
    if (path_text.empty()) throw Refusal{fmt::format("{}: has no 'path'", where)};
    out.library = path_text;
    if (out.library.is_relative()) out.library = (file.parent_path() / out.library).lexically_normal();
    if (item.IsMap()) {
      where = fmt::format("registry {}: the entry for {}", file.string(), path_text);
      check_keys(item, where);
      out.sha256 = read_pin(item, where);
      out.isolation = read_isolation(item, where);
      if (std::optional<std::string> record = scalar(item, "record", where)) {
        out.record = *record;
        if (out.record.is_relative()) out.record = (file.parent_path() / out.record).lexically_normal();
      }
    }
  } catch (const Refusal& r) {
    out.error = r.message;
  } catch (const YAML::Exception& e) {
    out.error = fmt::format("{}: {}", where, e.what());
  }
  return out;
}

}  // namespace

RegistryText parse_registry(std::string_view text, const fs::path& file) {
  RegistryText out;
  const std::string name = file.string();
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    out.error = fmt::format("registry {}: {}", name, e.what());
    return out;
  }
  if (root.IsNull()) return out;
  const char* shape = "registry {}: expected a top-level 'plugins:' list of {{path: ..., sha256: ...}}";
  if (!root.IsMap()) {
    out.error = fmt::format(fmt::runtime(shape), name);
    return out;
  }
  for (const auto& kv : root) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string("?");
    if (key != "plugins") {
      out.error = fmt::format("registry {}: unknown key '{}'; a registry has only 'plugins:'", name, key);
      return out;
    }
  }
  const YAML::Node plugins = root["plugins"];
  if (!plugins.IsSequence()) {
    out.error = fmt::format(fmt::runtime(shape), name);
    return out;
  }
  for (size_t i = 0; i < plugins.size(); ++i) out.items.push_back(read_item(plugins[i], file, i));
  return out;
}

}  // namespace corral
