#include "provider.hpp"

#include <cctype>
#include <optional>
#include <random>

#include <corral/sdk/download.hpp>
#include <corral/os/process.hpp>
#include <corral/sdk/shell.hpp>
#include <corral/sdk/sync.hpp>
#include <corral/wire.hpp>
#include <fmt/format.h>

#include "spec.hpp"
#include "ssh_errors.hpp"

namespace corral_ssh {
namespace {

using corral::Error;
using corral::ErrorCode;
using corral::Sandbox;
using corral::sdk::Host;

// How much of a failed script's stderr explains it: the end; the rest is noise.
constexpr size_t kKeptErrorBytes = 4096;

// `bytes` random bytes as hex: names for leases created without a lease id and for runs.
std::string random_hex(int bytes) {
  std::random_device random;
  std::string out;
  for (int i = 0; i < bytes; ++i) out += fmt::format("{:02x}", random() & 0xff);
  return out;
}

// A variable name the remote shell can export: the value is quoted, the name cannot be.
void check_env_name(const std::string& name) {
  bool ok = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
  for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!ok)
    throw Error(ErrorCode::invalid_argument, fmt::format("'{}' is not an environment variable name", name),
                "pass variables named with letters, digits and '_' only");
}

// A size for a progress line.
std::string megabytes(std::uint64_t bytes) { return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6); }

// Why a script failed, for a message: the last line of its stderr, or its exit code.
std::string failure(const SshCaptured& r) {
  std::string_view tail = r.err;
  if (tail.size() > kKeptErrorBytes) tail.remove_prefix(tail.size() - kKeptErrorBytes);
  std::string why = gist(tail);
  return why.empty() ? fmt::format("exit {}", r.exit_code) : fmt::format("exit {}: {}", r.exit_code, why);
}

// A control step the user may interrupt with Ctrl-C, bounded like every control step.
SshCall interruptible(const Host& host) {
  return {"/dev/null", [&host] { return host.cancelled(); }, kControlTimeoutSeconds};
}

// A control step that must finish after a Ctrl-C too: it is how the interruption takes
// effect (stopping the remote command, removing the lease).
SshCall uninterruptible() { return {"/dev/null", {}, kControlTimeoutSeconds}; }

}  // namespace

SshProvider::SshProvider(const corral::sdk::Options& options) : settings_(Settings::from(options)), ssh_(settings_) {}

LeaseFolder SshProvider::folder(const std::string& id) const {
  if (!is_lease_id(id))
    throw Error(ErrorCode::invalid_argument, fmt::format("'{}' is not an ssh lease id", id),
                "lease ids are letters, digits, '-' and '_'; `corral list` shows them");
  return LeaseFolder(settings_.remote_root, id);
}

Sandbox SshProvider::to_sandbox(const std::string& id, const LeaseRecord& record) const {
  Sandbox s;
  s.id = id;
  s.state = "ready";  // a folder on a running host: there is no other state to report
  s.labels = record.labels;
  s.details["host"] = settings_.host;
  s.details["remoteWorkspace"] = folder(id).workspace();
  return s;
}

std::vector<corral::DoctorCheck> SshProvider::doctor(const Host& host) {
  std::vector<corral::DoctorCheck> checks;
  corral::DoctorCheck client{"ssh client", false, "", ""};
  const std::string path = corral::os::find_program("ssh");
  client.ok = !path.empty();
  client.detail = client.ok ? path : "no 'ssh' on PATH";
  if (!client.ok) client.hint = "install the OpenSSH client (Debian/Ubuntu: apt-get install openssh-client)";
  checks.push_back(client);
  if (!client.ok) return checks;

  corral::DoctorCheck login{"host " + settings_.host, false, "", ""};
  try {
    SshCaptured r = ssh_.capture("log in", missing_tools(), interruptible(host));
    std::string missing;
    for (char c : r.out) missing += c == '\n' ? ' ' : c;
    while (!missing.empty() && missing.back() == ' ') missing.pop_back();
    login.ok = r.exit_code == 0 && missing.empty();
    if (login.ok) {
      login.detail = "logged in; tar, gzip and setsid are there";
    } else if (r.exit_code != 0) {
      login.detail = "logged in, but the tool check failed (" + failure(r) + ")";
    } else {
      login.detail = "logged in, but the host lacks: " + missing;
      login.hint = "install them on the host (setsid comes with util-linux)";
    }
  } catch (const Error& e) {
    login.detail = e.what();
    login.hint = e.hint();
  }
  checks.push_back(login);
  return checks;
}

