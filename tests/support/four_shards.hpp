// The fan-out check every remote provider's end-to-end suite runs: four shards, one of
// which fails, each in its own sandbox. The provider's test adds what its stand-in counts
// (creates and deletes).
#pragma once

#include <string>

#include "cli.hpp"

namespace corral::test {

// A shell script for `--shards 4`: each shard prints "{shard}/{shards} $CORRAL_SHARD_INDEX/
// $CORRAL_SHARD_COUNT" and the workspace's hello.txt; shard `failing` then exits `code`.
std::string four_shard_script(int failing, int code);

// Checks a run of that script: exit `code`, the failing shard named on stderr, each
// shard's "[i/4] i/4 i/4 hello from the workspace" line on stdout, and four distinct
// sandboxes in the session handle `handle_text`.
void check_four_shards(const CliResult& r, const std::string& handle_text, int failing, int code);

}  // namespace corral::test
