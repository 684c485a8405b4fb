// Terminal-safe text for the host: the SDK's printable(), which plugins use too.
#pragma once

#include "corral/sdk/printable.hpp"

namespace corral {

using sdk::printable;

}  // namespace corral
