// Remembers what probing a plugin library found, keyed by the file's identity (path,
// device, inode, size, mtime, ctime), so corral forks a probe only for a plugin file it
// has not seen in exactly this form. Lives in $XDG_CACHE_HOME/corral/specs: deleting it
// only costs one probe per plugin.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "plugin_host/plugin_probe.hpp"

namespace corral {

// What changes whenever a file's bytes may have: ctime moves on every write, chmod and
// rename, and no one but root can set it back.
struct FileStamp {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};
// The stamp of `file` (links followed), or nullopt when it cannot be examined.
std::optional<FileStamp> stamp_of(const std::filesystem::path& file);

// One cached probe: the file it describes, the file's sha256 (so a pin is checked without
// reading the file again) and the probe's result.
struct CachedProbe {
  FileStamp stamp;
  std::string sha256;
  ProbeResult result;
};

class SpecCache {
 public:
  // The cache kept in `dir`.
  explicit SpecCache(std::filesystem::path dir);
  // The standard one: paths::cache_dir() / "specs".
  static SpecCache standard();

  // The probe stored for `library`, or nullopt when there is none or it cannot be used
  // (unreadable, corrupt, from another cache format or ABI, writable by someone else).
  std::optional<CachedProbe> get(const std::filesystem::path& library) const;
  // Stores `entry` for `library` atomically (temp file 0600, fsync, rename); false when it
  // could not, which only means the next run probes again.
  bool put(const std::filesystem::path& library, const CachedProbe& entry) const;
  // The file that holds the entry of `library`.
  std::filesystem::path file_for(const std::filesystem::path& library) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace corral
