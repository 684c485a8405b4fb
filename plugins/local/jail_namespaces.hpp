// The namespaces root prepares for a jail: a user namespace that maps only the jail's
// unprivileged user and in which no other can be made, and a mount namespace where bwrap finds the workspace at a path
// that user may walk (bwrap resolves bind sources after switching to it, and the real
// path runs through root's 0700 state folder).
#pragma once

#include <string>

#include "jail_user.hpp"

namespace corral::local {

// Where the workspace appears in the prepared mount namespace: a folder every host has
// and the jail itself never binds.
const char* workspace_mount_point();

class JailNamespaces {
 public:
  // Creates them; with no `workspace` (a host path) only the user namespace, as a probe
  // needs. Throws Error(unavailable) when this host or container refuses.
  static JailNamespaces create(const JailUser& user, const std::string& workspace);
  JailNamespaces(JailNamespaces&& other) noexcept;
  JailNamespaces(const JailNamespaces&) = delete;
  JailNamespaces& operator=(const JailNamespaces&) = delete;
  ~JailNamespaces();
  // For bwrap --userns: owned by the user, and its only mapping (setgroups denied).
  int userns_fd() const { return userns_fd_; }
  // For the process that execs bwrap to join (-1 without a workspace).
  int mountns_fd() const { return mountns_fd_; }

 private:
  JailNamespaces(int userns_fd, int mountns_fd) : userns_fd_(userns_fd), mountns_fd_(mountns_fd) {}
  int userns_fd_ = -1;
  int mountns_fd_ = -1;
};

}  // namespace corral::local
