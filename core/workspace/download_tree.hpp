// What a download folder holds while an archive is unpacked into it: what was on disk
// before (looked up lazily, never through a link) and, over it, every entry the archive
// wrote or will write, links included. The unpacker asks it whether an entry may be
// written, and, once every entry is known, where each link leads through all the others.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace corral {

class DownloadTree {
 public:
  enum class Kind : unsigned char { absent, folder, file, other, link };
  using Id = std::uint32_t;  // one name in the tree

  // The folder open at `root` (not owned) as it is on disk now.
  explicit DownloadTree(int root);

  // Why an entry of `kind` cannot be written at `name` (clean and relative) now, or ""
  // when it can: a folder on the way is a link or a file, the name was written already,
  // or a folder stands where something else would go.
  std::string why_not(const std::string& name, Kind kind);
  // Why a hard link cannot name `target` now, or "": it must be a file already there,
  // reached through folders only.
  std::string why_not_hard_link_to(const std::string& target);
  // Records that `name` now holds a `kind` (for a link, pointing to `target`), with the
  // folders on its way; its id. Throws invalid-argument past the bounds on the names the
  // tree keeps (250000, 32 MiB with the links' targets).
  Id record(const std::string& name, Kind kind, const std::string& target = {});
  // The name of `id`, relative to the folder.
  std::string path_of(Id id) const;
  // What the link `id` holds.
  const std::string& target_of(Id id) const { return nodes_[id].target; }
  // Why the link `id`, resolved through every link the tree knows, leads out of the
  // folder or nowhere (a loop, more than 40 links deep), or "" when it stays inside.
  std::string why_link_leaves(Id id);

 private:
  static constexpr Id kNone = ~Id{0};
  enum class Verdict : unsigned char { unknown, judging, inside, out, loop, deep };
  struct Node {
    Id parent = kNone;
    Kind kind = Kind::absent;
    bool on_disk = false;  // a folder that was on disk: its children are looked up there
    bool written = false;  // written by this archive
    Verdict verdict = Verdict::unknown;
    std::string name;
    std::string target;  // links only
    // Where a link judged inside leads: a folder, then `extra` folders below it that do
    // not exist (a name there could be made later only as a folder or a file).
    Id end = kNone;
    std::uint32_t extra = 0;
  };

  // The child `part` of folder `parent`, looking on disk when `parent` was there; kNone
  // when it exists nowhere and `make` is false.
  Id child(Id parent, std::string_view part, bool make);
  Id add(Id parent, std::string_view part, Kind kind, bool on_disk);
  // The node of `name` (kNone when it exists nowhere and `make` is false); kNone with
  // `blocker` set when a part on the way is not a folder (a link, a file).
  Id walk(const std::string& name, bool make, Id& blocker);
  // Resolves the link `id`, `depth` links deep, filling in its verdict and end.
  Verdict judge(Id id, int depth);

  int root_;
  std::size_t bytes_ = 0;  // of the names and targets kept
  std::vector<Node> nodes_;
  std::unordered_map<std::string, Id> children_;  // key: parent id bytes + name
};

}  // namespace corral
