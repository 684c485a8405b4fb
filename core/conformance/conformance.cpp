#include "conformance/conformance.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <cstdint>
#include <iterator>
#include <optional>
#include <stdexcept>

#include "conformance/capture_ui.hpp"
#include "corral/json.hpp"
#include "corral/os/process.hpp"
#include "corral/wire.hpp"
#include "base/hash.hpp"
#include "lease/fanout.hpp"
#include "lease/fleet.hpp"
#include "lease/fork.hpp"
#include "lease/run.hpp"
#include "plugin_host/plugin_instance.hpp"
#include "base/printable.hpp"
#include "conformance/reach_target.hpp"

namespace fs = std::filesystem;

namespace corral {

std::string_view to_string(CheckResult::Outcome outcome) {
  switch (outcome) {
    case CheckResult::Outcome::passed: return "passed";
    case CheckResult::Outcome::failed: return "failed";
    case CheckResult::Outcome::skipped: return "skipped";
  }
  return "failed";
}

int ConformanceReport::count(CheckResult::Outcome outcome) const {
  int n = 0;
  for (const CheckResult& c : checks) n += c.outcome == outcome;
  return n;
}

namespace {

using Clock = std::chrono::steady_clock;

// A check's verdict; thrown by the check's body, caught by the runner.
struct CheckFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};
[[noreturn]] void fail(const std::string& why) { throw CheckFailed(why); }
// A check that found it cannot be made meaningful for this provider, and why.
struct CheckSkipped : std::runtime_error {
  using std::runtime_error::runtime_error;
};
[[noreturn]] void skip(const std::string& why) { throw CheckSkipped(why); }

std::int64_t ms_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

// `text` as a short quoted literal for a failure message.
std::string literal(std::string_view text) {
  constexpr std::size_t kMax = 120;
  std::string shown = printable(text.substr(0, kMax));
  return "\"" + shown + (text.size() > kMax ? "\"..." : "\"");
}

constexpr std::size_t kBlobSize = 64 * 1024;
constexpr int kLargeRepeats = 800;     // 800 x 64 KiB = 50 MiB on stdout...
constexpr int kLargeStderrEvery = 10;  // ...and 5 MiB on stderr, interleaved with it
constexpr std::int64_t kPromptSeconds = 30;  // how long Ctrl-C and --timeout may take to act
constexpr std::int64_t kProbeSeconds = 60;   // --timeout of a run that tries the network
// Addresses an allow list may name that reach nothing (TEST-NET-1, RFC 5737).
constexpr const char* kUnusedAddress = "192.0.2.1";
constexpr const char* kOtherUnusedAddress = "192.0.2.2";

// 64 KiB holding every byte value, NUL and invalid UTF-8 included, without a short
// period that would let a dropped or repeated chunk go unnoticed.
std::string blob_bytes() {
  std::string blob(kBlobSize, '\0');
  std::uint32_t x = 2463534242u;
  for (std::size_t i = 0; i < blob.size(); ++i) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    blob[i] = static_cast<char>(i < 256 ? i : x & 0xff);
  }
  return blob;
}

// The bytes of file `path`, or "" when it cannot be read.
std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

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
// the checks forward by name, and one a plugin must never pass on.
class PlantedEnv {
 public:
  PlantedEnv()
      : forwarded_("forwarded-" + random_hex(8)), secret_("planted-secret-" + random_hex(12)) {
    ::setenv(kForwardedName, forwarded_.c_str(), 1);
    ::setenv(kSecretName, secret_.c_str(), 1);
  }
  ~PlantedEnv() {
    ::unsetenv(kForwardedName);
    ::unsetenv(kSecretName);
  }
  PlantedEnv(const PlantedEnv&) = delete;
  PlantedEnv& operator=(const PlantedEnv&) = delete;

  static constexpr const char* kForwardedName = "CORRAL_CONFORMANCE_FORWARDED";
  static constexpr const char* kSecretName = "CORRAL_CONFORMANCE_SECRET";
  const std::string& forwarded() const { return forwarded_; }
  const std::string& secret() const { return secret_; }

 private:
  std::string forwarded_;
  std::string secret_;
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
  std::vector<std::string> downloads;  // --download patterns
  std::uint64_t max_download = 0;      // --max-download; 0 = the default
  std::optional<NetworkPolicy> network;  // --network
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
    if (result.error) fail(fmt::format("the run failed: {}", printable(result.error->what())));
    if (result.exit_code != code) fail(fmt::format("exit code {}, expected {}", result.exit_code, code));
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
  Observed run(const RunSpec& spec) {
    CaptureUi ui(setup_.user);
    Watched watched(*this, ui);
    if (!spec.cancel_marker.empty()) ui.cancel_when_stdout_has(spec.cancel_marker);
    Providers providers = kit_providers();
    LeaseContext ctx{setup_.claims, providers, ui};
    RunRequest request;
    request.choice = choice_;
    request.lease = spec.lease;
    request.keep = spec.keep;
    request.keep_on_failure = spec.keep_on_failure;
    request.command.shell = spec.shell;
    request.command.argv = spec.argv;
    request.command.timeout_seconds = spec.timeout_seconds;
    request.env_names = spec.env_names;
    const fs::path& top = (spec.tree ? *spec.tree : fixture_).root();
    request.cwd = spec.subdir.empty() ? top : top / spec.subdir;
    request.downloads.patterns = spec.downloads;
    request.downloads.dir = download_dir();
    if (spec.max_download) request.downloads.max_bytes = spec.max_download;
    request.network = spec.network;
    Clock::time_point start = Clock::now();
    Observed o;
    o.result = corral::run(ctx, request);
    o.ms = ms_since(start);
    if (o.result.handle && !o.result.handle->reused)
      made_.push_back({o.result.handle->lease_id, o.result.handle->sandbox_id, o.result.handle->kept});
    o.out_size = ui.stdout_stream().size();
    o.err_size = ui.stderr_stream().size();
    o.out_complete = ui.stdout_stream().complete();
    o.err_complete = ui.stderr_stream().complete();
    o.out = ui.stdout_stream().head();
    o.err = ui.stderr_stream().head();
    o.out_sha = ui.stdout_stream().sha256();
    o.err_sha = ui.stderr_stream().sha256();
    o.messages = ui.messages();
    if (spec.cancel_marker.size() && !ui.cancel_fired() && !setup_.user.cancelled())
      fail(fmt::format("stdout never showed {} to interrupt", literal(spec.cancel_marker)) + o.why());
    expect_no_secret(o);
    return o;
  }

