// The namespaces root prepares for a jail: a user namespace that maps only the jail's
// unprivileged user and in which no other can be made, and a mount namespace where bwrap finds the workspace at a path
// that user may walk (bwrap resolves bind sources after switching to it, and the real
// path runs through root's 0700 state folder).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "jail_user.hpp"

namespace corral::local {

// Where the workspace appears in the prepared mount namespace: a folder every host has
// and the jail itself never binds.
const char* workspace_mount_point();
// With a kept /tmp (create()'s `tmp`): where the workspace and that /tmp's folder appear
// instead, two folders of a small tmpfs of root's at workspace_mount_point().
const char* kept_workspace_point();
const char* kept_tmp_point();

class JailNamespaces {
 public:
  // Creates them; with no `workspace` (a host path) only the user namespace, as a probe
  // needs; with `tmp` (a host path: a kept sandbox's /tmp) that folder as well, at
  // kept_tmp_point(), and the workspace at kept_workspace_point(). Throws
  // Error(unavailable) when this host or container refuses.
  static JailNamespaces create(const JailUser& user, const std::string& workspace, const std::string& tmp = {});
  // Namespaces whose mount namespace holds, at workspace_mount_point(), a tmpfs of its own
  // of at most `size_bytes` (0: the kernel's default, half the memory) owned by `user`;
  // it lives while these descriptors do, and vanishes with the process. With `jail_user`
  // (corral is root) the user namespace is the jail's, as create() makes it; without, one
  // that maps the caller to itself, which bwrap's spawner joins (ProcessSpec::user_ns_fd)
  // before making its own jail in it. Throws Error(unavailable) when the host refuses.
  static JailNamespaces create_in_memory(const std::optional<JailUser>& jail_user, std::uint64_t size_bytes);
  JailNamespaces(JailNamespaces&& other) noexcept;
  JailNamespaces(const JailNamespaces&) = delete;
  JailNamespaces& operator=(const JailNamespaces&) = delete;
  ~JailNamespaces();
  // Descriptors prepare() opened (-1: not asked for), before an object owns them.
  struct Opened {
    int userns = -1;
    int mountns = -1;
    int workspace = -1;
  };
  // For bwrap --userns: owned by the user, and its only mapping (setgroups denied).
  int userns_fd() const { return userns_fd_; }
  // For the process that execs bwrap to join (-1 without a workspace).
  int mountns_fd() const { return mountns_fd_; }
  // The in-memory workspace's root, open (-1 for create()'s): reached through
  // /proc/self/fd/N by the process that holds it, and only by it.
  int workspace_fd() const { return workspace_fd_; }
  // True when bwrap joins userns_fd() itself (--userns), false when its spawner does.
  bool jail_joins_userns() const { return jail_joins_userns_; }

 private:
  JailNamespaces(int userns_fd, int mountns_fd, int workspace_fd = -1, bool jail_joins_userns = true)
      : userns_fd_(userns_fd), mountns_fd_(mountns_fd), workspace_fd_(workspace_fd),
        jail_joins_userns_(jail_joins_userns) {}
  int userns_fd_ = -1;
  int mountns_fd_ = -1;
  int workspace_fd_ = -1;
  bool jail_joins_userns_ = true;
};

}  // namespace corral::local
