// `corral run` and `corral warmup`.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fmt/format.h>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "hash.hpp"
#include "workspace.hpp"

namespace fs = std::filesystem;

namespace corral::cli {
namespace {

RunRequest to_request(const RunArgs& args) {
  RunRequest r;
  r.choice = args.choice;
  r.lease = args.lease;
  r.keep = args.keep;
  r.keep_on_failure = args.keep_on_failure;
  r.env_names = args.env;
  r.max_workspace = parse_size(args.max_workspace);
  r.cwd = fs::current_path();
  if (!args.timeout.empty()) r.command.timeout_seconds = parse_duration(args.timeout);
  if (!args.shell.empty() && !args.command.empty())
    throw Error(ErrorCode::invalid_argument, "give either --shell 'COMMAND' or a command after --, not both");
  if (!args.shell.empty()) r.command.shell = args.shell;
  else r.command.argv = args.command;
  return r;
}

// Writes the handle where --lease-output asked, atomically so a reader never sees half.
void write_handle(const std::string& path, const SessionHandle& handle) {
  fs::path target = path;
  fs::path temp = target.parent_path() / fmt::format(".{}.{}.tmp", target.filename().string(), random_hex(4));
  std::string text = handle_to_json(handle);
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  if (fd >= 0) ::close(fd);
  if (!ok || ::rename(temp.c_str(), target.c_str()) != 0) {
    ::unlink(temp.c_str());
    throw Error(ErrorCode::internal, fmt::format("cannot write the session handle to {}", path),
                "check that --lease-output names a writable file");
  }
}

}  // namespace

int run_command(Context& ctx, const RunArgs& args) {
  if (args.command.empty() && args.shell.empty())
    throw Error(ErrorCode::invalid_argument, "no command to run",
                "write the command after --, e.g. `corral run -- make test`, or use --shell 'make && make test'");
  RunResult result = ctx.engine.run(to_request(args));
  if (result.handle) {
    const SessionHandle& h = *result.handle;
    if (!args.lease_output.empty()) {
      try {
        write_handle(args.lease_output, h);
      } catch (const Error& e) {
        ctx.ui.error(e);
        if (!result.error && result.exit_code == 0) result.exit_code = kExitInternal;
      }
    }
    if (result.error) ctx.ui.error(*result.error);
    if (h.kept && !h.reused)
      ctx.ui.note(fmt::format("kept sandbox {} (lease {}): rerun with --id {}; stop with `{}`", h.slug, h.lease_id,
                              h.slug, h.cleanup_command));
  } else if (result.error) {
    ctx.ui.error(*result.error);
  }
  return result.exit_code;
}

int warmup_command(Context& ctx, const RunArgs& args) {
  SessionHandle handle = ctx.engine.warmup(to_request(args));
  if (!args.lease_output.empty()) write_handle(args.lease_output, handle);
  ctx.ui.out(handle_to_json(handle));
  return 0;
}

}  // namespace corral::cli