  // Where the kit's downloads land: a fresh folder the workspace scan never syncs.
  fs::path download_dir() const { return fixture_.root() / ".corral" / "runs" / "conformance"; }

  // Fails when the planted secret shows anywhere a run reported.
  void expect_no_secret(const Observed& o) const {
    const std::string& s = planted_.secret();
    auto has = [&](std::string_view text) { return text.find(s) != std::string_view::npos; };
    if (has(o.out) || has(o.err)) fail("the secret planted in corral's environment reached the command's output");
    for (const std::string& m : o.messages)
      if (has(m)) fail("the secret planted in corral's environment appeared in a message: " + printable(m));
    if (o.result.error && (has(o.result.error->what()) || has(o.result.error->hint())))
      fail("the secret planted in corral's environment appeared in an error");
    if (o.result.handle && has(handle_to_json(*o.result.handle)))
      fail("the secret planted in corral's environment appeared in the session handle");
  }

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
  Forks fork(const std::string& id, int count) {
    CaptureUi ui(setup_.user);
    Watched watched(*this, ui);
    Providers providers = kit_providers();
    LeaseContext ctx{setup_.claims, providers, ui};
    Lease source = Lease::attach(ctx, id, choice_, Lease::Access::exclusive);
    Forks forks = fork_lease(ctx, source, {.count = count, .kept = true});
    for (const Claim& c : forks.made) made_.push_back({c.lease_id, c.sandbox_id, true});
    return forks;
  }

  // Runs `shell` in `shards` forks of lease `id`, as `corral run --shards N --from` does,
  // recording the forks as made.
  FanoutResult fanout_from(const std::string& id, int shards, const std::string& shell) {
    CaptureUi ui(setup_.user);
    Watched watched(*this, ui);
    Providers providers = kit_providers();
    LeaseContext ctx{setup_.claims, providers, ui};
    FanoutRequest fan;
    fan.run.choice = choice_;
    fan.run.command.shell = shell;
    fan.run.cwd = fixture_.root();
    fan.shards = shards;
    fan.from = id;
    FanoutResult result = run_fanout(ctx, fan);
    for (const ShardOutcome& s : result.shards)
      if (s.result.handle) made_.push_back({s.result.handle->lease_id, s.result.handle->sandbox_id, false});
    return result;
  }

  // Stops lease `id` as `corral stop --id` does.
  void stop(const std::string& id) {
    with_lease(id, Lease::Access::exclusive, [](Lease& lease) {
      lease.release();
      return 0;
    });
  }

  // Empty when sandbox `id` is gone at the provider; else what shows it is not.
  std::string still_there(const std::string& sandbox_id) {
    return with_session([&](ProviderSession& session) -> std::string {
      if (session.has(Feature::run_session)) {
        try {
          Sandbox s = session.get(sandbox_id);
          return fmt::format("get still finds sandbox {} (state {})", printable(sandbox_id),
                             s.state.empty() ? "not given" : printable(s.state));
        } catch (const Error& e) {
          if (e.code() != ErrorCode::not_found)
            return fmt::format("get of sandbox {} failed instead of saying it is gone: {}", printable(sandbox_id),
                               printable(e.what()));
        }
      }
      if (session.has(Feature::cleanup))
        for (const Sandbox& s : session.list({{wire::kOwnerLabel, wire::kOwnerValue}}))
          if (s.id == sandbox_id) return fmt::format("list still shows sandbox {}", printable(sandbox_id));
      return "";
    });
  }

  // Fails unless the lease of `o` is forgotten and its sandbox gone.
  void expect_cleaned_up(const Observed& o) {
    const SessionHandle& h = o.handle();
    if (h.kept) fail("the sandbox was kept, but the run did not ask to keep it");
    if (setup_.claims.inspect(h.lease_id)) fail(fmt::format("lease {} is still claimed after the run", h.lease_id));
    if (std::string left = still_there(h.sandbox_id); !left.empty()) fail(left + " after the run");
  }

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
  bool ran_out_ = false;
};

// Fails with the run's error when the plugin went on after it was told to stop.
void expect_stopped_in_time(const Observed& o) {
  if (o.result.error && std::string_view(o.result.error->what()).find(kIgnoredCancellation) != std::string_view::npos)
    fail(printable(o.result.error->what()));
}

// The checks, in the order they run. Session checks share one kept lease.
class Checks {
 public:
  Checks(Kit& kit, Fixture& fixture, const PlantedEnv& planted, const ProviderSpec& spec, const ReachTarget& target)
      : kit_(kit), fixture_(fixture), planted_(planted), spec_(spec), target_(target) {}

  void lifecycle() {
    Observed o = kit_.run({.shell = "echo conformance"});
    o.expect_exit(0);
    o.expect_out("conformance\n");
    o.expect_err("");
    if (o.handle().exit_code != 0) fail("the session handle does not record exit code 0");
    kit_.expect_cleaned_up(o);
  }

  void exit_codes() {
    for (int code : {1, 42, 255}) {
      Observed o = kit_.run({.shell = fmt::format("exit {}", code)});
      o.expect_exit(code);
      if (o.handle().exit_code != code) fail(fmt::format("the session handle does not record exit code {}", code));
    }
  }

