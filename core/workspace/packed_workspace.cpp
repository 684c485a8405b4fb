#include "workspace/packed_workspace.hpp"

#include <fmt/format.h>

#include "base/paths.hpp"
#include "base/phase_report.hpp"
#include "base/sizes.hpp"
#include "workspace/archive.hpp"

namespace corral {

PackedArchive pack_archive(const Workspace& ws, Ui& ui, const std::function<bool()>& cancelled) {
  ui.progress(packing_message(ws));
  return pack_workspace(ws, ui, cancelled);
}

PackedArchive pack_workspace(const Workspace& ws, Ui& ui, const std::function<bool()>& cancelled) {
  PackedArchive packed;
  packed.file = std::make_unique<StagedArchive>(paths::state_dir() / "tmp");
  PhaseReport report(ui, "pack", ws.total_bytes);
  packed.size = write_archive(ws, packed.file->path(), cancelled, [&](std::uint64_t read) { report.bytes(read); });
  report.done();
  return packed;
}

bool uploads_archive(const FeatureSet& features) {
  return features.has(Feature::archive_sync) && !features.has(Feature::tree_sync);
}

std::string packing_message(const Workspace& ws) {
  return fmt::format("packing {} files ({})", ws.files.size(), format_size(ws.total_bytes));
}

}  // namespace corral
