#include "commands/run_options.hpp"

#include <filesystem>

#include "corral/errors.hpp"
#include "options.hpp"
#include "terminal.hpp"
#include "progress_board.hpp"

namespace corral::cli {

void add_sandbox_options(CLI::App& app, SandboxOptions& o) {
  add_provider_option(app, o.spec.provider.provider);
  app.add_option("--lease-output", o.lease_output, "Write the session handle JSON to FILE");
  app.add_option("--env", o.spec.env,
                 "Forward this environment variable, or set it: NAME=VALUE (repeatable; a secret of a provider is "
                 "never forwarded)")
      ->allow_extra_args(false)
      ->type_name("NAME[=VALUE]");
  app.add_option("--env-file", o.spec.env_files,
                 "Set the variables of this file of NAME=VALUE lines ('#' comments; repeatable; --env wins)")
      ->allow_extra_args(false)
      ->type_name("FILE");
  app.add_option("--max-workspace", o.spec.max_workspace, "Refuse a workspace above SIZE (0 = no limit)")
      ->capture_default_str();
  app.add_flag("--git", o.spec.git,
               "Send the checkout's .git folder too, for tools that read it (git describe, setuptools-scm)");
  app.add_option("--network", o.spec.network,
                 "What the new sandbox may reach: open, none, or allow:HOST[,HOST...] (domains, IPs, CIDRs)")
      ->type_name(kNetworkValue);
  app.add_option("--idle", o.spec.idle,
                 "What a kept sandbox does once idle for its timeout, where the provider can: pause or stop "
                 "(instead of being deleted)")
      ->check(CLI::IsMember({"pause", "stop"}));
  add_progress_option(app, o.progress);
}

void finish_sandbox_options(Context& ctx, SandboxOptions& o) {
  ctx.ui.set_progress_mode(parse_progress_mode(o.progress));
  o.spec.provider.option_flags = ctx.provider_flags;
  o.spec.cwd = std::filesystem::current_path();
}

void write_early(const OutputFile& output, const std::string& text) {
  try {
    output.write(text);
  } catch (const Error&) {
  }
}

void write_final(Context& ctx, const OutputFile& output, const std::string& text, int& exit_code, bool failed) {
  try {
    output.write(text, stop_requested);
  } catch (const Error& e) {
    ctx.ui.error(e);
    if (!failed && exit_code == 0) exit_code = e.exit_code();
  }
}

}  // namespace corral::cli