  // Arguments the way a generator of command lines writes them: the characters a shell,
  // an argument parser or a JSON encoder could take for its own, spaces, newlines, empty
  // words and leading dashes, then more of the same from a seeded generator (so a failure
  // comes back the same). Each comes back NUL-terminated, so empty words show too.
  void argv_exact() {
    std::vector<std::string> words = {"[x]",  "a[1]", "[a,b]", "[]",     "{}",   "",          "--",  "-n",
                                      "--keep", "a b", " lead", "trail ", "a\nb", "tab\there", "'",   "\"",
                                      "\\",   "$HOME", "${PATH}", "$(id)", "`id`", "*",       "?.txt", "~",
                                      "a=b",  "%s",   ";",     "&&",     "|",    "#comment", "caf\xc3\xa9",
                                      "\xe2\x80\xae"};
    static const char* const kPieces[] = {"[", "]", ",", "{", "}", "-", "=", " ", "\n", "'", "\"", "\\", "$",
                                          "*", "?", "x", "\xc3\xa9", "!", "#", "&", "|", ";", "<", ">", "%"};
    std::uint32_t state = 2463534242u;
    for (int i = 0; i < 24; ++i) {
      std::string w;
      for (std::uint32_t n = (state ^= state << 13, state ^= state >> 17, state ^= state << 5) % 6; n > 0; --n)
        w += kPieces[(state ^= state << 13, state ^= state >> 17, state ^= state << 5) % std::size(kPieces)];
      words.push_back(w);
    }
    expect_argv(words, "");
    // Bytes that are not UTF-8 (a file name's): they arrive as they are, or the provider
    // refuses them; never other bytes.
    expect_argv({"\xff\xfe", "a\x80" "b"}, "not UTF-8");
  }

  // Runs a printer of its arguments with `words` and fails naming the first argument
  // that came back otherwise; with `refusable`, a refusal (invalid-argument) is fine.
  void expect_argv(const std::vector<std::string>& words, const std::string& refusable) {
    std::vector<std::string> argv = {"/bin/sh", "-c", "for a; do printf '%s\\0' \"$a\"; done", "sh"};
    argv.insert(argv.end(), words.begin(), words.end());
    Observed o = kit_.run({.argv = argv});
    if (!refusable.empty() && o.result.error && o.result.error->code() == ErrorCode::invalid_argument &&
        o.out.empty())
      return;
    const std::string how =
        "the command was run as an argv: /bin/sh -c 'for a; do printf ...; done' sh ARGS...; a plugin that joins an "
        "argv into one shell string, or changes bytes on the way, gets this";
    if (!o.result.handle || o.result.exit_code != 0)
      fail(fmt::format("the printer of its {} arguments exited {} instead of printing them{} ({})", words.size(),
                       o.result.exit_code, o.err.empty() ? std::string() : ", saying " + literal(o.err), how) +
           o.why());
    std::vector<std::string> got;
    for (std::size_t start = 0; start < o.out.size();) {
      const std::size_t end = o.out.find('\0', start);
      got.push_back(o.out.substr(start, end == std::string::npos ? std::string::npos : end - start));
      if (end == std::string::npos) break;
      start = end + 1;
    }
    for (std::size_t i = 0; i < words.size(); ++i)
      if (i >= got.size() || got[i] != words[i])
        fail(fmt::format("argument {} of {} came back as {}, not {} ({})", i + 1, words.size(),
                         i < got.size() ? literal(got[i]) : "nothing", literal(words[i]), how));
    if (got.size() != words.size())
      fail(fmt::format("{} arguments came back, not {}", got.size(), words.size()));
  }

  void output_separate() {
    Observed o = kit_.run({.shell = "printf 'out-1\\n'; printf 'err-1\\n' >&2; printf 'out-2'; printf 'err-2' >&2"});
    o.expect_exit(0);
    o.expect_out("out-1\nout-2");
    o.expect_err("err-1\nerr-2");
  }

  void output_binary() {
    Observed o = kit_.run({.shell = "cat blob.bin"});
    o.expect_exit(0);
    const std::string blob = blob_bytes();
    if (o.out_size != blob.size()) fail(fmt::format("stdout had {} bytes, expected {}", o.out_size, blob.size()));
    if (o.out != blob) {
      std::size_t at = 0;
      while (at < blob.size() && o.out[at] == blob[at]) ++at;
      fail(fmt::format("stdout differs from the file's bytes from offset {} on", at));
    }
  }

  void output_large() {
    const std::string blob = blob_bytes();
    Sha256 out_hash, err_hash;
    for (int i = 0; i < kLargeRepeats; ++i) {
      out_hash.update(blob);
      if (i % kLargeStderrEvery == 0) err_hash.update(blob);
    }
    const std::string script = fmt::format(
        "i=0; while [ $i -lt {} ]; do cat blob.bin; if [ $((i % {})) -eq 0 ]; then cat blob.bin >&2; fi; "
        "i=$((i+1)); done",
        kLargeRepeats, kLargeStderrEvery);
    Observed o = kit_.run({.shell = script});
    o.expect_exit(0);
    const std::uint64_t out_expected = std::uint64_t{kBlobSize} * kLargeRepeats;
    const std::uint64_t err_expected = std::uint64_t{kBlobSize} * (kLargeRepeats / kLargeStderrEvery);
    if (o.out_size != out_expected) fail(fmt::format("stdout had {} bytes, expected {}", o.out_size, out_expected));
    if (o.err_size != err_expected) fail(fmt::format("stderr had {} bytes, expected {}", o.err_size, err_expected));
    if (o.out_sha != out_hash.hex()) fail("stdout has the right size but not the right bytes (reordered or mixed)");
    if (o.err_sha != err_hash.hex()) fail("stderr has the right size but not the right bytes (reordered or mixed)");
  }

  void workspace() {
    Observed o = kit_.run({.shell = "cat hello.txt 'sub/dir/nested file.txt' && ./tool.sh"});
    o.expect_exit(0);
    o.expect_out("hello\nnested\ntool ran\n");
  }

