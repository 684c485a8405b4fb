// Whether a file may be trusted to decide what corral runs (a plugin library or a
// registry): the file, every folder from / down to it and every symbolic link followed
// on the way must be owned by root or the current user and writable by no one else,
// as OpenSSH's StrictModes demands of authorized_keys. For plugins too: a program a
// plugin runs that it did not find on PATH (its own helper) is held to the same rule.
//
// Threads: check_trusted_path may run on any thread; it reads the file system as it is
// at the time, so a path an attacker may change is not one it could trust anyway.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace corral::os {

// Why a path must not be trusted: the component at fault, what is wrong with it and the
// command that fixes it.
struct Distrust {
  std::filesystem::path at;  // the file, folder or link at fault
  std::string problem;       // e.g. "is world-writable"
  std::string fix;           // e.g. "chmod go-w /srv/plugins"; empty when no command fixes it
  // "/srv/plugins is world-writable (fix with: chmod go-w /srv/plugins)".
  std::string describe() const;
};

struct TrustCheck {
  std::filesystem::path resolved;    // the file with every link followed (set when trusted)
  std::optional<Distrust> distrust;  // set when the path must not be trusted
};

// Walks `file` component by component from /, following links like the kernel does, and
// checks every folder walked through, every link followed and the file itself.
TrustCheck check_trusted_path(const std::filesystem::path& file);

}  // namespace corral::os