Sandbox SshProvider::create(const corral::CreateRequest& request, const Host& host) {
  const LeaseFolder lease = folder(request.lease_id.empty() ? "ssh-" + random_hex(6) : request.lease_id);
  LeaseRecord record{request.labels};
  host.progress(fmt::format("creating lease folder {} on {}", lease.dir(), settings_.host));
  SshCaptured r = ssh_.capture("create the lease folder", create_lease(lease, to_line(record)), interruptible(host));
  if (r.exit_code == kLeaseExists)
    throw Error(ErrorCode::internal, fmt::format("lease folder {} already exists on {}", lease.dir(), settings_.host),
                "another corral may use it; `corral list --remote --provider ssh` shows the leases there");
  if (r.exit_code != 0)
    throw Error(ErrorCode::unavailable,
                fmt::format("cannot create lease folder {} on {} ({})", lease.dir(), settings_.host, failure(r)),
                fmt::format("the account must be able to write {} (--ssh-remote-root)", settings_.remote_root));
  return to_sandbox(lease.id(), record);
}

Sandbox SshProvider::get(const std::string& id, const Host& host) {
  const LeaseFolder lease = folder(id);
  SshCaptured r = ssh_.capture("read the lease record", read_record(lease), interruptible(host));
  if (r.exit_code == kLeaseMissing)
    throw Error(ErrorCode::not_found, fmt::format("no lease folder {} on {}", lease.dir(), settings_.host));
  if (r.exit_code != 0)
    throw Error(ErrorCode::unavailable,
                fmt::format("cannot read lease record {} on {} ({})", lease.record(), settings_.host, failure(r)));
  return to_sandbox(id, record_from_output(r.out));
}

std::vector<Sandbox> SshProvider::list(const corral::StringMap& labels, const Host& host) {
  SshCaptured r = ssh_.capture("list the lease folders", list_leases(settings_.remote_root), interruptible(host));
  if (r.exit_code != 0)
    throw Error(ErrorCode::unavailable,
                fmt::format("cannot list {} on {} ({})", settings_.remote_root, settings_.host, failure(r)));
  std::vector<Sandbox> out;
  for (const ListedLease& listed : parse_listing(r.out))
    if (corral::wire::labels_match(listed.record.labels, labels)) out.push_back(to_sandbox(listed.id, listed.record));
  return out;
}

void SshProvider::destroy(const Sandbox& sandbox, const Host& host) {
  const LeaseFolder lease = folder(sandbox.id);
  host.progress(fmt::format("removing lease folder {} on {}", lease.dir(), settings_.host));
  // core destroys an unkept lease after a Ctrl-C too: this must then still finish.
  SshCaptured r = ssh_.capture("remove the lease folder", destroy_lease(lease), uninterruptible());
  if (r.exit_code != 0)
    throw Error(ErrorCode::unavailable,
                fmt::format("cannot remove lease folder {} on {} ({})", lease.dir(), settings_.host, failure(r)));
}

void SshProvider::upload(const Sandbox& sandbox, const corral::UploadRequest& request, const Host& host) {
  const LeaseFolder lease = folder(sandbox.id);
  for (const std::string& path : request.removed)
    corral::join_workspace_path(lease.workspace(), path);  // refuses "..", "/x"
  std::vector<std::vector<std::string>> batches = corral::sdk::removal_batches(request.removed, kRemovalBatchBytes);
  host.progress(fmt::format("uploading the workspace ({}) to {}", megabytes(request.size), settings_.host));

  // The archive is ssh's stdin: one connection carries it and unpacks it, with the first
  // batch of removals; more batches (thousands of deleted files) take one call each.
  SshCall call{request.archive_path, [&] { return host.cancelled(); }, 0};
  SshCaptured r = ssh_.capture(
      "upload the workspace", unpack_workspace(lease, batches.empty() ? std::vector<std::string>{} : batches[0]), call);
  if (r.exit_code != 0)
    throw Error(
        ErrorCode::unavailable,
        fmt::format("unpacking the workspace into {} on {} failed ({})", lease.workspace(), settings_.host, failure(r)),
        fmt::format("the host needs sh, tar and gzip, and the account must be able to write {}",
                    settings_.remote_root));
  call.stdin_path = "/dev/null";
  for (size_t i = 1; i < batches.size(); ++i) {
    SshCaptured removed = ssh_.capture("remove deleted files", remove_paths(lease, batches[i]), call);
    if (removed.exit_code != 0)
      throw Error(ErrorCode::unavailable, fmt::format("removing files deleted locally from {} on {} failed ({})",
                                                      lease.workspace(), settings_.host, failure(removed)));
  }
}