  void workdir() {
    // A checkout of its own: git may not see the kit's other files as the user's would.
    Fixture checkout;
    if (std::string why = checkout.git_init(); !why.empty())
      skip(why + ": corral finds a workspace's top folder with git, so the kit cannot make a subfolder of one");
    Observed o = kit_.run({.shell = "cat 'dir/nested file.txt' && pwd && echo made > made-in-sub.txt",
                           .tree = &checkout,
                           .subdir = "sub"});
    o.expect_exit(0);
    const std::string prefix = "nested\n";
    const std::string pwd = o.out.rfind(prefix, 0) == 0 ? o.out.substr(prefix.size()) : "";
    if (pwd.empty()) fail(fmt::format("stdout was {}, expected the nested file and the folder", literal(o.out)));
    if (pwd.size() < 5 || pwd.compare(pwd.size() - 5, 5, "/sub\n") != 0)
      fail(fmt::format("the command ran in {}, not in a folder called sub (the one corral was started from)",
                       literal(pwd)));
    // An uploading provider runs the command on its copy: the user's own folder is untouched.
    if (fs::exists(checkout.root() / "sub" / "made-in-sub.txt") && spec_.features.has(Feature::archive_sync))
      fail("the command wrote into the user's own folder, not into the sandbox's copy of it");
  }

  void environment() {
    Observed o = kit_.run({.shell = "env", .env_names = {PlantedEnv::kForwardedName}});
    o.expect_exit(0);
    const std::string forwarded = fmt::format("{}={}\n", PlantedEnv::kForwardedName, planted_.forwarded());
    if (!o.out_complete || o.out.find(forwarded) == std::string::npos)
      fail(fmt::format("{} was forwarded with --env but the command's environment lacks it",
                       PlantedEnv::kForwardedName));
    // The provider's own credentials, as corral read them from its environment.
    for (const OptionSpec& option : spec_.options) {
      if (!option.secret) continue;
      for (const std::string& name : option.env) {
        std::optional<std::string> value = process_env(name);
        if (value && value->size() >= 6 && (o.out.find(*value) != std::string::npos ||
                                            o.err.find(*value) != std::string::npos))
          fail(fmt::format("the value of {} (the provider's secret option '{}') reached the command", name,
                           option.name));
      }
    }
  }

  void timeout() {
    Observed o = kit_.run({.shell = "echo started; sleep 120; echo not-reached", .timeout_seconds = 2});
    if (!o.result.error || o.result.error->code() != ErrorCode::timeout)
      fail(fmt::format("the run ended with exit code {}, expected a timeout (exit {})", o.result.exit_code,
                       kExitTimeout) +
           o.why());
    expect_stopped_in_time(o);
    if (o.result.exit_code != kExitTimeout) fail(fmt::format("exit code {}, expected {}", o.result.exit_code, kExitTimeout));
    if (o.out.find("not-reached") != std::string::npos) fail("the command ran on past its timeout");
    if (o.ms > (2 + kPromptSeconds) * 1000) fail(fmt::format("the run took {} ms to stop after a 2 s timeout", o.ms));
    kit_.expect_cleaned_up(o);
  }

  void interrupt() {
    Observed o = kit_.run({.shell = "echo started; sleep 120; echo not-reached", .cancel_marker = "started"});
    if (!o.result.error || o.result.error->code() != ErrorCode::cancelled)
      fail(fmt::format("the run ended with exit code {} instead of being interrupted", o.result.exit_code) + o.why());
    expect_stopped_in_time(o);
    if (o.result.exit_code != kExitCancelled)
      fail(fmt::format("exit code {}, expected {}", o.result.exit_code, kExitCancelled));
    if (o.out.find("not-reached") != std::string::npos) fail("the command ran on after Ctrl-C");
    if (o.ms > kPromptSeconds * 1000) fail(fmt::format("the run took {} ms to stop after Ctrl-C", o.ms));
    kit_.expect_cleaned_up(o);
  }

  void keep_reuse() {
    Observed first = kit_.run({.shell = "echo kept > state.txt", .keep = true});
    first.expect_exit(0);
    const SessionHandle& h = first.handle();
    if (!h.kept) fail("--keep did not keep the sandbox");
    kept_ = h.lease_id;
    kept_sandbox_ = h.sandbox_id;
    std::optional<ClaimFile> claim = kit_.claims().inspect(h.lease_id);
    if (!claim || !claim->claim || !claim->claim->kept) fail("the kept lease has no claim recording it as kept");
    Observed again = kit_.run({.shell = "cat state.txt", .lease = h.slug});
    again.expect_exit(0);
    again.expect_out("kept\n");
    if (!again.handle().reused) fail("the rerun with --id did not report reusing the sandbox");
    if (again.handle().sandbox_id != h.sandbox_id)
      fail(fmt::format("the rerun used sandbox {}, not the kept {}", again.handle().sandbox_id, h.sandbox_id));
  }

  void sync_deletions() {
    const std::string lease = kept_lease();
    fixture_.write("hello.txt", "hello again\n");
    fixture_.write("added.txt", "added\n");
    fixture_.remove("doomed.txt");
    struct Restore {
      Fixture& f;
      ~Restore() {
        f.write("hello.txt", "hello\n");
        f.write("doomed.txt", "doomed\n");
        f.remove("added.txt");
      }
    } restore{fixture_};
    Observed o = kit_.run({.shell = "echo made > made.txt", .lease = lease});
    o.expect_exit(0);
    Observed check = kit_.run(
        {.shell = "cat hello.txt added.txt made.txt; if [ -e doomed.txt ]; then echo doomed.txt is still there; fi",
         .lease = lease});
    check.expect_exit(0);
    check.expect_out("hello again\nadded\nmade\n");
  }

