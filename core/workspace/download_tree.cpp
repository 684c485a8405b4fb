#include "workspace/download_tree.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "corral/errors.hpp"
#include "corral/os/path_parts.hpp"

namespace corral {
namespace {

// Bounds the memory a hostile archive can make the tree take (a few hundred bytes a name).
constexpr std::size_t kMaxNodes = 250000;
constexpr std::size_t kMaxBytes = 32 << 20;
// As many links as Linux follows in one path (MAXSYMLINKS).
constexpr int kMaxLinkDepth = 40;

Error too_many() {
  return Error(ErrorCode::invalid_argument,
               fmt::format("the download names more than {} files and folders, or {} MiB of names and links; the "
                           "rest was not unpacked",
                           kMaxNodes, kMaxBytes >> 20),
               "download fewer files, e.g. a narrower glob");
}

}  // namespace

DownloadTree::DownloadTree(int root) : root_(root) {
  Node top;
  top.kind = Kind::folder;
  top.on_disk = true;
  nodes_.push_back(std::move(top));
}

DownloadTree::Id DownloadTree::add(Id parent, std::string_view part, Kind kind, bool on_disk) {
  bytes_ += part.size();
  if (nodes_.size() >= kMaxNodes || bytes_ > kMaxBytes) throw too_many();
  Node node;
  node.parent = parent;
  node.kind = kind;
  node.on_disk = on_disk;
  node.name = std::string(part);
  const Id id = static_cast<Id>(nodes_.size());
  nodes_.push_back(std::move(node));
  std::string key(reinterpret_cast<const char*>(&parent), sizeof parent);
  children_.emplace(key.append(part), id);
  return id;
}

DownloadTree::Id DownloadTree::child(Id parent, std::string_view part, bool make) {
  std::string key(reinterpret_cast<const char*>(&parent), sizeof parent);
  if (auto it = children_.find(key.append(part)); it != children_.end()) return it->second;
  if (nodes_[parent].kind == Kind::folder && nodes_[parent].on_disk) {
    // Every folder on the way was found on disk as a folder, so this looks at what is there.
    std::string path = path_of(parent);
    path.append(path.empty() ? "" : "/").append(part);
    struct stat st {};
    if (::fstatat(root_, path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return add(parent, part, Kind::absent, false);
    if (S_ISDIR(st.st_mode)) return add(parent, part, Kind::folder, true);
    if (S_ISREG(st.st_mode)) return add(parent, part, Kind::file, false);
    if (!S_ISLNK(st.st_mode)) return add(parent, part, Kind::other, false);
    std::string target(4096, '\0');
    ssize_t n = ::readlinkat(root_, path.c_str(), target.data(), target.size());
    target.resize(n < 0 ? 0 : static_cast<std::size_t>(n));
    const Id id = add(parent, part, Kind::link, false);
    nodes_[id].target = n < 0 ? "/" : target;  // unreadable: judged as pointing out
    return id;
  }
  return make ? add(parent, part, Kind::absent, false) : kNone;
}

std::string DownloadTree::path_of(Id id) const {
  std::vector<const std::string*> names;
  for (; id != 0; id = nodes_[id].parent) names.push_back(&nodes_[id].name);
  std::string path;
  for (auto it = names.rbegin(); it != names.rend(); ++it) path.append(path.empty() ? "" : "/").append(**it);
  return path;
}

DownloadTree::Id DownloadTree::walk(const std::string& name, bool make, Id& blocker) {
  Id at = 0;
  for (std::string_view part : os::path_parts(name)) {
    if (at != 0 && nodes_[at].kind != Kind::folder && nodes_[at].kind != Kind::absent) {
      blocker = at;
      return kNone;
    }
    at = child(at, part, make);
    if (at == kNone) return kNone;
  }
  return at;
}

std::string DownloadTree::why_not(const std::string& name, Kind kind) {
  Id blocker = kNone;
  const Id id = walk(name, true, blocker);
  if (blocker != kNone && nodes_[blocker].kind == Kind::link)
    return fmt::format("would be written through the link '{}'", path_of(blocker));
  if (blocker != kNone) return fmt::format("'{}' is not a folder", path_of(blocker));
  const Node& node = nodes_[id];
  if (node.kind == Kind::folder && kind != Kind::folder) return "a folder of that name is already there";
  if (node.written && !(node.kind == Kind::folder && kind == Kind::folder)) return "a second entry of the same name";
  return "";
}

std::string DownloadTree::why_not_hard_link_to(const std::string& target) {
  Id blocker = kNone;
  const Id id = walk(target, false, blocker);
  if (blocker != kNone) return fmt::format("hard link through '{}', which is not a folder", path_of(blocker));
  switch (id == kNone ? Kind::absent : nodes_[id].kind) {
    case Kind::file: return "";
    case Kind::absent: return "hard link to a file not there before it";
    case Kind::link: return "hard link to a symbolic link";
    case Kind::folder: return "hard link to a folder";
    case Kind::other: break;
  }
  return "hard link to something that is not a file";
}

DownloadTree::Id DownloadTree::record(const std::string& name, Kind kind, const std::string& target) {
  Id at = 0;
  for (std::string_view part : os::path_parts(name)) {
    if (at != 0 && nodes_[at].kind == Kind::absent) {
      nodes_[at].kind = Kind::folder;  // made on the way
      nodes_[at].written = true;
    }
    at = child(at, part, true);
  }
  bytes_ += target.size();
  if (bytes_ > kMaxBytes) throw too_many();
  Node& node = nodes_[at];
  node.on_disk = kind == Kind::folder && node.kind == Kind::folder && node.on_disk;
  node.kind = kind;
  node.written = true;
  node.target = target;
  return at;
}

DownloadTree::Verdict DownloadTree::judge(Id id, int depth) {
  if (nodes_[id].verdict == Verdict::judging) return Verdict::loop;
  if (nodes_[id].verdict != Verdict::unknown) return nodes_[id].verdict;
  // Kept once found, so each link is walked once however many lead through it; a link
  // found too deep stays refused even when judged from nearer (the safe side).
  if (depth > kMaxLinkDepth) return nodes_[id].verdict = Verdict::deep;
  nodes_[id].verdict = Verdict::judging;
  const std::string target = nodes_[id].target;
  if (target.empty() || target.front() == '/') return nodes_[id].verdict = Verdict::out;
  Id at = nodes_[id].parent;
  std::uint32_t extra = 0;  // folders below `at` that exist nowhere
  Verdict verdict = Verdict::inside;
  for (std::string_view part : os::path_parts(target)) {
    if (part == "..") {
      if (extra > 0) --extra;
      else if (at == 0) verdict = Verdict::out;
      else at = nodes_[at].parent;
    } else if (extra > 0) {
      ++extra;
    } else {
      const Id next = child(at, part, false);
      const Kind kind = next == kNone ? Kind::absent : nodes_[next].kind;
      if (kind == Kind::folder) {
        at = next;
      } else if (kind == Kind::link) {
        verdict = judge(next, depth + 1);
        at = nodes_[next].end;
        extra = nodes_[next].extra;
      } else {
        extra = 1;  // nothing, or a file: read as a folder that could be made there later
      }
    }
    if (verdict != Verdict::inside) break;
  }
  Node& node = nodes_[id];
  node.verdict = verdict;
  node.end = at;
  node.extra = extra;
  return verdict;
}

std::string DownloadTree::why_link_leaves(Id id) {
  switch (judge(id, 0)) {
    case Verdict::inside: return "";
    case Verdict::loop: return "symbolic link in a loop of links";
    case Verdict::deep: return fmt::format("symbolic link more than {} links deep", kMaxLinkDepth);
    default: break;
  }
  return "symbolic link leading out of the folder through another link";
}

}  // namespace corral
