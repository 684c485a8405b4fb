// What one shard of a fan-out tells the user. Its command's output goes to the shared
// terminal as whole lines prefixed "[i/N] ", so two shards never tear each other's lines,
// or byte for byte into its own files (--shard-output DIR: DIR/shard-<i>.stdout and
// .stderr); corral's messages about it carry the same prefix; and it is told to stop when
// the user presses Ctrl-C or the fan-out stops every shard (fail-fast, a shard that could
// not start).
//
// Threads: a ShardUi belongs to its shard's thread, but its out() and err() may also come
// from a plugin's own threads, and every shard's calls reach the one user Ui: the
// ShardTerminal's mutex serialises them there, except cancelled(), which each shard asks
// at once (the user's Ui must answer it from any thread).
#pragma once

#include <atomic>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "base/ui.hpp"

namespace corral {

// The user's Ui shared by every shard of one fan-out, and the fan-out's own stop.
struct ShardTerminal {
  explicit ShardTerminal(Ui& ui) : user(ui) {}
  Ui& user;
  std::mutex mutex;                // held while writing to `user`
  std::atomic<bool> stop{false};  // the fan-out asks every shard to stop
};

// Where --shard-output DIR puts shard `index`'s stream: DIR/shard-INDEX.stdout (stream 0)
// or .stderr (1).
std::filesystem::path shard_output_file(const std::filesystem::path& dir, int index, int stream);

class ShardUi : public Ui {
 public:
  // A line without a newline longer than this is written as a line of its own.
  static constexpr std::size_t kMaxLine = 1 << 20;

  // Shard `index` of `count`; with a non-empty `output_dir` its output goes to files there,
  // created (truncated) now. Throws invalid-argument naming a file that cannot be written.
  ShardUi(ShardTerminal& terminal, int index, int count, const std::filesystem::path& output_dir);
  ~ShardUi() override;
  ShardUi(const ShardUi&) = delete;
  ShardUi& operator=(const ShardUi&) = delete;

  void out(std::string_view data) override;
  void err(std::string_view data) override;
  void info(const std::string& message) override;
  void note(const std::string& message) override;
  void warn(const std::string& message) override;
  // Shown only with --verbose, as a prefixed line: N progress lines cannot share one spot.
  void progress(const std::string& message) override;
  // Passed on to the user's Ui with this shard's index.
  void phase(const PhaseEvent& event) override;
  bool cancelled() override;
  int stop_requests() override;
  int stop_signal() override;
  // The user's Ui's tracer, its spans under this shard's (null when it does not trace).
  PhaseTracer* tracer() override;
  // Writes what is left of a last line without a newline, ending it; call once at the end.
  void flush();
  // "[i/N] ".
  const std::string& prefix() const { return prefix_; }

 private:
  // Buffers `data` of `stream` (0 stdout, 1 stderr) and writes its complete lines.
  void lines(int stream, std::string_view data);
  // Writes `text` to `stream` of the shared terminal, or to this shard's file.
  void write(int stream, std::string_view text);

  // The user's tracer with this shard's index on every span.
  class ShardTracer : public PhaseTracer {
   public:
    ShardTracer(PhaseTracer& user, int index) : user_(user), index_(index) {}
    std::unique_ptr<PhaseSpan> start(std::string_view phase, int) override { return user_.start(phase, index_); }

   private:
    PhaseTracer& user_;
    int index_;
  };

  ShardTerminal& terminal_;
  std::optional<ShardTracer> tracer_;
  std::string prefix_;
  int fds_[2] = {-1, -1};  // --shard-output files
  std::string pending_[2];  // a line still without its newline, per stream
  std::mutex mutex_;        // a plugin may emit from threads of its own
  bool file_failed_ = false;
  int index_;
};

}  // namespace corral
