// The bubblewrap command line that jails one command of a local sandbox.
#pragma once

#include <string>
#include <vector>

#include "corral/types.hpp"
#include "jail_user.hpp"

namespace corral::local {

struct JailSpec {
  std::string bwrap = "bwrap";  // the bwrap executable
  std::string workspace_dir;    // folder bound read-write at `workdir`, as bwrap sees it (empty: none)
  std::string workdir = "/workspace";
  std::string tmp_dir;          // folder bound read-write at /tmp, as bwrap sees it (empty: a fresh tmpfs)
  std::string hostname;
  bool network = true;          // false: a private network namespace with only loopback
  // --network allow:: the entries its egress proxy lets it reach (run_jailed); the jail
  // itself has no network.
  std::vector<std::string> egress;
  // With egress: the secrets its proxy puts in (--secret), and a PEM file of more CAs the
  // proxy verifies their hosts with ("" = the system's store alone).
  std::vector<Secret> secrets;
  std::string egress_ca_file;
  // The jail finds the CA bundle run_jailed passes as kJailCaFd at kJailCaBundle.
  bool ca_bundle = false;
  // When corral is root: bwrap (started as `user`) joins the user namespace passed as
  // kJailUsernsFd, which maps only `user`. false: bwrap makes its own for the caller's user.
  bool join_userns = false;
  JailUser user{};  // with join_userns: the sandbox's own user (run_jailed sets it)
  // Whether bwrap reports {"exit-code": N} on kJailStatusFd once the command really started.
  bool report_status = false;
  // Where the starter's verification is remembered (open_jail_exec).
  std::string starter_verified;
};

// The descriptor numbers bwrap finds the jail's user namespace, its status pipe and the
// program it starts (corral-jail-exec, open_jail_exec()) at.
inline constexpr int kJailUsernsFd = 3;
inline constexpr int kJailStatusFd = 4;
inline constexpr int kJailExecFd = 5;
// With JailSpec::egress: the Unix socket corral-jail-exec sends its loopback listener over.
inline constexpr int kJailEgressFd = 6;
// With JailSpec::ca_bundle: the system's CAs and the jail's own egress CA, which bwrap
// copies to kJailCaBundle, and the variables that point TLS clients at it.
inline constexpr int kJailCaFd = 7;
inline constexpr const char* kJailCaBundle = "/run/corral/ca-certificates.crt";
inline constexpr const char* kCaBundleVariables[] = {"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
                                                     "CURL_CA_BUNDLE", "GIT_SSL_CAINFO"};

// The argv that runs `command` inside the jail: separate user, mount, pid, ipc and uts
// namespaces, no capabilities, no further user namespaces, its own session, system
// folders read-only, a private /tmp (the sandbox's kept one with tmp_dir), the workspace read-write (when there is one), and
// death with the parent. bwrap starts corral-jail-exec, passed as kJailExecFd, which
// becomes the command: it starts with stdin, stdout and stderr alone open, and a program
// that cannot be found or run exits 127 or 126, as in a shell.
std::vector<std::string> jail_argv(const JailSpec& jail, const Command& command);

// Empty when `workdir` may hold the workspace inside a jail; else what is wrong with it.
// It must be a clean absolute path ("/workspace", "/src/app": no ".", "..", empty or
// trailing parts) at none of the folders the jail is built of (/usr, /etc, /proc, /dev,
// /tmp, ...) or below: the workspace bound there would hide what the jail runs from.
std::string workdir_problem(const std::string& workdir);

// The command's whole environment: a few defaults plus `command.env`. Given to bwrap as
// its environment, which it passes on, so no value ever shows in an argv (`ps`).
std::vector<std::string> jail_env(const Command& command);

}  // namespace corral::local
