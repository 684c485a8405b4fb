// The conformance kit's own world, shared by its checks: the fixture workspace, the
// planted environment, the kit's access to corral (runs, leases, provider calls, each
// under the check's deadline), and the context a check runs in. A check is a function of
// a CheckContext that returns when the promise holds and throws (fail, skip) otherwise.
//
// Threads: everything here is used from the one thread that runs the checks.
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "conformance/capture_ui.hpp"
#include "conformance/conformance.hpp"
#include "conformance/reach_target.hpp"
#include "corral/os/process.hpp"
#include "corral/os/random.hpp"
#include "corral/sdk/redact.hpp"
#include "lease/fanout.hpp"
#include "lease/fork.hpp"
#include "lease/run.hpp"
#include "base/printable.hpp"

namespace corral::conformance {

namespace fs = std::filesystem;

using Clock = std::chrono::steady_clock;

// A check's verdict; thrown by the check's body, caught by the runner.
struct CheckFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};
[[noreturn]] inline void fail(const std::string& why) { throw CheckFailed(why); }
// A check that found it cannot be made meaningful for this provider, and why.
struct CheckSkipped : std::runtime_error {
  using std::runtime_error::runtime_error;
};
[[noreturn]] inline void skip(const std::string& why) { throw CheckSkipped(why); }

std::int64_t ms_since(Clock::time_point start);

// `text` as a short quoted literal for a failure message.
std::string literal(std::string_view text);

constexpr std::size_t kBlobSize = 64 * 1024;

// 64 KiB holding every byte value, NUL and invalid UTF-8 included, without a short
// period that would let a dropped or repeated chunk go unnoticed.
std::string blob_bytes();

// The bytes of file `path`, or "" when it cannot be read.
std::string read_text(const fs::path& path);

// The workspace every run starts from: a private temp folder with nested, executable,
// binary and oddly named files, removed with everything in it at the end.
class Fixture {
 public:
  Fixture() {
    root_ = fs::temp_directory_path() / ("corral-conformance-" + random_hex(6));
    fs::create_directory(root_);
    fs::permissions(root_, fs::perms::owner_all);
    write("hello.txt", "hello\n");
    write("sub/dir/nested file.txt", "nested\n");
    write("tool.sh", "#!/bin/sh\necho tool ran\n", /*executable=*/true);
    write("blob.bin", blob_bytes());
    write("doomed.txt", "doomed\n");
  }
  ~Fixture() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  Fixture(const Fixture&) = delete;
  Fixture& operator=(const Fixture&) = delete;

  const fs::path& root() const { return root_; }
  // Writes `text` to the fixture file `rel`, creating its folders.
  void write(const std::string& rel, const std::string& text, bool executable = false) {
    fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
    fs::permissions(p, executable ? fs::perms::owner_all : fs::perms::owner_read | fs::perms::owner_write);
  }
  void remove(const std::string& rel) { fs::remove(root_ / rel); }
  // Makes the folder a git checkout, as most users' trees are: corral finds a workspace's
  // top with git, and without it a subfolder is a workspace of its own. Empty, or why not.
  std::string git_init() const {
    if (os::find_program("git").empty()) return "git is not installed";
    os::ProcessSpec spec{{"git", "init", "-q"}, std::nullopt, root_.string()};
    spec.inherit = {"HOME", "PATH"};
    os::CapturedProcess git = os::capture_process(spec);
    return git.exit_code == 0 ? "" : fmt::format("git init failed: {}", printable(git.err));
  }

 private:
  fs::path root_;
};

// Variables set in this process's environment for the kit's lifetime, then unset: one
// the checks forward by name, and secrets a plugin must never pass on, under the names
// real credentials have (the provider's own, ACME_API_TOKEN's shape, the well-known
// *_TOKEN and *_KEY of CI machines). A name already set is left as it is and its value
// watched instead, so the user's real credentials are never overwritten.
class PlantedEnv {
 public:
  // A value the command, its output and corral's messages must never show.
  struct Secret {
    std::string name;   // the variable that holds it
    std::string value;
    bool planted;       // set by the kit (false: the user's own, watched)
  };

  explicit PlantedEnv(const ProviderSpec& spec);
  ~PlantedEnv();
  PlantedEnv(const PlantedEnv&) = delete;
  PlantedEnv& operator=(const PlantedEnv&) = delete;

  static constexpr const char* kForwardedName = "CORRAL_CONFORMANCE_FORWARDED";
  static constexpr const char* kSecretName = "CORRAL_CONFORMANCE_SECRET";
  const std::string& forwarded() const { return forwarded_; }
  const std::vector<Secret>& secrets() const { return secrets_; }
  // The first secret whose value `text` contains, or nullptr.
  const Secret* found_in(std::string_view text) const;
  // `text` with every secret's value masked, for a message the kit prints.
  std::string mask(std::string text) const { return redactor_.apply(std::move(text)); }

