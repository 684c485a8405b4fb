// The host identity a jail runs as when corral itself is root: root outside is then
// never root inside. Each sandbox has its own (jail_ids.hpp).
#pragma once

#include <sys/types.h>

namespace corral::local {

// An unprivileged host uid/gid; inside the jail it keeps the same numbers.
struct JailUser {
  uid_t uid;
  gid_t gid;
};

// True when corral runs as root, where bwrap would otherwise keep root's identity.
bool running_as_root();

}  // namespace corral::local
