// The provider model shared by corral's core and its plugins: kinds, specs, sandboxes,
// commands and the requests of the primitives; with the features (corral/features.hpp)
// and the typed error every layer reports (corral/errors.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "corral/errors.hpp"
#include "corral/features.hpp"

namespace corral {

enum class ProviderKind { delegated_run, ssh_lease, service_control };
inline constexpr std::array kAllKinds = {ProviderKind::delegated_run, ProviderKind::ssh_lease,
                                         ProviderKind::service_control};
std::string_view to_string(ProviderKind kind);
std::optional<ProviderKind> parse_kind(std::string_view name);
// One line of help per provider kind, for legends and `providers describe`.
std::string_view describe(ProviderKind kind);

// OptionSpec, DocsMeta and ProviderSpec give every member an initializer: plugins write
// specs with designated initializers, and GCC's -Wextra warns about each member left out
// that has none.

// One setting a provider accepts.
struct OptionSpec {
  std::string name{};                 // kebab-case; flag is --<provider>-<name>
  // string | int | bool | duration, or a destination: url (an endpoint), host (a domain
  // or address), path (a file or folder on this machine), program (an executable).
  // Destination options must be `trusted`; the loader refuses a spec where one is not.
  std::string type = "string";
  std::optional<std::string> default_value{};
  std::vector<std::string> env{};     // environment variables, first wins
  std::string help{};
  bool secret = false;                // never printed, logged or forwarded
  // Only a flag, the environment or the user's own config may set it, never a
  // repository's corral.yaml (endpoints: a repository must not redirect credentials).
  // Secret options are always treated so.
  bool trusted = false;
  std::vector<std::string> choices{}; // allowed values, empty = any
  // The choices are levels of isolation, tightest first (a network: none, then shared). A
  // repository's corral.yaml may only tighten: a looser choice than the one the user's
  // config or the default gives is ignored, with a warning.
  bool tightest_first = false;
};

// True for the option types a spec may use.
bool is_option_type(std::string_view type);
// True for the types that decide where requests go or what runs (url, host, path, program).
bool decides_destination(std::string_view type);

// What the capability matrix says about a provider; every field is required.
struct DocsMeta {
  std::string category{};     // e.g. "local sandbox", "cloud microVM"
  std::string location{};     // local | cloud | self-hosted
  std::string gpu{};          // e.g. "no", "yes (A100, H100)"
  std::string cleanup_owner{}; // who removes what corral leaves: "corral", "provider TTL", ...
  std::string best_fit{};
  std::string caveat{};
  std::string authentication{}; // optional: credentials the provider holds outside corral
  // Optional: what a feature means with this provider, where a yes/no hides what users
  // weigh. Each of pause, fork and network only with its feature.
  std::string isolation{};  // what keeps a command in: "Firecracker microVM", "Linux namespaces (bubblewrap)"
  std::string pause{};      // what a pause keeps: "memory and processes", "files only: processes end"
  std::string fork{};       // "one to many in one call", "one at a time"
  std::string network{};    // which policies, enforced where: "none, addresses and domains, by E2B"
};

struct ProviderSpec {
  std::string name{};
  std::vector<std::string> aliases{};
  std::string family{};
  ProviderKind kind = ProviderKind::delegated_run;
  std::vector<std::string> targets{};
  FeatureSet features{};
  std::vector<OptionSpec> options{};
  DocsMeta docs{};
  // The kIdleActions a kept sandbox can be given (--idle); "pause" needs pause-resume.
  std::vector<std::string> idle{};