 private:
  std::string forwarded_;
  std::vector<Secret> secrets_;
  sdk::Redactor redactor_;
};

// What one run should do.
struct RunSpec {
  std::string shell;
  std::vector<std::string> argv;  // the command as an argv instead of `shell`
  bool keep = false;
  bool keep_on_failure = false;
  std::string lease;  // reuse this lease
  std::vector<std::string> env_names;
  std::int64_t timeout_seconds = 0;
  const Fixture* tree = nullptr;  // run in this fixture instead of the kit's own
  std::string subdir;         // run from this folder of the fixture instead of its root
  std::string cancel_marker;  // press Ctrl-C once stdout shows this
  std::vector<std::string> timed_markers;  // note when stdout first shows each (Observed::seen_at)
  std::vector<std::string> downloads;  // --download patterns
  std::uint64_t max_download = 0;      // --max-download; 0 = the default
  std::optional<NetworkPolicy> network;  // --network
  std::optional<std::string> input;      // piped into corral: the command's stdin (exec-stdin)
  std::int64_t stop_timeout_ms = -1;     // --stop-timeout; -1 = the default
};

// What one run did, as the user would have seen it.
struct Observed {
  RunResult result;
  std::string out, err;  // heads of the streams (complete up to 1 MiB)
  std::uint64_t out_size = 0, err_size = 0;
  std::string out_sha, err_sha;
  bool out_complete = true, err_complete = true;
  std::vector<std::string> messages;
  std::int64_t ms = 0;
  std::string ran;  // what ran, for messages: "sh -c 'exit 42' in the fixture's top folder"
  // When stdout first showed each of RunSpec::timed_markers, in its order (none: never).
  std::vector<std::optional<Clock::time_point>> seen_at;

  const SessionHandle& handle() const {
    if (!result.handle) fail("the run produced no session handle" + why());
    return *result.handle;
  }
  // ": <the run's error>" when it failed, for appending to a failure message.
  std::string why() const {
    return result.error ? fmt::format(" (corral said: {})", printable(result.error->what())) : "";
  }
  // Fails unless the run ended with the command's exit code `code` and no error.
  void expect_exit(int code) const {
    if (result.error) fail(fmt::format("the run of {} failed: {}", ran, printable(result.error->what())));
    if (result.exit_code != code)
      fail(fmt::format("exit code {}, expected {}, from {}{}", result.exit_code, code, ran,
                       err.empty() ? std::string("; its stderr was empty")
                                   : "; its stderr ended " + literal(err.substr(err.size() > 200 ? err.size() - 200 : 0))));
  }
  void expect_out(std::string_view expected) const {
    if (!out_complete || out != expected) fail(fmt::format("stdout was {}, expected {}", literal(out), literal(expected)));
  }
  void expect_err(std::string_view expected) const {
    if (!err_complete || err != expected) fail(fmt::format("stderr was {}, expected {}", literal(err), literal(expected)));
  }
};

// The kit's access to corral: runs, leases and provider calls, each with its own
// recording Ui, and the record of every lease it made so none outlives it.
class Kit {
 public:
  Kit(const ConformanceSetup& setup, std::string provider, const Fixture& fixture, const PlantedEnv& planted)
      : setup_(setup), fixture_(fixture), planted_(planted), choice_(setup.choice) {
    choice_.provider = std::move(provider);
  }

  const std::string& provider() const { return choice_.provider; }
  const ClaimStore& claims() const { return setup_.claims; }

  // From now until end_check(), whatever the kit does is told to stop at `deadline`.
  void begin_check(Clock::time_point deadline) {
    deadline_ = deadline;
    ran_out_ = false;
  }
  // Ends the check's deadline; true when it passed while the check ran.
  bool end_check() {
    deadline_.reset();
    return ran_out_;
  }

  // Runs `spec` under the run contract, as `corral run` would, and records its lease.
  Observed run(const RunSpec& spec);

  // Where the kit's downloads land: a fresh folder the workspace scan never syncs.
  fs::path download_dir() const { return fixture_.root() / ".corral" / "runs" / "conformance"; }

  // Fails when the planted secret shows anywhere a run reported.
  void expect_no_secret(const Observed& o) const;

  // Calls `body` with the provider opened, as `corral stop` or `corral list` would.
  template <class Body>
  auto with_session(Body body) {
    CaptureUi ui(setup_.user);
    Watched watched(*this, ui);
    Providers providers = kit_providers();
    std::unique_ptr<ProviderSession> session = providers.open(choice_.provider, choice_, ui);
    return body(*session);
  }

  // Calls `body` with lease `id` attached, as the lease commands do.
  template <class Body>
  auto with_lease(const std::string& id, Lease::Access access, Body body) {
    CaptureUi ui(setup_.user);
    Watched watched(*this, ui);
    Providers providers = kit_providers();
    LeaseContext ctx{setup_.claims, providers, ui};
    Lease lease = Lease::attach(ctx, id, choice_, access);
    return body(lease);
  }

