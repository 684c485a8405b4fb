#include "workspace/background_pack.hpp"

#include "corral/errors.hpp"

namespace corral {

BackgroundPack::BackgroundPack(const Workspace& ws, Ui& ui, std::function<bool()> cancelled)
    : thread_([this, &ws, &ui, cancelled = std::move(cancelled)] { pack(ws, ui, cancelled); }) {}

BackgroundPack::~BackgroundPack() { stop(); }

void BackgroundPack::pack(const Workspace& ws, Ui& ui, const std::function<bool()>& cancelled) {
  const auto begin = std::chrono::steady_clock::now();
  try {
    archive_.emplace(pack_workspace(ws, ui, [&] { return stop_.load() || (cancelled && cancelled()); }));
  } catch (...) {
    archive_.reset();  // a half-built archive is removed with its staging file
    error_ = std::current_exception();
  }
  elapsed_ = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - begin);
}

PackedArchive BackgroundPack::take() {
  if (thread_.joinable()) thread_.join();
  if (error_) std::rethrow_exception(error_);
  if (!archive_) throw Error(ErrorCode::internal, "the workspace archive was already taken");
  PackedArchive packed = std::move(*archive_);
  archive_.reset();
  return packed;
}

void BackgroundPack::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  archive_.reset();
}

}  // namespace corral