  // The option named `name`, or nullptr.
  const OptionSpec* find_option(std::string_view option_name) const;
  // True when `n` is the name or one of the aliases.
  bool answers_to(std::string_view n) const;
  // The command-line flag of `option`: "--<provider>-<option>". Secret options have
  // none in practice: corral refuses them on the command line.
  std::string flag(const OptionSpec& option) const { return "--" + name + "-" + option.name; }
};

// What `spec` lacks that every provider must give (the capability matrix and `describe`
// show them), each naming the field: "docs.caveat is missing", "targets is missing",
// "options 'region': help is missing", an unknown docs.location. Empty when complete;
// the loader refuses a plugin whose spec has any.
std::vector<std::string> spec_problems(const ProviderSpec& spec);


using StringMap = std::map<std::string, std::string>;

// A provider's sandbox as core sees it. `secrets` travel from a plugin back into the
// same plugin within one process (e.g. an access token) and are never persisted or shown.
// One destination a command's connections asked for through a provider's egress proxy,
// and how often: allowed, or refused and why.
struct EgressDestination {
  std::string host;  // the name (or address) asked for
  int port = 0;
  std::int64_t count = 0;
  std::string reason;  // refused only: "not in the allow list", ...
};
// What a command tried to reach, where the provider sees it (local --network allow:).
struct EgressReport {
  std::vector<EgressDestination> allowed;
  std::vector<EgressDestination> refused;
};

struct Sandbox {
  std::string id;
  std::string state;  // provider's word: running, paused, ...
  StringMap details;  // shown by `status`, stored in the claim
  StringMap labels;
  StringMap secrets;
  // What its commands' connections asked for so far, where the provider counts them
  // (local, with --network allow:).
  std::optional<EgressReport> egress;
};

// A secret the command may use without seeing it (--secret, the user's `secrets:`): the
// command's environment holds `placeholder` under `name`, and on requests to `hosts` the
// provider's egress puts `value` where the placeholder was sent (local), or sets `header`
// to `format` with "{}" standing for the value (providers with native egress rules).
// Core reads the value from the user's side; it is never persisted, shown or logged.
struct Secret {
  std::string name;                // the variable, e.g. OPENAI_API_KEY
  std::vector<std::string> hosts;  // domains or *.domains it may be sent to, over TLS only
  std::string placeholder;         // what the sandbox sees: the value's shape, random
  std::string value;
  std::string header = "Authorization";
  std::string format = "Bearer {}";
};

struct Command {
  std::vector<std::string> argv;  // run without a shell when set
  std::string shell;              // else run through /bin/sh -c
  std::string cwd;                // relative to the workspace root; empty = root
  StringMap env;
  std::int64_t timeout_seconds = 0;  // 0 = none
  // Appended, asked of a provider with egress-secrets only: the secrets its egress puts in
  // (env already holds each one's placeholder).
  std::vector<Secret> secrets;
  // Appended, asked of a provider with exec-stdin only: the command reads the user's input
  // (the host's read_input) instead of an empty stdin.
  bool forward_stdin = false;
  // Appended, asked of a provider with exec-tty only (with forward_stdin): the command runs
  // on a terminal of its own, sized as the host's window_size says; its output is stdout.
  bool tty = false;
  // Host-side, not sent to the plugin: how long a command told to stop by a signal it was
  // passed (a provider with exec-signals) has to end before it is killed (--stop-timeout).
  std::int64_t stop_timeout_ms = 10'000;
  // Host-side: --timeout to the millisecond (set_timeout), 0 = timeout_seconds as it is.
  // The plugin keeps timeout_seconds, rounded up; corral stops a command at this itself.
  std::int64_t timeout_ms = 0;
};


struct ExecResult {
  ExecResult() = default;
  // `return {code};` from a provider's exec, as before egress was appended, without a
  // missing-initializer warning in a plugin built with -Wextra.
  ExecResult(int code) : exit_code(code) {}  // NOLINT(google-explicit-constructor)
  int exit_code = 0;
  // Appended: where the provider reports it, what the command's connections asked for.
  std::optional<EgressReport> egress;
};

// What a sandbox may reach on the network, fixed when it is created (--network).
struct NetworkPolicy {
  enum class Mode { open, none, allow };
  Mode mode = Mode::open;
  // For allow: domains ("example.com", "*.example.com") and IPv4/IPv6 addresses or CIDRs,
  // each checked by parse_network_policy.
  std::vector<std::string> allow;
  bool operator==(const NetworkPolicy&) const = default;
};
// Parses "open", "none" or "allow:HOST[:PORT][,...]"; throws invalid-argument naming the
// bad part. An allow list holds 1-64 entries, each a domain (optionally "*." in front), an
// IP address or a CIDR, with an optional port (1-65535), which only a provider with
// network-allowlist-ports takes.
NetworkPolicy parse_network_policy(std::string_view text);
// The inverse of parse_network_policy ("allow:a.com,10.0.0.0/8").
std::string to_string(const NetworkPolicy& policy);
// True when `entry` of an allow list (its host part) is an IP address or CIDR rather than
// a domain.
bool is_ip_or_cidr(std::string_view entry);
// One allow-list entry split into its host (a domain, *.domain, address or CIDR) and the
// port it names: "pypi.org", "host.corral.internal:5432", "[2001:db8::/32]:443" (an
// IPv6 host takes brackets when a port follows). Not validated beyond the split.
struct AllowEntry {
  std::string host;
  int port = 0;  // 0: none named
};
AllowEntry split_allow_entry(std::string_view entry);
// An address or CIDR as bytes and prefix length (an address: the full length).
struct Cidr {
  int family = 0;  // AF_INET or AF_INET6
  std::array<unsigned char, 16> bytes{};
  int prefix = 0;
};
// `entry` as a Cidr, or nullopt when is_ip_or_cidr refuses it.
std::optional<Cidr> parse_cidr(std::string_view entry);
// True when every address of `inner` is in `outer`.
bool cidr_within(const Cidr& inner, const Cidr& outer);

struct CreateRequest {
  std::string lease_id;
  std::string slug;
  StringMap labels;
  std::string workspace;  // local path of the working tree (for workspace-mount)
  // Enforced by the provider from the start; core asks for none or allow only of a
  // provider whose spec has network-policy or network-allowlist, and for an allow list
  // with domains only of one that also has network-allowlist-domains.
  NetworkPolicy network;
  // "" = the provider's usual end of a sandbox at its lifetime; else one of kIdleActions,
  // asked for only of a provider whose spec lists it in `idle`.
  std::string idle;
  // Appended: true when the run will release the sandbox at its end, never keep it (a
  // plain `corral run`), so the provider may hold its workspace in memory only. false (or
  // absent, from an older corral) = it may be kept: today's sandbox.
  bool ephemeral = false;
  // Appended: the most bytes the workspace may take in the sandbox (--max-workspace plus
  // a block per file), a bound for a workspace held in memory; 0 = no bound.
  std::uint64_t workspace_bytes = 0;
};

// One file of the working tree a tree-sync upload lists.
struct TreeFile {
  std::string path;         // relative to the tree's root, '/'-separated, never absolute or with ".."
  bool executable = false;  // a regular file copied with mode 0755, else 0644
  bool symlink = false;     // a symbolic link, copied as a link holding the same target
};

struct UploadRequest {
  std::string archive_path;  // a local .tar.gz of the workspace; empty for a tree-sync upload
  std::uint64_t size = 0;    // the archive's bytes; for a tree-sync upload, the files' bytes
  // Paths (relative to the workdir, '/'-separated, never absolute or with "..") that
  // were synced before and are gone locally: remove them after unpacking, so a reused
  // sandbox holds exactly the local tree plus what the sandbox itself made.
  std::vector<std::string> removed;
  // Appended, for a provider with tree-sync only: the working tree's absolute local path
  // and the files to copy from it (folders follow from the paths), instead of an archive.
  // Core lists every file, so the files and folders it does not list, and symbolic links
  // on the way to a listed file, are none of the upload's business.
  std::string tree_root;
  std::vector<TreeFile> tree_files;
};

// download: pack the files that match `patterns` into a gzip-compressed tar at the local
// `archive_path`, writing at most `max_bytes` (the SDK's DownloadFile enforces it).
struct DownloadRequest {
  std::string cwd;  // the command's folder, relative to the workspace root; empty = root
  // Shell globs relative to `cwd` ('*' stays within one path part); core has checked each:
  // not absolute, no ".." part, no control character.
  std::vector<std::string> patterns;
  std::string archive_path;
  std::uint64_t max_bytes = 0;
};
struct DownloadResult {
  std::uint64_t size = 0;             // bytes written to archive_path; 0 = nothing matched
  std::vector<std::string> missing;   // patterns that matched nothing
};

// fork: one new sandbox to make from the source's current state, as create would label it.
struct ForkTarget {
  std::string lease_id;
  std::string slug;
  StringMap labels;
};
// What became of one ForkTarget: the fork, or why it could not be made.
struct ForkOutcome {
  std::optional<Sandbox> sandbox;
  std::optional<Error> error;
};

// What a kept sandbox does once idle for its timeout (--idle), instead of being deleted.
// A provider lists in ProviderSpec::idle the ones it honours.
inline constexpr std::array<std::string_view, 2> kIdleActions = {"pause", "stop"};

struct DoctorCheck {
  std::string name;
  bool ok = false;
  std::string detail;
  std::string hint;
};

// `workdir` joined with a command's `cwd` (relative to the workspace root); "." and
// empty parts are dropped. Throws invalid-argument for an absolute cwd or any ".."
// part, so a command can never be started outside the workspace.
std::string join_workspace_path(const std::string& workdir, const std::string& cwd);

// The longest duration parse_duration accepts: 100 years. Callers turn seconds into
// nanosecond clocks and milliseconds headers; int64 nanoseconds end at 292 years.
inline constexpr std::int64_t kMaxDurationSeconds = 36500LL * 86400;
// Why `path` cannot be the sandbox folder every sync unpacks over, or nullopt when it can:
// a part that is empty, "." or "..", starts with '-' or holds a control character; or the
// root, a top-level folder or a home folder (unpacking over those would clobber a
// system). `path` is absolute, or relative to the sandbox user's home when `relative_ok`.
std::optional<std::string> workdir_problem(const std::string& path, bool relative_ok);

// Parses "90", "90s", "15m", "2h", "1h30m", "1d" into seconds; throws invalid-argument,
// also for a total above kMaxDurationSeconds (rather than overflowing).
std::int64_t parse_duration(std::string_view text);
// The same in milliseconds, also taking "500ms" and decimals ("1.5s", "0.25"), to the
// millisecond; for durations corral keeps itself (--stop-timeout).
std::int64_t parse_duration_ms(std::string_view text);
// Sets `command`'s --timeout to `ms` milliseconds (0 = none): timeout_seconds rounded up,
// which crosses the ABI, and timeout_ms, by which corral stops it to the millisecond.
void set_timeout(Command& command, std::int64_t ms);
// Formats seconds as the shortest of "45s", "15m", "2h", "1h30m".
std::string format_duration(std::int64_t seconds);
// The current time as RFC 3339 UTC ("2026-11-30T06:31:32Z").
std::string now_rfc3339();

}  // namespace corral
