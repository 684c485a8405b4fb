// `corral shell`: an interactive shell on a terminal of its own, in a kept sandbox
// (--id) or in a fresh one that goes when the shell ends (--keep keeps it).
#include "commands/commands.hpp"
#include "commands/run_options.hpp"
#include "options.hpp"

namespace corral::cli {
namespace {

// The sandbox's bash as a login shell, else its sh: what a user expects to land in.
const std::vector<std::string> kLoginShell = {
    "/bin/sh", "-c", "if command -v bash >/dev/null 2>&1; then exec bash -l; else exec sh -l; fi"};

struct ShellOptions {
  SandboxOptions sandbox;
  service::RunSpec spec;
};

Runner define(CLI::App& app) {
  auto o = std::make_shared<ShellOptions>();
  add_sandbox_options(app, o->sandbox);
  names_lease(app.add_option("--id", o->spec.lease, "Open the shell in the kept lease with this id or slug"));
  app.add_flag("--keep", o->spec.keep, "Keep a new sandbox after the shell ends");
  app.add_flag("--switch-tree", o->spec.switch_tree,
               "With --id: sync this working tree into the kept sandbox though it holds another one's");
  return [o](Context& ctx) {
    finish_sandbox_options(ctx, o->sandbox);
    o->spec.tty = true;
    o->spec.argv = ctx.words_after_dashes.empty() ? kLoginShell : ctx.words_after_dashes;
    take_terminal(o->spec);
    return run_one(ctx, o->sandbox, o->spec);
  };
}

}  // namespace

const Command kShell = {
    .name = "shell",
    .summary = "Open an interactive shell in a sandbox (a kept one with --id)",
    .details = "The shell runs on a terminal of its own, sized as yours and resized with it; every key, Ctrl-C "
               "and Ctrl-D included, goes to it. It is bash as a login shell when the sandbox has bash, else sh; "
               "a program after -- runs instead. The working tree is synced first, as for a run.\n\n"
               "Without --id the sandbox is new and goes when the shell ends, unless --keep. Needs a terminal on "
               "stdin and a provider with exec-tty (`corral providers --feature exec-tty`).",
    .exit_status = "the shell's own",
    .provider_options = true,
    .scans_workspace = true,
    .takes_words_after_dashes = true,
    .define = define,
};

}  // namespace corral::cli
