// `corral completion SHELL` prints a shell's completion script; the hidden
// `corral __complete -- WORDS...` is what those scripts ask on each TAB.
#include <fmt/format.h>

#include <memory>
#include <optional>

#include "commands/commands.hpp"
#include "completion.hpp"
#include "completion_scripts.hpp"
#include "corral/errors.hpp"
#include "options.hpp"

namespace corral::cli {
namespace {

Runner define_completion(CLI::App& app) {
  auto shell = std::make_shared<std::string>();
  app.add_option("shell", *shell, fmt::format("The shell: {}", fmt::join(completion_shells(), ", ")))
      ->type_name(kShellValue)
      ->required();
  return [shell](Context& ctx) {
    const std::optional<std::string_view> script = completion_script(*shell);
    if (!script)
      throw Error(ErrorCode::invalid_argument, fmt::format("no completion script for shell '{}'", *shell),
                  fmt::format("corral completes in {}", fmt::join(completion_shells(), ", ")));
    ctx.ui.out(*script);
    return 0;
  };
}

Runner define_complete(CLI::App& app) {
  auto words = std::make_shared<std::vector<std::string>>();
  app.add_option("words", *words, "The line after `corral` up to the cursor, split as the shell split it");
  const CLI::App* root = app.get_parent();
  return [words, root](Context& ctx) {
    words->insert(words->end(), ctx.words_after_dashes.begin(), ctx.words_after_dashes.end());
    // Runs on every TAB: it reads the registry and the spec cache and never probes a
    // plugin, and any failure leaves the line as it is without a word on the terminal.
    try {
      std::optional<Registry> registry;
      const CompletionSources sources{
          [&]() -> const Registry& {
            if (!registry) registry.emplace(Registry::load(Registry::default_sources(), Probing::never));
            return *registry;
          },
          [&] { return kept_lease_names(ctx.claims); }};
      std::string out;
      for (const std::string& w : complete_words(*root, *words, sources)) out += w + "\n";
      ctx.ui.out(out);
    } catch (const std::exception&) {
    }
    return 0;
  };
}

}  // namespace

const Command kCompletion = {
    .name = "completion",
    .summary = "Print the shell completion script for bash, zsh or fish",
    .details = "bash: source <(corral completion bash), or install it as "
               "/usr/share/bash-completion/completions/corral.\n\n"
               "zsh: corral completion zsh > \"${fpath[1]}/_corral\".\n\n"
               "fish: corral completion fish | source.",
    .needs_settings = false,
    .define = define_completion,
};

const Command kComplete = {
    .name = "__complete",
    .summary = "The words that may complete a corral command line (for the completion scripts)",
    .needs_settings = false,
    .hidden = true,
    .takes_words_after_dashes = true,
    .define = define_complete,
};

}  // namespace corral::cli
