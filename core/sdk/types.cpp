#include "corral/types.hpp"

#include <algorithm>
#include <cctype>
#include <ctime>

#include <arpa/inet.h>

namespace corral {

std::string_view to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::internal: return "internal";
    case ErrorCode::not_found: return "not-found";
    case ErrorCode::auth: return "auth";
    case ErrorCode::invalid_argument: return "invalid-argument";
    case ErrorCode::quota: return "quota";
    case ErrorCode::unavailable: return "unavailable";
    case ErrorCode::timeout: return "timeout";
    case ErrorCode::cancelled: return "cancelled";
    case ErrorCode::unsupported: return "unsupported";
    case ErrorCode::config: return "config";
  }
  return "internal";
}

ErrorCode error_code_from_abi(int code) {
  if (code >= CORRAL_ERR_INTERNAL && code <= CORRAL_ERR_UNSUPPORTED) return static_cast<ErrorCode>(code);
  return ErrorCode::internal;
}

int exit_code_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument:
    case ErrorCode::unsupported: return kExitUsage;
    case ErrorCode::not_found: return kExitNotFound;
    case ErrorCode::auth: return kExitAuth;
    case ErrorCode::quota: return kExitQuota;
    case ErrorCode::unavailable: return kExitUnavailable;
    case ErrorCode::timeout: return kExitTimeout;
    case ErrorCode::cancelled: return kExitCancelled;
    case ErrorCode::config: return kExitConfig;
    case ErrorCode::internal: return kExitInternal;
  }
  return kExitInternal;
}

std::string_view to_string(Feature feature) {
  switch (feature) {
    case Feature::run_session: return "run-session";
    case Feature::url_bridge: return "url-bridge";
    case Feature::archive_sync: return "archive-sync";
    case Feature::workspace_mount: return "workspace-mount";
    case Feature::keep_alive: return "keep-alive";
    case Feature::cleanup: return "cleanup";
    case Feature::pause_resume: return "pause-resume";
    case Feature::run_downloads: return "run-downloads";
    case Feature::network_policy: return "network-policy";
    case Feature::network_allowlist: return "network-allowlist";
    case Feature::network_allowlist_domains: return "network-allowlist-domains";
  }
  return "?";
}

std::optional<Feature> parse_feature(std::string_view name) {
  for (Feature f : kAllFeatures)
    if (to_string(f) == name) return f;
  return std::nullopt;
}

std::string_view describe(Feature feature) {
  switch (feature) {
    case Feature::run_session:
      return "a run returns a reusable session handle; sandboxes can be kept and reused by --id";
    case Feature::url_bridge: return "a port inside the sandbox is reachable at a URL (`corral url`)";
    case Feature::archive_sync: return "the workspace is uploaded as an archive and unpacked in the sandbox";
    case Feature::workspace_mount: return "the provider mounts the local working tree; nothing is uploaded";
    case Feature::keep_alive: return "a live sandbox's lifetime can be extended (`corral extend`)";
    case Feature::cleanup: return "corral-owned sandboxes can be listed and destroyed at the provider";
    case Feature::pause_resume: return "a sandbox can be paused and resumed";
    case Feature::run_downloads: return "files the command made come back after the run (`--download`)";
    case Feature::network_policy: return "the sandbox can be cut off the network (`--network none`)";
    case Feature::network_allowlist:
      return "the sandbox can be limited to listed IP addresses and CIDRs (`--network allow:10.0.0.0/8,...`)";
    case Feature::network_allowlist_domains:
      return "the allow list also takes domains and `*.domain` wildcards (`--network allow:pypi.org,*.github.com`)";
  }
  return "";
}

std::string_view describe(ProviderKind kind) {
  switch (kind) {
    case ProviderKind::delegated_run: return "the provider runs the command itself and streams its output back; no SSH";
    case ProviderKind::ssh_lease: return "corral leases a machine from the provider and runs the command over SSH";
    case ProviderKind::service_control:
      return "corral starts and stops a service the provider hosts; commands run inside that service";
  }
  return "";
}

std::vector<std::string> FeatureSet::names() const {
  std::vector<std::string> out;
  for (Feature f : kAllFeatures)
    if (has(f)) out.emplace_back(to_string(f));
  return out;
}

std::string_view to_string(ProviderKind kind) {
  switch (kind) {
    case ProviderKind::delegated_run: return "delegated-run";
    case ProviderKind::ssh_lease: return "ssh-lease";
    case ProviderKind::service_control: return "service-control";
  }
  return "?";
}

