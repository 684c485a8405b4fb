// Results back (--download): the checks on what the user asks for, and the unpacking of
// the archive a provider's download primitive brought back. The archive comes from the
// sandbox, so every entry is untrusted: nothing may land outside the download folder,
// and the folder may not grow past the size bound however the archive is built.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "corral/os/folder_writer.hpp"
#include "workspace/workspace.hpp"

namespace corral {

// Throws invalid-argument for a --download pattern that is empty, absolute, has a ".."
// part or a control character, has a part whose glob can match ".." in a POSIX shell
// (".*", ".[.]", ".?", "[.][.]"), or for more than 64 patterns.
void check_download_patterns(const std::vector<std::string>& patterns);

// Where downloads land: `top`, chosen by the user and used as named (links followed,
// created when missing), and below it `below`, whose folders are opened and created one
// at a time without following a link: they are in the working tree, which a checkout
// (or a sandbox mounting it) decides.
struct DownloadFolder {
  std::filesystem::path top;
  std::filesystem::path below;  // relative; empty: `top` itself
  std::filesystem::path path() const { return below.empty() ? top : top / below; }
};

// The folder for `dir` (--download-dir as given, relative to `cwd`; empty:
// .corral/runs/<lease_id> in the working tree at `root`, or .corral/runs while
// `lease_id` is not known yet). `root` and `cwd` are canonical. A folder inside the
// working tree is reached from `root` without following links; one outside it is the
// user's and used as named.
DownloadFolder download_folder(const std::filesystem::path& root, const std::filesystem::path& cwd,
                               const std::filesystem::path& dir, const std::string& lease_id);
// Throws invalid-argument, saying which link or file to remove, when a folder of
// `folder.below` that exists is a symbolic link or not a folder; what is missing is fine.
void check_download_folder(const DownloadFolder& folder);
// `folder` opened for writing, its missing folders created; throws as check_download_folder
// does, and invalid-argument when it cannot be created.
os::UniqueFd open_download_folder(const DownloadFolder& folder);

struct UnpackedDownload {
  std::vector<std::string> files;    // regular files and links written, relative to the folder
  std::vector<std::string> refused;  // "name: why" for entries not written
  std::uint64_t bytes = 0;           // bytes of file content written
};

// Unpacks the .tar.gz at `archive` into `folder` (created when missing; a link or a file
// in its `below` part throws invalid-argument). Entries that are absolute, climb out with
// "..", would be written through a link or over a folder, repeat a name, are devices or
// fifos, hard links to anything but a file already written, or links that are absolute,
// climb above the folder, have ".." after a name, or lead out through other links (on
// disk or in the archive, in any order) are refused and listed, not written. Nothing is
// ever written through a link, even one made while unpacking. Throws invalid-argument
// once the content passes `max_bytes`, 100000 entries or 500000 names, cancelled when
// `cancelled` says so, and internal for an unreadable archive; what was written stays.
UnpackedDownload unpack_download(const std::filesystem::path& archive, const DownloadFolder& folder,
                                 std::uint64_t max_bytes, const std::function<bool()>& cancelled);

}  // namespace corral
