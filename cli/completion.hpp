// Shell completion: what to offer for the word being typed, walked from the same CLI11
// app as --help (commands, their flags, the values some options take) plus what only the
// user's machine knows (providers and their option flags, kept leases), read when asked.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

#include "lease/claims.hpp"
#include "plugin_host/registry.hpp"

namespace corral::cli {

// Where completion reads the user's providers and leases; each is called only when the
// word being typed can be one of them.
struct CompletionSources {
  std::function<const Registry&()> registry;
  std::function<std::vector<std::string>()> leases;  // kept leases' slugs and ids
};

// The words that may replace the last of `words` (the line after `corral` up to the
// cursor, split the way the shell did, the last possibly empty), each beginning with it,
// sorted. Empty when only the shell's own (file names) fit.
std::vector<std::string> complete_words(const CLI::App& app, const std::vector<std::string>& words,
                                        const CompletionSources& sources);

// The kept leases' slugs and ids in `claims`, read from its folder without locking or
// writing anything; corrupt claim files are passed over in silence.
std::vector<std::string> kept_lease_names(const ClaimStore& claims);

}  // namespace corral::cli