std::optional<ProviderKind> parse_kind(std::string_view name) {
  for (ProviderKind k : kAllKinds)
    if (to_string(k) == name) return k;
  return std::nullopt;
}

bool is_option_type(std::string_view type) {
  return type == "string" || type == "int" || type == "bool" || type == "duration" || decides_destination(type);
}

bool decides_destination(std::string_view type) {
  return type == "url" || type == "host" || type == "path" || type == "program";
}

std::vector<std::string> spec_problems(const ProviderSpec& spec) {
  static constexpr std::string_view kLocations[] = {"local", "cloud", "self-hosted"};
  auto blank = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); });
  };
  std::vector<std::string> problems;
  const std::pair<const char*, const std::string*> fields[] = {
      {"docs.category", &spec.docs.category}, {"docs.location", &spec.docs.location},
      {"docs.gpu", &spec.docs.gpu},           {"docs.cleanupOwner", &spec.docs.cleanup_owner},
      {"docs.bestFit", &spec.docs.best_fit},  {"docs.caveat", &spec.docs.caveat},
  };
  for (const auto& [name, value] : fields)
    if (blank(*value)) problems.push_back(std::string(name) + " is missing");
  if (!blank(spec.docs.location) &&
      std::find(std::begin(kLocations), std::end(kLocations), spec.docs.location) == std::end(kLocations))
    problems.push_back("docs.location is '" + spec.docs.location + "', not one of local, cloud, self-hosted");
  if (spec.targets.empty()) problems.push_back("targets is missing");
  for (const OptionSpec& o : spec.options)
    if (blank(o.help)) problems.push_back("options '" + o.name + "': help is missing");
  return problems;
}

const OptionSpec* ProviderSpec::find_option(std::string_view option_name) const {
  for (const OptionSpec& o : options)
    if (o.name == option_name) return &o;
  return nullptr;
}

bool ProviderSpec::answers_to(std::string_view n) const {
  return n == name || std::find(aliases.begin(), aliases.end(), n) != aliases.end();
}

std::int64_t parse_duration(std::string_view text) {
  auto bad = [&] {
    return Error(ErrorCode::invalid_argument,
                 "invalid duration '" + std::string(text) + "'",
                 "use seconds or units like 90s, 15m, 2h, 1h30m, 1d");
  };
  auto too_long = [&] {
    return Error(ErrorCode::invalid_argument,
                 "duration '" + std::string(text) + "' is too long: the maximum is " +
                     std::to_string(kMaxDurationSeconds / 86400) + "d (100 years)",
                 "use 0 for no timeout");
  };
  if (text.empty()) throw bad();
  std::int64_t total = 0;
  bool overflow = false;  // reported after the syntax check, so junk stays "invalid"
  int terms = 0;
  size_t i = 0;
  while (i < text.size()) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) throw bad();
    std::int64_t n = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (n > kMaxDurationSeconds) overflow = true;  // n stays bounded: no int64 overflow
      else n = n * 10 + (text[i] - '0');
      ++i;
    }
    std::int64_t unit = 1;
    if (i < text.size()) {
      switch (text[i]) {
        case 's': unit = 1; break;
        case 'm': unit = 60; break;
        case 'h': unit = 3600; break;
        case 'd': unit = 86400; break;
        default: throw bad();
      }
      ++i;
    } else if (terms != 0) {
      throw bad();  // "1h30" is ambiguous
    }
    ++terms;
    if (overflow || n > (kMaxDurationSeconds - total) / unit) {
      overflow = true;
      continue;
    }
    total += n * unit;
  }
  if (overflow) throw too_long();
  return total;
}

std::string format_duration(std::int64_t seconds) {
  if (seconds <= 0) return "0s";
  if (seconds % 3600 == 0) return std::to_string(seconds / 3600) + "h";
  if (seconds > 3600 && seconds % 60 == 0)
    return std::to_string(seconds / 3600) + "h" + std::to_string(seconds % 3600 / 60) + "m";
  if (seconds % 60 == 0) return std::to_string(seconds / 60) + "m";
  return std::to_string(seconds) + "s";
}

