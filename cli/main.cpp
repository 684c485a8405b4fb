// corral: run a command from your working tree in a sandbox from any provider.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <memory>
#include <optional>

#include "command_line.hpp"
#include "commands/commands.hpp"
#include "context.hpp"
#include "corral/errors.hpp"
#include "corral/os/descriptors.hpp"
#include "provider_flags.hpp"
#include "workspace/workspace.hpp"

namespace corral::cli {
namespace {

// True when -v or --verbose comes before any "--": known before parsing, so reading the
// settings can already say what it does.
bool wants_verbose(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--") break;
    if (a == "-v" || a == "--verbose") return true;
  }
  return false;
}

// The command named by the first word that is not a flag, or nullptr: known before
// parsing (a guess only where a flag's value comes first, which no top-level flag has).
const Command* first_command(const std::vector<std::string>& args) {
  auto word = std::find_if(args.begin(), args.end(), [](const std::string& a) { return !a.empty() && a[0] != '-'; });
  return word == args.end() ? nullptr : find_command(*word);
}

// True when the command needs neither settings nor plugins (`version`, `--help`), so it
// works whatever state the user's config or registries are in.
bool needs_nothing(const std::vector<std::string>& args) {
  // One that needs nothing decides before a "--", which `__complete -- WORDS...` is given.
  if (const Command* command = first_command(args); command && !command->needs_settings) return true;
  for (const std::string& a : args) {
    if (a == "--") return false;
    if (a == "-h" || a == "--help" || a == "--help-all") return true;
  }
  return args.empty();
}

// The context of this invocation with the user's and the repository's settings (none when
// `bare`), or nullptr after reporting settings corral cannot use.
// Opens /dev/null on each of descriptors 0, 1 and 2 that is closed.
void open_closed_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int null = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);  // the lowest free: fd itself
    if (null >= 0 && null != fd) ::close(null);
  }
}

std::unique_ptr<Context> open_context(bool verbose, bool bare) {
  TerminalUi early_ui(verbose);
  try {
    Config config = bare ? Config::from(std::nullopt, std::nullopt)
                         : Config::load(find_workspace_root(std::filesystem::current_path()));
    return std::make_unique<Context>(verbose, config);
  } catch (const Error& e) {
    early_ui.error(e);
  } catch (const std::exception& e) {
    early_ui.error(fmt::format("cannot read corral's settings: {}", e.what()),
                   "check ~/.config/corral/config.yaml and the repository's corral.yaml");
  }
  return nullptr;
}

// Runs the parsed command; corral's own failures become a message and their exit status.
int run_parsed(Context& ctx, const CommandLine& line) {
  try {
    if (!ctx.provider_flags.empty() && !line.command().provider_options)
      refuse_provider_flags(ctx.provider_flags, ctx.registry(), line.top_name());
    return line.runner()(ctx);
  } catch (const Error& e) {
    if (ctx.trace) ctx.trace->fail(e.what());
    ctx.ui.error(e);
    return e.exit_code();
  } catch (const std::exception& e) {
    if (ctx.trace) ctx.trace->fail(e.what());
    ctx.ui.error(fmt::format("unexpected failure: {}", e.what()), "please report this as a bug");
    return kExitInternal;
  }
}

// The operations corral traces when the environment asks (OTEL_EXPORTER_OTLP_ENDPOINT).
bool traced(const CommandLine& line) {
  const std::string name = line.top_name();
  return name == "run" || name == "warmup" || name == "fork";
}

// Runs the parsed command, traced when it is an operation corral traces and the
// environment asks for it: the trace is sent at its end, waiting for the collector a
// second at most.
int run_traced(Context& ctx, const CommandLine& line) {
  if (traced(line))
    ctx.trace = telemetry::TracedOperation::start(std::string(line.top_name()), process_env, version_number(),
                                                  [&ctx](const std::string& w) { ctx.ui.warn(w); });
  if (!ctx.trace) return run_parsed(ctx, line);
  ctx.ui.set_tracer(&ctx.trace->phases());
  const int code = run_parsed(ctx, line);
  ctx.ui.set_tracer(nullptr);
  ctx.trace->finish(code);
  return code;
}

int main_impl(int argc, char** argv) {
  // A closed stdin, stdout or stderr (`2>&-`) would be the next file corral opens, and its
  // progress and messages would land in an archive or a claim: hold /dev/null there instead.
  open_closed_standard_descriptors();
  // What the user's shell left open (`9>>file`) is not for any program corral starts.
  os::close_on_exec_from(3);
  install_signal_handlers();
  std::vector<std::string> args(argv + 1, argv + argc);
  const bool bare = needs_nothing(args);
  // git lists the working tree while the settings, the registry and the provider's
  // plugin load: it is the longest step before a sandbox is made.
  std::optional<WorkspacePrefetch> prefetch;
  if (const Command* command = first_command(args); !bare && command && command->scans_workspace) {
    try {
      prefetch.emplace(std::filesystem::current_path());
    } catch (const std::exception&) {
      // The scan lists the tree itself, and reports what stopped this.
    }
  }
  std::unique_ptr<Context> ctx = open_context(wants_verbose(args), bare);
  if (!ctx) return kExitConfig;  // a settings file corral could not use
  CommandLine line;
  try {
    if (!bare) ctx->provider_flags = take_provider_flags(args, ctx->registry(), line.reserved_flags());
  } catch (const Error& e) {
    ctx->ui.error(e);
    return e.exit_code();
  }
  if (std::optional<int> status = line.parse(std::move(args))) return *status;
  ctx->words_after_dashes = line.words_after_dashes();
  return run_traced(*ctx, line);
}

}  // namespace
}  // namespace corral::cli

int main(int argc, char** argv) { return corral::cli::main_impl(argc, argv); }