  // Makes `count` forks of lease `id` as `corral fork` does, recording them as made.
  Forks fork(const std::string& id, int count);

  // Runs `shell` in `shards` forks of lease `id`, as `corral run --shards N --from` does,
  // recording the forks as made.
  FanoutResult fanout_from(const std::string& id, int shards, const std::string& shell);

  // Stops lease `id` as `corral stop --id` does.
  void stop(const std::string& id) {
    with_lease(id, Lease::Access::exclusive, [](Lease& lease) {
      lease.release();
      return 0;
    });
  }

  // Empty when sandbox `id` is gone at the provider; else what shows it is not. get is
  // asked only when it says not-found for a sandbox that never existed (else list alone).
  std::string still_there(const std::string& sandbox_id);

  // "" when get says not-found for a sandbox that never existed, one with an id shaped
  // like `sample` (a real sandbox's); else what it answered. Asked once per kit.
  std::string get_answers_unknown(const std::string& sample);

  // Fails unless the lease of `o` is forgotten and its sandbox gone.
  void expect_cleaned_up(const Observed& o);

  struct Made {
    std::string lease_id;
    std::string sandbox_id;
    bool kept = false;  // the run kept it on purpose (--keep, or --keep-on-failure after a failure)
  };
  const std::vector<Made>& made() const { return made_; }
  // Records a sandbox made outside a run, so nothing-left checks it is gone.
  void made_outside_a_run(const std::string& lease_id, const std::string& sandbox_id) {
    made_.push_back({lease_id, sandbox_id, false});
  }

 private:
  // The providers a check uses: the plugin in its helper process, so that whatever it
  // does costs a check, never the kit, and one that ignores a stop is killed soon.
  Providers kit_providers() const {
    Providers providers(setup_.registry, setup_.config, process_env);
    providers.isolate(kConformanceCancelGrace);
    return providers;
  }

  // Puts a Ui under the check's deadline while it lives, and notes when it ran out.
  class Watched {
   public:
    Watched(Kit& kit, CaptureUi& ui) : kit_(kit), ui_(ui) {
      if (kit_.deadline_) ui_.cancel_at(*kit_.deadline_);
    }
    ~Watched() {
      if (ui_.time_ran_out()) kit_.ran_out_ = true;
    }
    Watched(const Watched&) = delete;
    Watched& operator=(const Watched&) = delete;

   private:
    Kit& kit_;
    CaptureUi& ui_;
  };

  const ConformanceSetup& setup_;
  const Fixture& fixture_;
  const PlantedEnv& planted_;
  ProviderChoice choice_;
  std::vector<Made> made_;
  std::optional<Clock::time_point> deadline_;
  std::atomic<bool> ran_out_{false};  // a check may run two commands at once
  std::optional<std::string> get_answers_unknown_;
};

// Fails with the run's error when the plugin went on after it was told to stop.
void expect_stopped_in_time(const Observed& o);

// What a check runs with: the kit, the fixture, the planted variables, the provider's
// spec and the network target, and the kept lease the session checks share.
struct CheckContext {
  Kit& kit;
  Fixture& fixture;
  const PlantedEnv& planted;
  const ProviderSpec& spec;
  const ReachTarget& target;
  std::optional<bool> open_reaches;  // whether an open network reaches the target, once tried
  std::optional<std::string> not_streamed;  // why output is not streamed ("" when it is), once tried
  std::string kept;                  // the shared kept lease; "" until a check keeps one
  std::string kept_sandbox;

  // The lease the session checks share, kept (made now when keep-reuse did not).
  std::string kept_lease();
  // What the command saw trying to reach the target under `policy`; fails when it could
  // not try, skips when the sandbox has no bash.
  Reach reach(const NetworkPolicy& policy);
  // Skips the check unless an open network reaches the target: only then does a policy
  // that keeps the command from it show anything.
  void expect_reachable_when_open();
  // "" when the command's output reaches corral as it prints it; else what showed it
  // arrives only at the end (tried once). Ctrl-C at a point of the output needs it.
  std::string streaming_problem();
  // Stops the sandboxes runs kept on purpose, other than the shared session lease, once
  // the check that kept them is over (it may have failed before stopping them itself).
  void stop_kept() noexcept;
  // Stops whatever is still claimed at the end, so the kit never leaves a sandbox behind
  // that a working `stop` can remove.
  void clean_up() noexcept;
};

// One check: what it proves, the features it needs, and its body. The feature it verifies
// (in a verification record) is one of `needs_any` when given, else the last of `needs`;
// those before it are what it needs to run at all.
struct CheckDef {
  const char* id;
  const char* title;
  std::vector<Feature> needs;      // every one; the verified feature last
  std::vector<Feature> needs_any;  // at least one, when not empty
  void (*body)(CheckContext&);
};

}  // namespace corral::conformance