std::optional<std::string> workdir_problem(const std::string& path, bool relative_ok) {
  if (path.empty()) return "is empty";
  const bool absolute = path.front() == '/';
  if (!absolute && !relative_ok) return "is not an absolute path";
  std::vector<std::string> parts;
  for (size_t start = absolute ? 1 : 0; start <= path.size();) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    parts.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  for (const std::string& p : parts) {
    if (p.empty() || p == "." || p == "..") return "is not a normalised path (empty, '.' or '..' parts)";
    if (p.front() == '-') return "has a part that starts with '-'";
    for (char c : p)
      if (std::iscntrl(static_cast<unsigned char>(c))) return "contains control characters";
  }
  if (!absolute) return std::nullopt;  // below the home folder: never the home itself
  if (parts.size() == 1) return "is the root or a top-level system folder";
  if (parts.size() == 2 && (parts[0] == "home" || parts[0] == "root")) return "is a home folder";
  return std::nullopt;
}

std::string join_workspace_path(const std::string& workdir, const std::string& cwd) {
  if (!cwd.empty() && cwd.front() == '/')
    throw Error(ErrorCode::invalid_argument, "the working folder '" + cwd + "' must be relative to the workspace");
  std::string out = workdir;
  size_t start = 0;
  while (start <= cwd.size()) {
    size_t end = cwd.find('/', start);
    if (end == std::string::npos) end = cwd.size();
    std::string_view part(cwd.data() + start, end - start);
    if (part == "..")
      throw Error(ErrorCode::invalid_argument, "the working folder '" + cwd + "' leaves the workspace");
    if (!part.empty() && part != ".") {
      if (!out.empty() && out.back() != '/') out += '/';
      out += part;
    }
    start = end + 1;
  }
  return out;
}

namespace {

// True for a DNS name of letters, digits and hyphens, optionally "*." in front.
bool is_domain(std::string_view name) {
  if (name.rfind("*.", 0) == 0) name.remove_prefix(2);
  if (name.empty() || name.size() > 253) return false;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('.', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view label = name.substr(start, end - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') return false;
    for (char c : label)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

bool is_ip_or_cidr(std::string_view entry) {
  std::string address(entry.substr(0, entry.find('/')));
  unsigned char buf[16];
  int max_prefix = 0;
  if (inet_pton(AF_INET, address.c_str(), buf) == 1) max_prefix = 32;
  else if (inet_pton(AF_INET6, address.c_str(), buf) == 1) max_prefix = 128;
  else return false;
  if (address.size() == entry.size()) return true;
  std::string_view prefix = entry.substr(address.size() + 1);
  if (prefix.empty() || prefix.size() > 3) return false;
  int bits = 0;
  for (char c : prefix) {
    if (c < '0' || c > '9') return false;
    bits = bits * 10 + (c - '0');
  }
  return bits <= max_prefix;
}

NetworkPolicy parse_network_policy(std::string_view text) {
  const char* hint = "use --network open, --network none or --network allow:example.com,10.0.0.0/8";
  NetworkPolicy policy;
  if (text == "open") return policy;
  if (text == "none") {
    policy.mode = NetworkPolicy::Mode::none;
    return policy;
  }
  if (text.rfind("allow:", 0) != 0)
    throw Error(ErrorCode::invalid_argument, "unknown network policy '" + std::string(text) + "'", hint);
  policy.mode = NetworkPolicy::Mode::allow;
  std::string_view list = text.substr(6);
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string_view::npos) end = list.size();
    std::string_view entry = list.substr(start, end - start);
    if (entry.empty())
      throw Error(ErrorCode::invalid_argument, "the network allow list has an empty entry", hint);
    if (!is_domain(entry) && !is_ip_or_cidr(entry))
      throw Error(ErrorCode::invalid_argument,
                  "'" + std::string(entry) + "' in the network allow list is neither a domain nor an IP address or CIDR",
                  hint);
    if (std::find(policy.allow.begin(), policy.allow.end(), entry) == policy.allow.end())
      policy.allow.emplace_back(entry);
    start = end + 1;
  }
  if (policy.allow.size() > 64)
    throw Error(ErrorCode::invalid_argument, "the network allow list has more than 64 entries",
                "allow a wider CIDR or a parent domain (*.example.com) instead");
  return policy;
}

std::string to_string(const NetworkPolicy& policy) {
  switch (policy.mode) {
    case NetworkPolicy::Mode::open: return "open";
    case NetworkPolicy::Mode::none: return "none";
    case NetworkPolicy::Mode::allow: break;
  }
  std::string out = "allow:";
  for (size_t i = 0; i < policy.allow.size(); ++i) out += (i ? "," : "") + policy.allow[i];
  return out;
}

std::string now_rfc3339() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace corral
