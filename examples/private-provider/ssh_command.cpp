#include "ssh_command.hpp"

#include <corral/errors.hpp>
#include <corral/os/temp_file.hpp>
#include <fmt/format.h>

#include "ssh_errors.hpp"

namespace corral_ssh {
namespace {

using corral::Error;
using corral::ErrorCode;

// ssh exits 255 when it fails itself; a remote command may exit 255 too, so the log
// decides: ssh writes its errors there (-E), never the remote command.
constexpr int kSshFailed = 255;

// A path as an ssh_config value: quoted (paths may hold spaces) and with '%' doubled
// (ssh expands %-tokens in file names). Settings refuse '"' and control characters.
std::string config_path(const std::string& path) {
  std::string out = "\"";
  for (char c : path) {
    if (c == '%') out += '%';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::vector<std::string> SshClient::argv(const std::string& remote_command, const std::string& log_path) const {
  std::vector<std::string> a = {
      "ssh",
      "-T",              // no terminal: stdout and stderr stay two streams, bytes pass untouched
      "-E", log_path,    // ssh's own messages, apart from the command's stderr
      "-o", "LogLevel=ERROR",
      "-o", "BatchMode=yes",              // never prompt: corral runs unattended
      "-o", "StrictHostKeyChecking=yes",  // an unknown or changed host key is refused, never added
      "-o", "UpdateHostKeys=no",          // the known-hosts file is the user's to change
      "-o", "IdentitiesOnly=yes",         // offer only the configured key, not every key an agent holds
      // One connection per call, and only ours: a ControlMaster from ~/.ssh/config would
      // apply another connection's options, and a ControlPersist master keeps our output
      // pipes open long after the command ended.
      "-o", "ControlPath=none",
      // Nothing beyond the command: no forwarded ports, agent or X11, no LocalCommand.
      "-o", "ClearAllForwardings=yes",
      "-o", "ForwardAgent=no",
      "-o", "ForwardX11=no",
      "-o", "PermitLocalCommand=no",
      "-o", "ConnectTimeout=15",
      // A host that vanishes mid-run is noticed within a minute instead of never.
      "-o", "ServerAliveInterval=15",
      "-o", "ServerAliveCountMax=4",
  };
  if (!settings_.known_hosts_file.empty()) {
    // The chosen file alone decides which host keys are trusted.
    a.insert(a.end(), {"-o", "UserKnownHostsFile=" + config_path(settings_.known_hosts_file), "-o",
                       "GlobalKnownHostsFile=/dev/null"});
  }
  if (!settings_.identity_file.empty())
    a.insert(a.end(), {"-o", "IdentityFile=" + config_path(settings_.identity_file)});
  if (settings_.port) a.insert(a.end(), {"-p", std::to_string(settings_.port)});
  if (!settings_.user.empty()) a.insert(a.end(), {"-l", settings_.user});
  // "--" ends ssh's options; after the host, ssh sends the command line as it is.
  a.insert(a.end(), {"--", settings_.host, remote_command});
  return a;
}

corral::os::ProcessSpec SshClient::spec(const std::string& remote_command, const std::string& log_path,
                                         const std::string& stdin_path) const {
  corral::os::ProcessSpec spec;
  spec.argv = argv(remote_command, log_path);
  spec.stdin_path = stdin_path;
  // env stays unset: ssh starts from the SDK's baseline environment, so none of corral's
  // variables (API keys, tokens) reach it or, through SendEnv, the host. ssh finds
  // ~/.ssh through the password database, not $HOME. The agent socket only on request.
  if (settings_.use_agent) spec.inherit = {"SSH_AUTH_SOCK"};
  return spec;
}

SshCaptured SshClient::capture(std::string_view action, const std::string& remote_command, const SshCall& call) const {
  SshCaptured captured;
  auto outcome = stream(
      action, remote_command, call, [&](std::string_view d) { captured.out.append(d); },
      [&](std::string_view d) { captured.err.append(d); });
  if (outcome.cancelled) throw Error(ErrorCode::cancelled, fmt::format("interrupted while trying to {}", action));
  if (outcome.timed_out)
    throw Error(ErrorCode::timeout,
                fmt::format("ssh to {} did not {} within {}", settings_.host, action,
                            corral::format_duration(call.timeout_seconds)),
                "check that the host is reachable and not overloaded");
  captured.exit_code = outcome.exit_code;
  return captured;
}

corral::os::ProcessOutcome SshClient::stream(std::string_view action, const std::string& remote_command,
                                              const SshCall& call, const corral::os::OutputFn& on_stdout,
                                              const corral::os::OutputFn& on_stderr) const {
  corral::os::TempFile log("ssh");  // ssh -E writes its own diagnostics here, apart from the output
  corral::os::ProcessOutcome outcome;
  try {
    outcome = corral::os::run_process(spec(remote_command, log.path(), call.stdin_path), on_stdout, on_stderr,
                                       call.stop, call.timeout_seconds);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::not_found) throw;
    throw Error(ErrorCode::unavailable, "cannot find the OpenSSH client 'ssh' on PATH",
                "install it (Debian/Ubuntu: apt-get install openssh-client)");
  }
  if (!outcome.cancelled && !outcome.timed_out && outcome.exit_code == kSshFailed) {
    std::string ssh_log = log.read();
    if (!ssh_log.empty()) throw ssh_failed(action, ssh_log, settings_);
  }
  return outcome;
}

}  // namespace corral_ssh
