// The capability matrix: every provider the registries load, described from its own
// spec (the single source of truth), as Markdown for people and JSON for tools. Pure
// functions of the specs, so the output is deterministic and can be checked in CI.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "corral/types.hpp"
#include "plugin_host/registry.hpp"

namespace corral::docs {

// The page a provider's row links to, relative to the matrix file ("e2b.md").
std::string page_file(const ProviderSpec& spec);

// Throws ConfigError naming the provider, its plugin `library` and each field of
// spec_problems(), when there are any.
void require_documented(const ProviderSpec& spec, const std::filesystem::path& library);

// The specs of every loaded provider, sorted by name. Throws ConfigError listing every
// registry entry that failed to load (an unknown feature is the loader's bad-spec error)
// and every spec problem, each naming the plugin: a matrix with a silent hole is worse
// than none.
std::vector<ProviderSpec> documented_specs(const std::vector<ProviderEntry>& entries);

// How the workspace reaches the sandbox: "archive", "mount", both, or "none".
std::string workspace_sync(const FeatureSet& features);
// What happens to a sandbox over time, from the features ("kept and reused, extendable").
std::string lifecycle(const ProviderSpec& spec);
// What the features mean with this provider, from its spec's docs: "isolation: ...;
// pause: ...; fork: ...; network: ...", each of the last three only with its feature,
// "not stated" where the spec says nothing.
std::string meanings(const ProviderSpec& spec);
// How a secret option is supplied: its env vars, or its flag when it has none.
std::vector<std::string> secret_sources(const OptionSpec& option, const ProviderSpec& spec);
// The authentication cell: each secret option's sources, or "none".
std::string authentication(const ProviderSpec& spec);
// `text` made safe for one Markdown table cell: pipes escaped, newlines flattened, and
// '<' outside code spans written as an entity so it cannot open an HTML tag.
std::string cell(std::string_view text);

// What the conformance kit showed of one provider (its verification record), for its row.
struct RowVerification {
  std::string kit;       // the corral version whose kit ran
  std::string date;      // YYYY-MM-DD
  std::string contract;  // the run contract's verdict: verified, failed, not-verified
  std::map<std::string, std::string> features;  // feature name -> verdict word
};
// Provider name -> its record; a provider missing here has none.
using Verifications = std::map<std::string, RowVerification>;

// The Markdown table with one row per spec (in the given order), each feature marked
// verified or failed from `verified`, and a legend that explains every kind, feature,
// mark and derived column once. Ends with a newline.
std::string matrix_markdown(const std::vector<ProviderSpec>& specs, const Verifications& verified = {});
// The same facts as pretty-printed JSON (with every option), ending with a newline.
std::string matrix_json(const std::vector<ProviderSpec>& specs, const Verifications& verified = {});
// A new matrix file: a title and an empty generated block to fill.
std::string matrix_skeleton();

}  // namespace corral::docs
