// A workspace archive packed on a thread of its own while the caller does something else:
// the pipelined start packs while the sandbox is being created.
//
// Threads: construct, take(), stop() and destroy on the owning thread. The packer thread
// reads only the workspace, which must neither change nor go until the packer is stopped
// or taken, calls `cancelled`, which must be safe to call from any thread (Ui's is), and
// reports the "pack" phase to the Ui (Ui::phase may be called from any thread).
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <optional>
#include <thread>

#include "workspace/packed_workspace.hpp"

namespace corral {

class BackgroundPack {
 public:
  // Starts packing `ws` (borrowed) into a staged archive, reporting to `ui` (borrowed);
  // the packer gives up once `cancelled` says so or stop() is called.
  BackgroundPack(const Workspace& ws, Ui& ui, std::function<bool()> cancelled);
  // Stops the packer and waits for it: no thread and no archive outlive this object.
  ~BackgroundPack();
  BackgroundPack(const BackgroundPack&) = delete;
  BackgroundPack& operator=(const BackgroundPack&) = delete;

  // Waits for the archive and hands it over; throws what packing threw (cancelled when
  // stopped). Call at most once.
  PackedArchive take();
  // Asks the packer to stop and waits for it; its partial archive is removed. Idempotent.
  void stop();
  // How long the packer ran, from its start to its end; valid once take() or stop() returned.
  std::chrono::milliseconds elapsed() const { return elapsed_; }

 private:
  // The thread's body: packs, keeping the archive or the exception.
  void pack(const Workspace& ws, Ui& ui, const std::function<bool()>& cancelled);

  std::atomic<bool> stop_{false};
  std::optional<PackedArchive> archive_;  // written by the packer, read after join
  std::exception_ptr error_;              // likewise
  std::chrono::milliseconds elapsed_{0};  // likewise
  std::thread thread_;                    // last: started once everything above exists
};

}  // namespace corral