  void keep_on_failure() {
    Observed failed = kit_.run({.shell = "exit 5", .keep_on_failure = true});
    failed.expect_exit(5);
    if (!failed.handle().kept) fail("--keep-on-failure did not keep the sandbox of a failed run");
    if (!kit_.claims().inspect(failed.handle().lease_id)) fail("the kept lease has no claim");
    kit_.stop(failed.handle().lease_id);
    Observed passed = kit_.run({.shell = "true", .keep_on_failure = true});
    passed.expect_exit(0);
    kit_.expect_cleaned_up(passed);
  }

  void downloads() {
    const fs::path dir = kit_.download_dir();
    std::error_code ec;
    fs::remove_all(dir, ec);
    Observed o = kit_.run({.shell = "mkdir -p out && echo '<report/>' > out/r.xml && cp blob.bin out/ && "
                                    "ln -s /etc/passwd out/escape && exit 4",
                           .downloads = {"out/*.xml", "out/blob.bin", "out/escape", "absent/*"}});
    o.expect_exit(4);
    const SessionHandle& h = o.handle();
    if (!h.downloads) fail("the handle has no downloads after a run with --download");
    const DownloadSummary& d = *h.downloads;
    if (d.error) fail(fmt::format("the download failed: {}", printable(d.error->what())));
    if (read_text(dir / "out/r.xml") != "<report/>\n") fail("out/r.xml did not come back intact");
    if (read_text(dir / "out/blob.bin") != blob_bytes()) fail("the binary file did not come back byte for byte");
    if (fs::exists(fs::symlink_status(dir / "out/escape")) || d.refused.empty())
      fail("a link pointing out of the download folder was written instead of refused");
    if (d.missing != std::vector<std::string>{"absent/*"})
      fail(fmt::format("the pattern that matched nothing was not reported as missing (missing: {})",
                       fmt::join(d.missing, ", ")));
    kit_.expect_cleaned_up(o);

    Observed bounded = kit_.run({.shell = "true", .downloads = {"blob.bin"}, .max_download = 4096});
    bounded.expect_exit(0);
    if (!bounded.handle().downloads || !bounded.handle().downloads->error)
      fail("a download past --max-download was not stopped");
    if (fs::exists(dir / "blob.bin")) fail("a download past --max-download was unpacked");
    kit_.expect_cleaned_up(bounded);
  }

  void url() {
    std::string got = kit_.with_lease(kept_lease(), Lease::Access::observe, [](Lease& l) { return l.url(8080); });
    bool scheme = got.rfind("http://", 0) == 0 || got.rfind("https://", 0) == 0;
    std::size_t host = got.find("://") + 3;
    if (!scheme || got.size() <= host || got.find_first_of(" \t\r\n") != std::string::npos)
      fail(fmt::format("the URL of port 8080 is {}, not an http(s) URL", literal(got)));
  }

  void extend() {
    Sandbox s = kit_.with_lease(kept_lease(), Lease::Access::exclusive, [](Lease& l) { return l.extend(600); });
    if (s.id != kept_sandbox_) fail(fmt::format("extend answered for sandbox {}, not {}", printable(s.id), kept_sandbox_));
  }

  void listing() {
    const std::string lease = kept_lease();
    const std::string host = kit_.claims().host_id();
    auto [all, by_lease] = kit_.with_session([&](ProviderSession& session) {
      return std::pair(session.list({{wire::kOwnerLabel, wire::kOwnerValue}}),
                       session.list({{wire::kOwnerLabel, wire::kOwnerValue}, {wire::kLeaseLabel, lease}}));
    });
    const Sandbox* found = nullptr;
    for (const Sandbox& s : all)
      if (s.id == kept_sandbox_) found = &s;
    if (!found) fail(fmt::format("list did not return the kept sandbox {} ({} listed)", kept_sandbox_, all.size()));
    if (by_lease.size() != 1 || by_lease.front().id != kept_sandbox_)
      fail(fmt::format("list filtered by {}={} returned {} sandboxes, expected only {}", wire::kLeaseLabel, lease,
                       by_lease.size(), kept_sandbox_));
    auto label = [&](const char* key) -> std::optional<std::string> {
      auto it = found->labels.find(key);
      return it == found->labels.end() ? std::nullopt : std::optional(it->second);
    };
    // Without it, `stop --orphans` cannot see that a running corral is still creating the sandbox.
    if (label(wire::kLeaseLabel) != lease)
      fail(fmt::format("the listed sandbox's {} label is {}, expected {}", wire::kLeaseLabel,
                       label(wire::kLeaseLabel).value_or("missing"), lease));
    // Without it, another machine's `stop --orphans` on the same account would take it
    // for its own; only a provider whose sandboxes are all this machine's may do without.
    std::optional<std::string> host_label = label(wire::kHostLabel);
    if (host_label ? *host_label != host : !lists_only_this_host(spec_))
      fail(fmt::format("the listed sandbox's {} label is {}, expected this machine's {}", wire::kHostLabel,
                       host_label.value_or("missing"), host));
  }

  void pause_resume() {
    const std::string lease = kept_lease();
    kit_.run({.shell = "echo before the pause > paused.txt", .lease = lease}).expect_exit(0);
    Sandbox paused = kit_.with_lease(lease, Lease::Access::exclusive, [](Lease& l) { return l.pause(); });
    if (paused.state != "paused") fail(fmt::format("pause answered state {}, not \"paused\"", literal(paused.state)));
    auto state_now = [&] {
      return kit_.with_session([&](ProviderSession& s) { return s.get(kept_sandbox_).state; });
    };
    if (std::string now = state_now(); now != "paused")
      fail(fmt::format("get after pause says state {}, not \"paused\"", literal(now)));
    // A run in a paused lease resumes it first; its files are as they were.
    Observed again = kit_.run({.shell = "cat paused.txt", .lease = lease});
    again.expect_exit(0);
    again.expect_out("before the pause\n");
    if (std::string now = state_now(); now == "paused") fail("the sandbox is still paused after a run resumed it");
  }

