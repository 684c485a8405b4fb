// The command table (ninja's kTools[] is the model): adding a command is a file in
// commands/ defining its row, a line here and one in commands/commands.hpp.
#include "command.hpp"

#include "commands/commands.hpp"

namespace corral::cli {
namespace {

const Command* const kCommands[] = {
    &kRun,
    &kShell,
    &kWarmup,
    &kList,
    &kStatus,
    &kStop,
    &kUrl,
    &kExtend,
    &kPause,
    &kResume,
    &kFork,
    &kPool,
    &kPoolFill,
    &kPoolStatus,
    &kPoolDrain,
    &kUsage,
    &kMcp,
    &kDoctor,
    &kConformance,
    &kProviders,
    &kDescribe,
    &kDocs,
    &kDocsMatrix,
    &kDocsProvider,
    &kDocsAll,
    &kCompletion,
    &kVersion,
    &kComplete,
    &kRefill,
};

}  // namespace

std::span<const Command* const> command_table() { return kCommands; }

const Command* find_command(std::string_view name) {
  for (const Command* c : kCommands)
    if (c->parent.empty() && c->name == name) return c;
  return nullptr;
}

}  // namespace corral::cli
