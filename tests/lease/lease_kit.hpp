// What the in-process lease tests drive the run contract with: a fake provider whose
// sandboxes live in memory (FakeCloud), reached through the real Providers, plugin table
// and ProviderSession, under a real registry entry's spec (testbox's, or mountbox's for a
// provider that mounts the tree); a Ui that records what corral tells the user; and real
// claims in a temporary folder.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "corral/sdk.hpp"
#include "lease/run.hpp"
#include "plugin_host/registry.hpp"
#include "settings/config.hpp"

namespace corral::test {

// A Ui that records every message; cancelled() is true once `stop` is set (a Ctrl-C).
// Safe to call from several threads.
class RecordingUi : public Ui {
 public:
  void out(std::string_view data) override;
  void err(std::string_view data) override;
  void info(const std::string& message) override;
  void note(const std::string& message) override;
  void warn(const std::string& message) override;
  void progress(const std::string& message) override;
  bool cancelled() override { return stop.load(); }

  // Everything written to stdout so far.
  std::string stdout_text() const;
  // Every warning so far.
  std::vector<std::string> warnings() const;
  // True when an info, note, warning or progress message so far contains `part`.
  bool said(const std::string& part) const;

  std::atomic<bool> stop{false};

 private:
  mutable std::mutex mutex_;
  std::string out_;
  std::vector<std::string> messages_;
  std::vector<std::string> warnings_;
};

// The fake provider's world: its sandboxes, what it was asked, and what it does when
// asked. Primitives run on the calling thread; the world is safe to share between threads.
class FakeCloud {
 public:
  struct Box {
    Sandbox sandbox;
    int uploads = 0;
  };
  // What a primitive does first, on the calling thread: nothing, or throw an Error to
  // fail it, or set a Ui's stop to play the user's Ctrl-C at that moment.
  using Step = std::function<void(const sdk::Host& host)>;
  // What exec does: the command's exit code. The default prints "ran\n" and gives 0.
  using Exec = std::function<int(const Command& command, const sdk::Host& host)>;

  FakeCloud();
  ~FakeCloud();
  FakeCloud(const FakeCloud&) = delete;
  FakeCloud& operator=(const FakeCloud&) = delete;

  // Runs `step` at the start of every call of `primitive` from now on.
  void at(const std::string& primitive, Step step);
  // Fails every call of `primitive` from now on with `error`.
  void fail(const std::string& primitive, const Error& error);
  // Exec does `exec` from now on.
  void on_exec(Exec exec);

  // The primitives called, in order, each as "<primitive> <sandbox id>" ("create" alone).
  std::vector<std::string> calls() const;
  // How many times `primitive` was called.
  int count(const std::string& primitive) const;
  // The upload requests, in order.
  std::vector<UploadRequest> uploads() const;
  // The commands exec ran, in order.
  std::vector<Command> commands() const;
  // The sandboxes that exist now, by id.
  std::map<std::string, Box> boxes() const;
  // Adds a sandbox with `labels` as if another corral had made it; its id.
  std::string add(const StringMap& labels);
  // Removes sandbox `id` behind corral's back (a lifetime cap, someone else's delete).
  void vanish(const std::string& id);
  // The most creates that were under way at once.
  int most_creating_at_once() const;

  // The plugin instance of `entry`: the fake's plugin table, described by the entry's spec.
  std::unique_ptr<PluginInstance> instance(const ProviderEntry& entry);

  // The primitives, called by the fake plugin's instances.
  Sandbox create(const CreateRequest& request, const sdk::Host& host);
  Sandbox get(const std::string& id, const sdk::Host& host);
  std::vector<Sandbox> list(const StringMap& labels, const sdk::Host& host);
  void destroy(const Sandbox& sandbox, const sdk::Host& host);
  // One new sandbox per target, labelled as the target says.
  std::vector<ForkOutcome> fork(const Sandbox& source, const std::vector<ForkTarget>& targets, const sdk::Host& host);
  int exec(const Sandbox& sandbox, const Command& command, const sdk::Host& host);
  void upload(const Sandbox& sandbox, const UploadRequest& request, const sdk::Host& host);
  DownloadResult download(const Sandbox& sandbox, const DownloadRequest& request, const sdk::Host& host);

 private:
  // Records the call and runs the primitive's step, if any.
  void begin(const std::string& primitive, const std::string& id, const sdk::Host& host);

  mutable std::mutex mutex_;
  std::map<std::string, Step> steps_;
  Exec exec_;
  std::vector<std::string> calls_;
  std::vector<UploadRequest> uploads_;
  std::vector<Command> commands_;
  std::map<std::string, Box> boxes_;
  int next_id_ = 1;
  int creating_ = 0;
  int most_creating_ = 0;
};

// Everything a lease test needs, fresh per test: a temporary root with a working tree
// (work/, holding a.txt and b.txt), XDG_STATE_HOME and XDG_CACHE_HOME pointed inside it, the
// registry of testbox and mountbox, the fake cloud behind them, claims, a recording Ui and
// the context made of them. One at a time per process (it sets the environment).
class LeaseKit {
 public:
  LeaseKit();
  ~LeaseKit();
  LeaseKit(const LeaseKit&) = delete;
  LeaseKit& operator=(const LeaseKit&) = delete;

  // A run of `make test` in the working tree at `provider` (testbox or mountbox).
  RunRequest request(const std::string& provider = "testbox") const;
  // Runs request(provider) with --keep, which must pass; the kept lease's handle.
  SessionHandle kept_lease(const std::string& provider = "testbox");
  // The working tree.
  std::filesystem::path work() const { return root.path() / "work"; }
  // The readable claims, oldest first.
  std::vector<Claim> leases() const { return claims.all(); }
  // The files in the claims folder (claims, locks, file lists), by name.
  std::vector<std::string> claim_folder() const;

  TempDir root;
  std::map<std::string, std::string> env;  // what Providers sees as the environment
  FakeCloud cloud;
  Config config;
  Registry registry;
  Providers providers;
  ClaimStore claims;
  RecordingUi ui;
  LeaseContext ctx;
};

}  // namespace corral::test
