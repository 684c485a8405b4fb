// Secrets a command uses without seeing them (--secret NAME=HOST,...): read from the
// user's side, given a placeholder of the same shape, and allowed only on an allow-listed
// network, whose egress can put the value back in (a provider with egress-secrets).
//
// Threads: functions of their arguments; make_placeholder reads the system generator.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/environment.hpp"
#include "corral/types.hpp"

namespace corral {

// The secrets `flags` declare, each "NAME=HOST[,HOST...]" with its value read from the
// variable NAME through `env`, and a fresh placeholder; throws invalid-argument naming the
// flag when a NAME is no variable name or unset, a HOST no domain or *.domain, a value
// too short to stand in for or holding a line break, or a NAME given twice.
std::vector<Secret> parse_secret_flags(const std::vector<std::string>& flags, const EnvLookup& env);

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
