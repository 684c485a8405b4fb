#include "ssh_errors.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "settings.hpp"

namespace corral_ssh {
namespace {

using corral::Error;
using corral::ErrorCode;

bool mentions(std::string_view text, std::initializer_list<std::string_view> needles) {
  return std::any_of(needles.begin(), needles.end(),
                     [&](std::string_view n) { return text.find(n) != std::string_view::npos; });
}

std::string known_hosts_of(const Settings& s) {
  return s.known_hosts_file.empty() ? std::string("~/.ssh/known_hosts") : s.known_hosts_file;
}

// How known_hosts names the host: "[host]:port" off port 22.
std::string known_hosts_name(const Settings& s) {
  return s.port && s.port != 22 ? fmt::format("[{}]:{}", s.host, s.port) : s.host;
}

std::string destination(const Settings& s) {
  std::string d = s.user.empty() ? s.host : s.user + "@" + s.host;
  return s.port ? fmt::format("{} (port {})", d, s.port) : d;
}

}  // namespace

std::string gist(std::string_view text) {
  std::string last;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = std::min(text.find('\n', start), text.size());
    std::string_view line = text.substr(start, end - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    // The changed-host-key warning is a box of '@' and prose; its last line says it all.
    if (!line.empty() && line.front() != '@') last = std::string(line);
    start = end + 1;
  }
  if (last.size() > 300) last = last.substr(0, 297) + "...";
  return last;
}

Error ssh_failed(std::string_view action, std::string_view ssh_log, const Settings& s) {
  const std::string what = fmt::format("ssh could not {} on {}", action, destination(s));
  const std::string why = gist(ssh_log);
  const std::string said = why.empty() ? std::string() : ": " + why;

  // Host key problems are refused trust, not a network fault: retrying cannot help and
  // the fix is the user's, so they report as auth (exit 77) like a refused key.
  if (mentions(ssh_log, {"REMOTE HOST IDENTIFICATION HAS CHANGED", "Host key for"}))
    return Error(ErrorCode::auth, what + ": the host's key does not match the one in " + known_hosts_of(s),
                 fmt::format("if the host was really reinstalled, replace its line in {} with the key your admins "
                             "publish (`ssh-keygen -R '{}' -f {}` removes the old one); otherwise do not connect: "
                             "someone may be in the middle",
                             known_hosts_of(s), known_hosts_name(s), known_hosts_of(s)));
  if (mentions(ssh_log, {"Host key verification failed", "host key is known"}))
    return Error(
        ErrorCode::auth, what + ": the host's key is not in " + known_hosts_of(s),
        fmt::format("add the host's public key to {} as a '{} <type> <key>' line (get it from your "
                    "admins, or `ssh-keyscan{} {}` on a trusted network checked against the fingerprint "
                    "they publish), or point --ssh-known-hosts-file at a file that has it",
                    known_hosts_of(s), known_hosts_name(s), s.port ? fmt::format(" -p {}", s.port) : "", s.host));
  if (mentions(ssh_log, {"UNPROTECTED PRIVATE KEY FILE", "bad permissions"}))
    return Error(ErrorCode::auth, what + ": ssh ignores a private key that others can read",
                 fmt::format("chmod 600 {}", s.identity_file.empty() ? "<your key file>" : s.identity_file));
  if (mentions(ssh_log, {"Permission denied", "Too many authentication failures", "no more authentication methods",
                         "Authentication failed"}))
    return Error(ErrorCode::auth, what + said,
                 "check --ssh-user and --ssh-identity-file (or your ~/.ssh/config), and that the key's public half is "
                 "in the account's ~/.ssh/authorized_keys; with a passphrase-protected key load it into ssh-agent "
                 "and set --ssh-use-agent");
  if (mentions(ssh_log, {"Could not resolve hostname", "Name or service not known"}))
    return Error(ErrorCode::unavailable, what + said, "check --ssh-host (or CORRAL_SSH_HOST) and your DNS");
  if (mentions(ssh_log, {"Connection refused", "Connection timed out", "No route to host", "Network is unreachable",
                         "Operation timed out", "Connection reset", "Connection closed", "closed by remote host",
                         "Timeout, server"}))
    return Error(ErrorCode::unavailable, what + said,
                 "check that the host is up and sshd listens on the port (--ssh-port), and that no firewall or VPN "
                 "is in the way; `ssh -v` to the same host shows where it stops");
  return Error(ErrorCode::unavailable, what + (said.empty() ? " (ssh exited 255 without saying why)" : said),
               "try `ssh -v` to the same host with the same settings to see where it fails");
}

}  // namespace corral_ssh