  void fork_independent() {
    const std::string lease = kept_lease();
    kit_.run({.shell = "echo source > forked.txt", .lease = lease}).expect_exit(0);
    Forks forks = kit_.fork(lease, 2);
    if (forks.made.size() != 2) fail(fmt::format("2 forks were asked for, {} made", forks.made.size()));
    for (const Claim& c : forks.made)
      if (c.sandbox_id == kept_sandbox_) fail("a fork is the source sandbox itself, " + kept_sandbox_);
    Observed first = kit_.run({.shell = "cat forked.txt; echo fork > forked.txt", .lease = forks.made[0].lease_id});
    first.expect_exit(0);
    first.expect_out("source\n");
    for (const std::string& other : {forks.made[1].lease_id, lease}) {
      Observed o = kit_.run({.shell = "cat forked.txt", .lease = other});
      o.expect_exit(0);
      if (o.out != "source\n")
        fail(fmt::format("a write in one fork shows in {}: it printed {}", other == lease ? "the source" : "another fork",
                         literal(o.out)));
    }
    for (const Claim& c : forks.made) {
      kit_.stop(c.lease_id);
      if (std::string left = kit_.still_there(c.sandbox_id); !left.empty()) fail(left + " after the fork was stopped");
    }
  }

  void shards_from() {
    const std::string lease = kept_lease();
    kit_.run({.shell = "echo prepared > prepared.txt; rm -f shard-made.txt", .lease = lease}).expect_exit(0);
    FanoutResult fan = kit_.fanout_from(lease, 2, "cat prepared.txt && echo made > shard-made.txt");
    if (fan.exit_code != 0) {
      std::vector<ShardSummary> why = fanout_summary(fan);
      fail(fmt::format("--shards 2 --from failed with exit code {}{}", fan.exit_code,
                       why.empty() ? "" : ": " + printable(why.front().text)));
    }
    for (const ShardOutcome& s : fan.shards) {
      if (!s.result.handle) fail("a shard has no session handle");
      const SessionHandle& h = *s.result.handle;
      if (h.sandbox_id == kept_sandbox_) fail("a shard ran in the source sandbox itself, not a fork");
      if (kit_.claims().inspect(h.lease_id)) fail("the fork of a shard is still claimed after the fan-out");
      if (std::string left = kit_.still_there(h.sandbox_id); !left.empty()) fail(left + " after the fan-out ended");
    }
    Observed source = kit_.run({.shell = "test ! -e shard-made.txt && cat prepared.txt", .lease = lease});
    if (source.result.exit_code != 0) fail("a shard's write shows in the source lease" + source.why());
    source.expect_out("prepared\n");
  }

  void stop() {
    const std::string lease = kept_lease();
    const std::string sandbox = kept_sandbox_;
    kept_.clear();
    kit_.stop(lease);
    if (kit_.claims().inspect(lease)) fail("the lease is still claimed after stop");
    if (std::string left = kit_.still_there(sandbox); !left.empty()) fail(left + " after stop");
  }

  void nothing_left() {
    std::vector<std::string> left;
    for (const Kit::Made& m : kit_.made()) {
      if (m.lease_id == kept_) continue;  // a session check failed before stop; cleaned below
      if (kit_.claims().inspect(m.lease_id)) left.push_back("lease " + m.lease_id + " is still claimed");
      if (std::string there = kit_.still_there(m.sandbox_id); !there.empty()) left.push_back(there);
    }
    if (!left.empty()) fail(fmt::format("{} left behind: {}", left.size(), left.front()));
  }

  void network_none() {
    expect_reachable_when_open();
    const Reach seen = reach({.mode = NetworkPolicy::Mode::none});
    if (seen == Reach::reached)
      fail(fmt::format("with --network none the command still reached {}: the provider does not enforce the policy",
                       target_.text()));
  }

  void network_allowlist() {
    expect_reachable_when_open();
    const std::string other = target_.ip() == kUnusedAddress ? kOtherUnusedAddress : kUnusedAddress;
    if (reach({.mode = NetworkPolicy::Mode::allow, .allow = {other}}) == Reach::reached)
      fail(fmt::format("with --network allow:{} the command still reached {}: the provider does not enforce its "
                       "allow list",
                       other, target_.text()));
    if (reach({.mode = NetworkPolicy::Mode::allow, .allow = {target_.ip()}}) != Reach::reached)
      fail(fmt::format("with --network allow:{} the command could not reach {}, which the list names",
                       target_.ip(), target_.text()));
  }

  void destroy_twice() {
    const std::string lease = random_hex(6);
    Sandbox sandbox = kit_.with_session([&](ProviderSession& session) {
      Sandbox made = session.create({lease, "conformance-" + lease,
                                     wire::owner_labels(lease, "conformance-" + lease, kit_.claims().host_id()),
                                     fixture_.root().string(), NetworkPolicy{}});
      kit_.made_outside_a_run(lease, made.id);
      session.destroy(made);
      return made;
    });
    // A fresh session, as the next corral's cleanup would be.
    std::string second = kit_.with_session([&](ProviderSession& session) -> std::string {
      try {
        session.destroy(sandbox);
      } catch (const Error& e) {
        if (e.code() != ErrorCode::not_found) return printable(e.what());
      }
      return "";
    });
    if (!second.empty())
      fail(fmt::format("destroying sandbox {} once more failed: {}; a sandbox that is already gone must count as "
                       "destroyed (or be not-found), as cleanup may meet one the provider removed",
                       printable(sandbox.id), second));
    if (std::string left = kit_.still_there(sandbox.id); !left.empty()) fail(left + " after it was destroyed");
  }

  // Stops the sandboxes runs kept on purpose, other than the shared session lease, once
  // the check that kept them is over (it may have failed before stopping them itself).
  void stop_kept() noexcept {
    for (const Kit::Made& m : kit_.made()) {
      if (!m.kept || m.lease_id == kept_) continue;
      try {
        if (kit_.claims().inspect(m.lease_id)) kit_.stop(m.lease_id);
      } catch (const std::exception&) {
        // reported by nothing-left
      }
    }
  }

