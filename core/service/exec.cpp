#include "service/exec.hpp"

#include <fmt/format.h>

#include "base/sizes.hpp"
#include "corral/errors.hpp"
#include "lease/lease.hpp"

namespace corral::service {
namespace {

// `cwd` checked: relative, normalised, inside the workspace ("" and "." are its root).
std::string checked_cwd(const std::string& cwd) {
  if (cwd.empty() || cwd == ".") return {};
  if (auto problem = workdir_problem(cwd, /*relative_ok=*/true); problem || cwd.front() == '/')
    throw Error(ErrorCode::invalid_argument,
                fmt::format("the working folder '{}' {}", cwd, problem ? *problem : "is not relative to the workspace"),
                "give a folder relative to the sandbox's workspace, e.g. 'src' or 'tests/unit'");
  return cwd;
}

}  // namespace

int exec(Session& session, Ui& ui, const ExecSpec& spec) {
  if (spec.argv.empty() == spec.shell.empty())
    throw Error(ErrorCode::invalid_argument, spec.argv.empty() ? "no command to run" : "give a command or a shell string, not both");
  Command command;
  command.argv = spec.argv;
  command.shell = spec.shell;
  command.cwd = checked_cwd(spec.cwd);
  if (!spec.timeout.empty()) set_timeout(command, parse_duration_ms(spec.timeout));
  command.env = session.providers().forwarded_env(spec.env, [&ui](const std::string& m) { ui.warn(m); });

  LeaseContext ctx = session.context(ui);
  Lease lease = Lease::attach(ctx, spec.lease.lease, spec.lease.provider, Lease::Access::run);
  if (lease.spec().features.has(Feature::pause_resume) && lease.paused()) {
    ui.note(fmt::format("lease {} is paused; resuming it", lease.claim().slug));
    lease.resume();
  }
  return lease.exec(command).exit_code;
}

}  // namespace corral::service
