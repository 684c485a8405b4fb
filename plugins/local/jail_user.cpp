#include "jail_user.hpp"

#include <unistd.h>

namespace corral::local {

bool running_as_root() { return ::geteuid() == 0; }

}  // namespace corral::local