corral::ExecResult SshProvider::exec(const Sandbox& sandbox, const corral::Command& command, const Host& host) {
  const LeaseFolder lease = folder(sandbox.id);
  std::vector<std::string> argv = command.argv;
  if (argv.empty()) {
    if (command.shell.empty()) throw Error(ErrorCode::invalid_argument, "no command to run");
    argv = {"sh", "-c", command.shell};
  }
  for (const auto& [name, value] : command.env) check_env_name(name);
  const std::string dir = corral::join_workspace_path(lease.workspace(), command.cwd);
  const std::string run_id = random_hex(8);

  corral::sdk::CommandDeadline deadline(host, command.timeout_seconds);
  corral::os::ProcessOutcome outcome = ssh_.stream(
      "run the command", run_command(lease, run_id, dir, command.env, argv),
      {"/dev/null", [&] { return deadline.stop(); }, 0}, [&](std::string_view d) { host.emit(CORRAL_STDOUT, d); },
      [&](std::string_view d) { host.emit(CORRAL_STDERR, d); });
  if (!outcome.cancelled && !outcome.timed_out) return {outcome.exit_code};

  // Stopping the local ssh does not stop the remote command: sshd does not signal it
  // when the connection drops. End its process group with a second connection.
  stop_remote_run(lease, run_id, host);
  if (deadline.timed_out())
    throw Error(ErrorCode::timeout,
                fmt::format("the command did not finish within {}; it was stopped on {}",
                            corral::format_duration(command.timeout_seconds), settings_.host),
                "raise --timeout, or run without one");
  throw Error(ErrorCode::cancelled, fmt::format("interrupted; the command was stopped on {}", settings_.host));
}

corral::DownloadResult SshProvider::download(const Sandbox& sandbox, const corral::DownloadRequest& request,
                                            const Host& host) {
  const LeaseFolder lease = folder(sandbox.id);
  const std::string dir = corral::join_workspace_path(lease.workspace(), request.cwd);
  host.progress(fmt::format("downloading results from {}", settings_.host));
  auto over_ssh = [&](const std::string& script, const corral::sdk::OutputSink& out,
                      const corral::sdk::OutputSink& err, const std::function<bool()>& stop) {
    corral::os::ProcessOutcome o =
        ssh_.stream("download results", "sh -c " + corral::sdk::shell_quote(script), {"/dev/null", stop, 0}, out, err);
    return corral::sdk::StreamedScript{o.exit_code, o.cancelled};
  };
  return corral::sdk::download_through_stdout(request, dir, over_ssh, [&] { return host.cancelled(); });
}

void SshProvider::stop_remote_run(const LeaseFolder& lease, const std::string& run_id, const Host& host) const {
  try {
    SshCaptured r = ssh_.capture("stop the command", stop_run(lease, run_id), uninterruptible());
    if (r.exit_code == 0) return;
    host.warn(fmt::format("could not stop the command on {} ({})", settings_.host, failure(r)));
  } catch (const Error& e) {
    host.warn(fmt::format("could not stop the command on {}: {}", settings_.host, e.what()));
  }
  host.warn(fmt::format("it may still run in {}; stopping the lease (corral stop) ends it", lease.dir()));
}

}  // namespace corral_ssh

CORRAL_PLUGIN(corral_ssh::SshProvider, "0.1.0", corral_ssh::kSpecJson)
