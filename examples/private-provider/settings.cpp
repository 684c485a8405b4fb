#include "settings.hpp"

#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

namespace corral_ssh {
namespace {

using corral::Error;
using corral::ErrorCode;

// An invalid setting: `what` is wrong, and the hint names its flag and variable.
Error bad(const std::string& what, const std::string& option, const std::string& env) {
  return Error(ErrorCode::invalid_argument, what, fmt::format("set --ssh-{} (or {})", option, env));
}

// A host name, an IPv4/IPv6 address or an ssh_config alias. `user@host` is refused so the
// account is only ever chosen by --ssh-user; a leading '-' would read as an ssh option.
void check_host(const std::string& host) {
  if (host.empty())
    throw Error(ErrorCode::invalid_argument, "no SSH host is set",
                "set --ssh-host (or CORRAL_SSH_HOST) to a host name, an address or a Host alias from ~/.ssh/config");
  bool ok = host.front() != '-';
  for (char c : host)
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' || c == ':' ||
                c == '[' || c == ']' || c == '%');
  if (!ok)
    throw bad(fmt::format("SSH host '{}' is not a host name, address or alias", host), "host", "CORRAL_SSH_HOST");
}

// An account name: printable, no '/' or ':', not starting with '-'. It reaches ssh as
// the argument of -l, so nothing more is needed for safety; this only catches typos.
void check_user(const std::string& user) {
  bool ok = user.front() != '-';
  for (char c : user) ok = ok && std::isgraph(static_cast<unsigned char>(c)) && c != '/' && c != ':';
  if (!ok) throw bad(fmt::format("SSH user '{}' is not an account name", user), "user", "CORRAL_SSH_USER");
}

// ssh only warns about a missing key file and then tries other keys: a typo would surface
// as a puzzling "Permission denied". Refuse it here, naming the file.
// The path also becomes an ssh_config value in double quotes, which cannot hold '"'.
void check_readable_file(const std::string& path, const std::string& option, const std::string& env) {
  for (char c : path)
    if (c == '"' || std::iscntrl(static_cast<unsigned char>(c)))
      throw bad(fmt::format("the SSH {} '{}' contains '\"' or a control character", option, path), option, env);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec) || ::access(path.c_str(), R_OK) != 0)
    throw bad(fmt::format("the SSH {} '{}' is not a readable file", option, path), option, env);
}

}  // namespace

Settings Settings::from(const corral::sdk::Options& options) {
  Settings s;
  s.host = options.get("host");
  check_host(s.host);

  const std::int64_t port = options.get_int("port", 0);
  if (port < 0 || port > 65535)
    throw bad(fmt::format("SSH port {} is not between 1 and 65535", port), "port", "CORRAL_SSH_PORT");
  s.port = static_cast<int>(port);

  s.user = options.get("user");
  if (!s.user.empty()) check_user(s.user);

  s.identity_file = options.get("identity-file");
  if (!s.identity_file.empty()) check_readable_file(s.identity_file, "identity-file", "CORRAL_SSH_IDENTITY_FILE");
  s.known_hosts_file = options.get("known-hosts-file");
  if (!s.known_hosts_file.empty())
    check_readable_file(s.known_hosts_file, "known-hosts-file", "CORRAL_SSH_KNOWN_HOSTS_FILE");

  s.remote_root = options.get("remote-root", ".corral/leases");
  // The remote path is always quoted, so a "~/" the user wrote would not expand there:
  // relative paths already start at the login folder, which is what "~/" means.
  if (s.remote_root.rfind("~/", 0) == 0) s.remote_root.erase(0, 2);
  while (s.remote_root.size() > 1 && s.remote_root.back() == '/') s.remote_root.pop_back();
  if (auto problem = corral::workdir_problem(s.remote_root, /*relative_ok=*/true))
    throw bad(fmt::format("SSH remote root '{}' {}", s.remote_root, *problem), "remote-root", "CORRAL_SSH_REMOTE_ROOT");

  s.use_agent = options.get_bool("use-agent", false);
  return s;
}

}  // namespace corral_ssh
