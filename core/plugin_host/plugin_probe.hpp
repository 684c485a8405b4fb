// Learns what a plugin library is (its spec, version and ABI, or why it cannot load) by
// loading it in a short-lived child process, so a plugin whose constructor or entry point
// crashes or hangs costs corral one child, never its own process (go-plugin's isolation,
// for the one moment a plugin's code runs without being asked to).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "plugin_host/loader.hpp"

namespace corral {

struct ProbeResult {
  std::string spec_json;  // the descriptor's spec text, when the plugin loaded
  std::string plugin_version;
  std::uint32_t abi_version = 0;
  std::optional<LoadError> error;  // why it did not load: a load_plugin cause, crashed or hung
  bool ok() const { return !error; }
};

// What load_plugin found, as one JSON object: the descriptor's spec, version and ABI, or
// the failure's cause and message. The probe child and the isolation helper send it.
std::string load_report(const LoadResult& loaded);
// A load_report read back; nullopt when `text` is not one (the plugin wrote to the pipe,
// or its process ended before the report was whole).
std::optional<ProbeResult> read_load_report(std::string_view text);

// How long a probe may take: $CORRAL_PLUGIN_PROBE_TIMEOUT seconds (fractions allowed),
// else 10 s; loading a plugin takes milliseconds, so only a hang comes near it.
std::chrono::milliseconds probe_deadline();

// Forks a child that loads `library` with load_plugin (trust checked, no pin) and writes
// what it found to a pipe; kills the child and its process group at `deadline`. Plugin
// code never runs in this process. Never throws.
ProbeResult probe_plugin(const std::filesystem::path& library, std::chrono::milliseconds deadline);

}  // namespace corral