  // Stops whatever is still claimed at the end, so the kit never leaves a sandbox behind
  // that a working `stop` can remove.
  void clean_up() noexcept {
    for (const Kit::Made& m : kit_.made()) {
      try {
        if (kit_.claims().inspect(m.lease_id)) kit_.stop(m.lease_id);
      } catch (const std::exception&) {
      }
    }
  }

 private:
  // What the command saw trying to reach the target under `policy`; fails when it could
  // not try.
  Reach reach(const NetworkPolicy& policy) {
    Observed o = kit_.run({.shell = target_.script(), .timeout_seconds = kProbeSeconds, .network = policy});
    o.expect_exit(0);
    const Reach seen = read_reach(o.out);
    if (seen == Reach::unknown)
      fail(fmt::format("trying {} with --network {} printed {}", target_.text(), to_string(policy), literal(o.out)));
    if (seen == Reach::no_bash) skip("the sandbox has no bash, whose /dev/tcp the kit connects with");
    return seen;
  }

  // Skips the check unless an open network reaches the target: only then does a policy
  // that keeps the command from it show anything.
  void expect_reachable_when_open() {
    if (!open_reaches_) open_reaches_ = reach({}) == Reach::reached;
    if (*open_reaches_) return;
    skip(fmt::format("even with an open network the command could not reach {}, so a policy cannot be seen at work; {}",
                     target_.text(),
                     target_.own() ? "a sandbox on another machine cannot reach this machine's loopback: pass "
                                     "--network-target IP:PORT, an address the provider's sandboxes can reach"
                                   : "check that the provider's sandboxes can reach that address"));
  }

  // The lease the session checks share, kept (made now when keep_reuse did not).
  std::string kept_lease() {
    if (kept_.empty()) {
      Observed o = kit_.run({.shell = "true", .keep = true});
      o.expect_exit(0);
      kept_ = o.handle().lease_id;
      kept_sandbox_ = o.handle().sandbox_id;
    }
    return kept_;
  }

  Kit& kit_;
  Fixture& fixture_;
  const PlantedEnv& planted_;
  const ProviderSpec& spec_;
  const ReachTarget& target_;
  std::optional<bool> open_reaches_;  // whether an open network reaches the target, once tried
  std::string kept_;
  std::string kept_sandbox_;
};

struct CheckDef {
  const char* id;
  const char* title;
  std::vector<Feature> needs;       // every one
  std::vector<Feature> needs_any;   // at least one, when not empty
  void (Checks::*body)();
};

const std::vector<CheckDef>& check_defs() {
  using F = Feature;
  static const std::vector<CheckDef> defs = {
      {"lifecycle", "a run creates a sandbox, runs the command and destroys the sandbox", {}, {}, &Checks::lifecycle},
      {"exit-codes", "exit codes 1, 42 and 255 come back unchanged", {}, {}, &Checks::exit_codes},
      {"argv", "the command's arguments arrive byte for byte: brackets, quotes, $, globs, spaces, newlines, empty "
               "words",
       {}, {}, &Checks::argv_exact},
      {"output-separate", "stdout and stderr arrive separately, byte for byte", {}, {}, &Checks::output_separate},
      {"output-binary", "binary output arrives intact: every byte value", {}, {}, &Checks::output_binary},
      {"output-large", "50 MiB on stdout and 5 MiB on stderr arrive complete and in order", {}, {},
       &Checks::output_large},
      {"workspace", "the workspace arrives: nested, executable and binary files", {}, {}, &Checks::workspace},
      {"workdir", "the command runs in the sandbox's copy of the folder corral was started from", {}, {},
       &Checks::workdir},
      {"environment", "variables named with --env arrive; corral's environment and secrets do not", {}, {},
       &Checks::environment},
      {"timeout", "--timeout stops the command with exit code 124 and removes the sandbox", {}, {}, &Checks::timeout},
      {"interrupt", "Ctrl-C stops the command with exit code 130 and removes the sandbox", {}, {},
       &Checks::interrupt},
      {"network-none", "--network none keeps the command from reaching an address an open network reaches",
       {F::network_policy}, {}, &Checks::network_none},
      {"network-allowlist", "--network allow: lets the command reach the addresses listed and no other",
       {F::network_allowlist}, {}, &Checks::network_allowlist},
      {"destroy-twice", "destroying a sandbox that is already gone is harmless", {}, {}, &Checks::destroy_twice},
      {"keep-reuse", "a kept sandbox is reused by its slug and keeps its state", {F::run_session}, {},
       &Checks::keep_reuse},
      {"sync-deletions", "reuse syncs exactly: changes and new files arrive, deleted files go, sandbox files stay",
       {F::run_session}, {F::archive_sync, F::workspace_mount}, &Checks::sync_deletions},
      {"keep-on-failure", "--keep-on-failure keeps a failed run's sandbox and not a passing one's", {F::run_session},
       {}, &Checks::keep_on_failure},
      {"downloads", "--download brings back a failed command's files byte for byte, refuses a link out, holds the bound",
       {F::run_downloads}, {}, &Checks::downloads},
      {"url", "a kept sandbox's port has an http(s) URL", {F::run_session, F::url_bridge}, {}, &Checks::url},
      {"extend", "a kept sandbox's lifetime can be extended", {F::run_session, F::keep_alive}, {}, &Checks::extend},
      {"listing", "the provider lists corral's sandboxes with their lease and host labels",
       {F::run_session, F::cleanup}, {}, &Checks::listing},
      {"pause-resume", "a paused sandbox says so, and a run resumes it with its files as they were",
       {F::run_session, F::pause_resume}, {}, &Checks::pause_resume},
      {"fork", "forks of a kept sandbox are independent: a write in one shows in neither the source nor another",
       {F::run_session, F::fork}, {}, &Checks::fork_independent},
      {"shards-from", "--shards --from runs each shard in a fork, removes the forks and leaves the source as it was",
       {F::run_session, F::fork}, {}, &Checks::shards_from},
      {"stop", "corral stop removes a kept sandbox and forgets its lease", {F::run_session}, {}, &Checks::stop},
      {"nothing-left", "nothing the kit made is left: no claim, no sandbox", {}, {}, &Checks::nothing_left},
  };
  return defs;
}

