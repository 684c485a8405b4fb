#include "lease/secrets.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "base/env_file.hpp"
#include "corral/errors.hpp"
#include "corral/os/process.hpp"
#include "corral/os/random.hpp"
#include "corral/os/read_file.hpp"
#include "corral/sdk/printable.hpp"

namespace corral {
namespace {

// Fewer random characters than this and the placeholder could be guessed from its shape,
// or the value is no credential worth the machinery.
constexpr size_t kMinRandomChars = 8;
constexpr size_t kMaxSecretBytes = 8192;  // a header's worth; larger is a mistake

// The length of `value`'s vendor prefix: lower-case words of 1-5 letters each followed by
// '-' or '_' ("sk-", "sk-proj-", "ghp_", "xoxb-"), at most 12 bytes of it.
size_t vendor_prefix(std::string_view value) {
  size_t kept = 0;
  for (size_t at = 0; at < value.size() && at <= 12;) {
    size_t letters = 0;
    while (at + letters < value.size() && std::islower(static_cast<unsigned char>(value[at + letters]))) ++letters;
    if (letters == 0 || letters > 5 || at + letters >= value.size()) break;
    const char sep = value[at + letters];
    if (sep != '-' && sep != '_') break;
    at += letters + 1;
    if (at <= 12) kept = at;
  }
  return kept;
}

// True when `host` covers `name` as an allow-list host does: equal, or a *.domain above it.
bool host_names(const std::string& host, const std::string& name) {
  if (host == name) return true;
  if (host.rfind("*.", 0) != 0) return false;
  const std::string suffix = host.substr(1);
  return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool listed(const NetworkPolicy& policy, const std::string& name) {
  return std::any_of(policy.allow.begin(), policy.allow.end(),
                     [&](const std::string& e) { return host_names(split_allow_entry(e).host, name); });
}

constexpr long kCommandSeconds = 30;  // a password manager asking for a touch, at most

// The text of a secret's file or command: its last line break is no part of it.
std::string chomp(std::string text) {
  if (!text.empty() && text.back() == '\n') text.pop_back();
  if (!text.empty() && text.back() == '\r') text.pop_back();
  return text;
}

// The value `from` (a declaration's: env:VAR, file:PATH, command:ARGV) says, for secret
// `name`; nullopt when its variable is not set.
std::optional<std::string> read_value(const std::string& name, const std::string& from,
                                      const std::filesystem::path& config, const EnvLookup& env) {
  const auto failed = [&](const std::string& why) {
    return Error(ErrorCode::invalid_argument, fmt::format("--secret {}: {}", name, why),
                 fmt::format("check secrets.{}.from in {}", name, config.string()));
  };
  if (from.empty()) return env(name);
  if (from.rfind("env:", 0) == 0) return env(from.substr(4));
  if (from.rfind("file:", 0) == 0) {
    std::filesystem::path path = from.substr(5);
    if (path.string().rfind("~/", 0) == 0) path = env("HOME").value_or("") + path.string().substr(1);
    if (path.is_relative()) path = config.parent_path() / path;
    const std::optional<std::string> text = os::read_regular_file(path, kMaxSecretBytes + 2, "secret " + name + "'s file");
    if (!text) throw failed(fmt::format("its file {} does not exist", path.string()));
    return chomp(*text);
  }
  os::ProcessSpec spec;
  const std::string argv = from.substr(8);
  for (size_t start = argv.find_first_not_of(" \t"); start != std::string::npos;) {
    const size_t end = argv.find_first_of(" \t", start);
    spec.argv.push_back(argv.substr(start, end - start));
    start = argv.find_first_not_of(" \t", end);
  }
  if (spec.argv.empty()) throw failed("its command is empty");
  // The user's own command, on the user's side: it gets the user's environment, as in a shell.
  std::vector<std::string> environment;
  for (char** e = ::environ; *e; ++e) environment.emplace_back(*e);
  spec.env = std::move(environment);
  const os::CapturedProcess p = os::capture_process(spec, kCommandSeconds);
  if (p.timed_out) throw failed(fmt::format("its command '{}' did not finish in {} s", spec.argv[0], kCommandSeconds));
  if (p.exit_code != 0)
    throw failed(fmt::format("its command '{}' exited with status {}", sdk::printable(spec.argv[0]), p.exit_code));
  return chomp(p.out);
}

Secret parse_one(const std::string& flag, const EnvLookup& env, const SecretDeclarations& declared) {
  const auto bad = [&](const std::string& why) {
    return Error(ErrorCode::invalid_argument, fmt::format("--secret {}: {}", sdk::printable(flag), why),
                 "e.g. --secret OPENAI_API_KEY=api.openai.com (the value is read from your OPENAI_API_KEY), or "
                 "--secret NAME for one declared under 'secrets:' in ~/.config/corral/config.yaml");
  };
  const size_t eq = flag.find('=');
  Secret s;
  s.name = flag.substr(0, eq);
  if (!is_env_name(s.name)) throw bad("'" + sdk::printable(s.name) + "' is no variable name");
  const std::optional<SecretDeclaration> declaration = declared ? declared(s.name) : std::nullopt;
  if (eq == std::string::npos && !declaration)
    throw bad("no hosts, and your config declares no secret " + s.name + ": write NAME=HOST[,HOST...]");
  std::vector<std::string> named;
  if (eq != std::string::npos) {
    const std::string list = flag.substr(eq + 1);
    for (size_t start = 0; start <= list.size();) {
      const size_t end = std::min(list.find(',', start), list.size());
      named.push_back(list.substr(start, end - start));
      start = end + 1;
    }
  } else {
    named = declaration->hosts;
  }
  if (declaration) {
    s.header = declaration->header;
    s.format = declaration->format;
  }
  for (std::string host : named) {
    std::transform(host.begin(), host.end(), host.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string why;
    try {
      const NetworkPolicy p = parse_network_policy("allow:" + host);
      const AllowEntry e = split_allow_entry(p.allow.at(0));
      if (e.port != 0 || is_ip_or_cidr(e.host)) why = "a secret's host is a domain or *.domain, without a port";
    } catch (const Error& e) {
      why = e.what();
    }
    if (host.empty()) why = "an empty host";
    if (!why.empty()) throw bad(fmt::format("host '{}': {}", sdk::printable(host), why));
    if (std::find(s.hosts.begin(), s.hosts.end(), host) == s.hosts.end()) s.hosts.push_back(std::move(host));
  }
  const std::string from = declaration ? declaration->from : std::string();
  const std::optional<std::string> value =
      read_value(s.name, from, declaration ? declaration->file : std::filesystem::path(), env);
  if (!value || value->empty()) {
    const std::string variable = from.rfind("env:", 0) == 0 ? from.substr(4) : s.name;
    if (!from.empty() && from.rfind("env:", 0) != 0)
      throw Error(ErrorCode::invalid_argument, fmt::format("--secret {}: its {} gave no value", s.name, from.substr(0, from.find(':'))),
                  fmt::format("check secrets.{}.from in {}", s.name, declaration->file.string()));
    throw Error(ErrorCode::invalid_argument,
                fmt::format("--secret {}: {} is not set in your environment", s.name, variable),
                fmt::format("export {}=... first; corral reads the value from there and the sandbox never sees it",
                            variable));
  }
  if (value->size() > kMaxSecretBytes) throw bad("its value is over 8 KiB");
  if (value->find_first_of(std::string("\r\n\0", 3)) != std::string::npos)
    throw bad("its value holds a line break or a NUL, which no header may carry");
  const std::string_view rest = std::string_view(*value).substr(vendor_prefix(*value));
  if (std::count_if(rest.begin(), rest.end(), [](unsigned char c) { return std::isalnum(c); }) <
      static_cast<long>(kMinRandomChars))
    throw bad("its value has fewer than 8 letters and digits: too short for a placeholder that cannot be "
              "guessed from it");
  s.value = *value;
  s.placeholder = make_placeholder(s.value);
  return s;
}

}  // namespace

std::vector<Secret> parse_secret_flags(const std::vector<std::string>& flags, const EnvLookup& env,
                                       const SecretDeclarations& declared) {
  std::vector<Secret> out;
  for (const std::string& flag : flags) {
    Secret s = parse_one(flag, env, declared);
    if (std::any_of(out.begin(), out.end(), [&](const Secret& o) { return o.name == s.name; }))
      throw Error(ErrorCode::invalid_argument, fmt::format("--secret {} is given twice", s.name),
                  "list every host in one flag: --secret NAME=HOST1,HOST2");
    out.push_back(std::move(s));
  }
  return out;
}

std::string make_placeholder(std::string_view value) {
  static constexpr std::string_view kLower = "abcdefghijklmnopqrstuvwxyz", kUpper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                                    kDigits = "0123456789";
  for (;;) {
    const std::string noise = os::random_bytes(value.size());
    std::string out(value);
    for (size_t i = vendor_prefix(value); i < out.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(out[i]), r = static_cast<unsigned char>(noise[i]);
      // The slight modulo bias is no matter: the placeholder is no secret, only not the value.
      if (std::islower(c)) out[i] = kLower[r % kLower.size()];
      else if (std::isupper(c)) out[i] = kUpper[r % kUpper.size()];
      else if (std::isdigit(c)) out[i] = kDigits[r % kDigits.size()];
    }
    if (out != value) return out;
  }
}

NetworkPolicy with_secret_hosts(const NetworkPolicy& policy, const std::vector<Secret>& secrets) {
  if (secrets.empty()) return policy;
  if (policy.mode != NetworkPolicy::Mode::allow)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("--secret needs --network allow:...: the value is put in by the sandbox's egress "
                            "proxy, which only an allow list sets up (this run's network is '{}')",
                            to_string(policy)),
                "add --network allow:HOST,... naming what else the command may reach; the secrets' hosts are "
                "added to it for you");
  NetworkPolicy out = policy;
  for (const Secret& s : secrets)
    for (const std::string& host : s.hosts)
      if (!(host[0] != '*' && listed(out, host)) && std::find(out.allow.begin(), out.allow.end(), host) == out.allow.end())
        out.allow.push_back(host);
  return out;
}

std::vector<std::string> secret_hosts_outside(const NetworkPolicy& policy, const std::vector<Secret>& secrets) {
  std::vector<std::string> out;
  for (const Secret& s : secrets)
    for (const std::string& host : s.hosts)
      if (policy.mode != NetworkPolicy::Mode::open &&
          !((host[0] != '*' && listed(policy, host)) ||
            std::find(policy.allow.begin(), policy.allow.end(), host) != policy.allow.end()))
        out.push_back(host);
  return out;
}

}  // namespace corral
