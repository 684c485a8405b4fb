// Secrets a command uses without seeing them (--secret NAME=HOST,...): read from the
// user's side, given a placeholder of the same shape, and allowed only on an allow-listed
// network, whose egress can put the value back in (a provider with egress-secrets).
//
// Threads: functions of their arguments; make_placeholder reads the system generator.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/environment.hpp"
#include "corral/types.hpp"
#include "settings/config.hpp"

namespace corral {

// The user config's declaration of a secret by name (Config::secret), or none.
using SecretDeclarations = std::function<std::optional<SecretDeclaration>(const std::string& name)>;

// The secrets `flags` ask for, each with its value and a fresh placeholder. A flag is
// "NAME=HOST[,HOST...]" or "NAME" alone for a secret `declared` declares; the hosts a flag
// names win over the declaration's. The value comes from the declaration's `from` (env:VAR,
// file:PATH relative to its config file, command:ARGV run without a shell, for 30 s at
// most), else from the variable NAME through `env`. Throws invalid-argument naming the
// flag when a NAME is no variable name, has no hosts or no value, a HOST is no domain or
// *.domain, a value is too short to stand in for or holds a line break, or a NAME is
// given twice; never with the value in the message.
std::vector<Secret> parse_secret_flags(const std::vector<std::string>& flags, const EnvLookup& env,
                                       const SecretDeclarations& declared = {});

// A random stand-in for `value` of its shape: as long, a leading vendor prefix kept
// ("sk-proj-", "ghp_", "xoxb-"), every other letter and digit replaced by a random one of
// its class, punctuation kept, so a client library that checks a key's form accepts it.
// Never equal to `value`.
std::string make_placeholder(std::string_view value);

// `policy` with each secret's hosts added where no entry names them yet (ports 80 and
// 443; plain HTTP to them is refused). Refuses secrets on a network that is not an allow
// list (invalid-argument): only the egress of one can put a value in.
NetworkPolicy with_secret_hosts(const NetworkPolicy& policy, const std::vector<Secret>& secrets);

// The hosts of `secrets` no entry of `policy` names (for a kept sandbox, whose list is fixed).
std::vector<std::string> secret_hosts_outside(const NetworkPolicy& policy, const std::vector<Secret>& secrets);

}  // namespace corral