// Empty when `spec` has what `def` needs; else the reason to skip.
std::string missing_features(const CheckDef& def, const ProviderSpec& spec) {
  for (Feature f : def.needs)
    if (!spec.features.has(f)) return fmt::format("the provider does not advertise {}", to_string(f));
  if (def.needs_any.empty()) return "";
  std::vector<std::string> names;
  for (Feature f : def.needs_any) {
    if (spec.features.has(f)) return "";
    names.emplace_back(to_string(f));
  }
  return fmt::format("the provider advertises none of {}", fmt::join(names, ", "));
}

}  // namespace

std::vector<std::string> conformance_check_ids() {
  std::vector<std::string> ids;
  for (const CheckDef& def : check_defs()) ids.emplace_back(def.id);
  return ids;
}

namespace {

// Refuses (invalid-argument) a name in `only` that is no check's, listing the checks.
void check_selection(const std::vector<std::string>& only) {
  const std::vector<std::string> ids = conformance_check_ids();
  for (const std::string& name : only) {
    if (std::find(ids.begin(), ids.end(), name) != ids.end()) continue;
    // "--only a,b": one check per --only, which repeats.
    if (name.find(',') != std::string::npos) {
      std::vector<std::string> each;
      for (size_t start = 0; start <= name.size();) {
        const size_t end = std::min(name.find(',', start), name.size());
        each.push_back("--only " + name.substr(start, end - start));
        start = end + 1;
      }
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("--only {}: there is no such check; --only takes one check and repeats", printable(name)),
                  fmt::format("write `{}`", printable(fmt::format("{}", fmt::join(each, " ")))));
    }
    throw Error(ErrorCode::invalid_argument, fmt::format("--only {}: there is no such check", printable(name)),
                fmt::format("the checks are: {}", fmt::join(ids, ", ")));
  }
}

// Runs the check `def` with its deadline; its result.
CheckResult run_check(const CheckDef& def, Checks& checks, Kit& kit, const ConformanceSetup& setup,
                      const ProviderSpec& spec) {
  CheckResult r{def.id, def.title};
  Clock::time_point start = Clock::now();
  if (std::string why = missing_features(def, spec); !why.empty()) {
    r.outcome = CheckResult::Outcome::skipped;
    r.detail = why;
  } else if (setup.user.cancelled()) {
    r.outcome = CheckResult::Outcome::skipped;
    r.detail = "interrupted";
  } else {
    kit.begin_check(start + setup.check_timeout);
    try {
      (checks.*def.body)();
    } catch (const CheckSkipped& e) {
      r.outcome = CheckResult::Outcome::skipped;
      r.detail = e.what();
    } catch (const CheckFailed& e) {
      r.outcome = CheckResult::Outcome::failed;
      r.detail = e.what();
    } catch (const Error& e) {
      r.outcome = CheckResult::Outcome::failed;
      r.detail = printable(e.what());
    } catch (const std::exception& e) {
      r.outcome = CheckResult::Outcome::failed;
      r.detail = fmt::format("unexpected failure: {}", printable(e.what()));
    }
    if (kit.end_check()) {
      r.outcome = CheckResult::Outcome::failed;
      r.detail = fmt::format("stopped: the check was still running after {} (--check-timeout){}",
                             format_duration(setup.check_timeout.count()),
                             r.detail.empty() ? "" : "; it then said: " + r.detail);
    }
  }
  checks.stop_kept();
  r.ms = ms_since(start);
  return r;
}

}  // namespace

ConformanceReport run_conformance(const ConformanceSetup& setup,
                                  const std::function<void(const CheckResult&)>& on_check) {
  check_selection(setup.only);
  ReachTarget target(setup.network_target);
  std::string provider;
  ProviderSpec spec;
  {
    CaptureUi ui(setup.user);
    Providers providers(setup.registry, setup.config, process_env);
    providers.isolate(kConformanceCancelGrace);
    provider = providers.resolve(setup.choice);
    spec = providers.spec(provider);
    providers.open(provider, setup.choice, ui);  // refuses a broken plugin or bad settings up front
  }
  ConformanceReport report;
  report.provider = spec.name;
  Fixture fixture;
  PlantedEnv planted;
  Kit kit(setup, spec.name, fixture, planted);
  Checks checks(kit, fixture, planted, spec, target);
  for (const CheckDef& def : check_defs()) {
    if (!setup.only.empty() && std::find(setup.only.begin(), setup.only.end(), def.id) == setup.only.end()) continue;
    CheckResult r = run_check(def, checks, kit, setup, spec);
    on_check(r);
    report.checks.push_back(std::move(r));
  }
  checks.clean_up();
  return report;
}

std::string conformance_to_json(const ConformanceReport& report) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  json::write_string(w, "provider", report.provider);
  w.Key("passed");
  w.Int(report.count(CheckResult::Outcome::passed));
  w.Key("failed");
  w.Int(report.count(CheckResult::Outcome::failed));
  w.Key("skipped");
  w.Int(report.count(CheckResult::Outcome::skipped));
  w.Key("checks");
  w.StartArray();
  for (const CheckResult& c : report.checks) {
    w.StartObject();
    json::write_string(w, "id", c.id);
    json::write_string(w, "title", c.title);
    json::write_string(w, "outcome", to_string(c.outcome));
    if (!c.detail.empty()) json::write_string(w, "detail", c.detail);
    w.Key("ms");
    w.Int64(c.ms);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

}  // namespace corral
