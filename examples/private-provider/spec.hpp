// The ssh provider's spec: its name, kind, features, settings and capability-matrix facts.
#pragma once

namespace corral_ssh {

extern const char* const kSpecJson;

}  // namespace corral_ssh
