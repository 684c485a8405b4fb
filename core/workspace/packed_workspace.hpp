// A workspace archive packed once and uploaded as it is: a run packs its own when it has
// to upload; a fan-out scans and packs one for all its shards, which upload the same file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "workspace/staging.hpp"
#include "base/ui.hpp"
#include "corral/features.hpp"
#include "workspace/workspace.hpp"

namespace corral {

// A packed archive of a workspace, removed with this object.
struct PackedArchive {
  std::unique_ptr<StagedArchive> file;
  std::uint64_t size = 0;
  const std::filesystem::path& path() const { return file->path(); }
};

// What a fan-out shares among its shards: the workspace scanned once and, for a provider
// that uploads it, packed once.
struct SharedWorkspace {
  Workspace workspace;
  std::optional<PackedArchive> archive;  // unset for a provider that mounts the tree
};

// Packs `ws` into a new staged archive under corral's state folder, telling `ui` so; throws
// cancelled once `cancelled` says so (nothing is left behind).
PackedArchive pack_archive(const Workspace& ws, Ui& ui, const std::function<bool()>& cancelled);
// The same with no message, only the "pack" phase's events (Ui::phase, which any thread
// may call): safe on a thread other than the Ui's.
PackedArchive pack_workspace(const Workspace& ws, Ui& ui, const std::function<bool()>& cancelled);
// True when syncing to a provider with `features` uploads a packed archive: archive-sync
// without tree-sync (whose plugin copies the listed files itself).
bool uploads_archive(const FeatureSet& features);
// What pack_archive tells the user: "packing N files (SIZE)".
std::string packing_message(const Workspace& ws);

}  // namespace corral
