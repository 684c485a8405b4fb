#include "sbx_cli.hpp"

#include "corral/types.hpp"
#include "sbx_errors.hpp"

namespace corral::docker_sandbox {

std::string SbxCli::executable() const {
  std::string path = os::find_program(cli_);
  if (path.empty()) throw sbx_missing(cli_);
  return path;
}

std::vector<std::string> SbxCli::argv(const std::vector<std::string>& args) const {
  std::vector<std::string> argv{executable()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

SbxResult SbxCli::capture(const std::vector<std::string>& args, const std::function<bool()>& cancelled) const {
  os::ProcessSpec spec;
  spec.argv = argv(args);
  spec.inherit = {"*"};  // sbx acts as the user: it needs their login, Docker context and PATH
  SbxResult r;
  os::ProcessOutcome o = os::run_process(
      spec, [&](std::string_view d) { r.out.append(d); }, [&](std::string_view d) { r.err.append(d); }, cancelled,
      timeout_, 2);
  std::string action = args.empty() ? std::string() : args[0];
  if (o.timed_out) throw sbx_timed_out(action, timeout_);
  if (o.cancelled) throw Error(ErrorCode::cancelled, "`sbx " + action + "` was interrupted");
  r.exit_code = o.exit_code;
  return r;
}

SbxResult SbxCli::run(const std::vector<std::string>& args, const std::function<bool()>& cancelled) const {
  SbxResult r = capture(args, cancelled);
  if (r.exit_code != 0) throw sbx_failed(args.empty() ? "" : args[0], r.exit_code, r.err + "\n" + r.out);
  return r;
}

os::ProcessOutcome SbxCli::stream(const std::vector<std::string>& args, const os::OutputFn& on_stdout,
                                   const os::OutputFn& on_stderr, const std::function<bool()>& cancelled,
                                   long timeout_seconds, const SbxIo& io) const {
  os::ProcessSpec spec;
  spec.argv = argv(args);
  spec.inherit = {"*"};  // as above; the command's own variables travel in sbx's env file
  spec.stdin_fd = io.stdin_fd;
  if (io.on_terminal) {
    spec.stdout_fd = io.stdin_fd;
    spec.controlling_terminal = true;
  }
  return os::run_process(spec, on_stdout, on_stderr, cancelled, timeout_seconds, 3, io.on_tick);
}

}  // namespace corral::docker_sandbox
