// testbox: a provider for testing the run engine through the real loader and ABI. Its
// sandboxes are folders; commands run unjailed in them. TESTBOX_FAIL makes a named
// primitive fail, so every failure path of the run contract can be exercised; TESTBOX_CRASH
// makes one crash, throw past every catch, exit or hang, for crash isolation; TESTBOX_FILL
// fills a disk once a primitive is done, so the write corral makes next meets a full disk;
// TESTBOX_FLAW breaks a promise of the run contract, for the conformance kit to catch.
// Built with TESTBOX_MOUNT it is "mountbox": it mounts (uses) the user's tree in place
// instead of receiving an archive, like the workspace-mount providers. Testbox records the
// network policy of a sandbox (the file `network`) and enforces it as the stand-ins do: a
// command may reach this machine's network only when the policy is open or its allow
// list names 127.0.0.1 (the one address tests reach); otherwise it runs with no network.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <filesystem>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "corral/sdk.hpp"
#include "corral/sdk/download.hpp"
#include "corral/sdk/labels.hpp"
#include "corral/os/process.hpp"
#include "corral/sdk/sync.hpp"
#include "fill_disk.hpp"
#include "private_network.hpp"

namespace fs = std::filesystem;

namespace {

#ifdef TESTBOX_MOUNT
constexpr const char* kIdentity =
    R"json("name": "mountbox", "aliases": [], "features": ["run-session", "workspace-mount", "cleanup"],)json";
#else
constexpr const char* kIdentity = R"json("name": "testbox", "aliases": ["tb"],
  "features": ["run-session", "archive-sync", "url-bridge", "keep-alive", "cleanup", "run-downloads",
               "network-policy", "network-allowlist", "network-allowlist-domains", "pause-resume", "fork"],
  "idle": ["pause"],)json";
#endif

const std::string kSpec = std::string("{") + kIdentity + R"json(
  "family": "test",
  "kind": "delegated-run",
  "targets": ["linux"],
  "options": [
    {"name": "dir", "type": "string", "env": ["TESTBOX_DIR"], "help": "where sandboxes live"},
    {"name": "fail", "type": "string", "env": ["TESTBOX_FAIL"], "help": "primitives that fail: create,upload,exec,destroy,get,list,pause,resume,fork"},
    {"name": "crash", "type": "string", "env": ["TESTBOX_CRASH"],
     "help": "PRIMITIVE:HOW pairs (segv, orphan-segv, abort, throw, runtime-error, exit, hang), e.g. exec:segv; open is one too"},
    {"name": "flaw", "type": "string", "env": ["TESTBOX_FLAW"],
     "help": "promises to break: ignore-cancel (exec), ignore-network, ignore-cwd (runs in the workspace's top), host-cwd (runs in the user's own folder), fail-destroy-gone, join-argv (the argv run as one unquoted shell string), forward-named (TESTBOX_API_TOKEN passed on by name), forward-shaped (every *_TOKEN and *_KEY passed on), list-skips-paused, misspelt-option (reads option 'dirr'), buffer-output (stdout handed over when the command ends), get-never-not-found (get answers for any id)"},
    {"name": "fill", "type": "string", "env": ["TESTBOX_FILL"],
     "help": "PRIMITIVE:PATH: once create, upload or exec is done, write PATH until its disk is full"},
    {"name": "pause", "type": "string", "env": ["TESTBOX_PAUSE"],
     "help": "PRIMITIVE:before|after: write PRIMITIVE to DIR.paused there and wait forever (to SIGKILL corral); PRIMITIVE:until-stopped: the same, until corral is told to stop, then go on; PRIMITIVE:linger: take 4 s, deaf to cancellation"},
    {"name": "token", "type": "string", "env": ["TESTBOX_TOKEN"], "secret": true, "help": "a secret that must never show"},
    {"name": "leak", "type": "bool", "default": "false", "env": ["TESTBOX_LEAK"],
     "help": "run commands with corral's whole environment, as a careless plugin would"},
    {"name": "quota", "type": "int", "default": "0", "env": ["TESTBOX_QUOTA"],
     "help": "refuse (quota) a create, a fork or a resume while this many sandboxes exist (a resume: run); 0 = no limit"},
    {"name": "size", "type": "int", "default": "1", "env": ["TESTBOX_SIZE"], "help": "an integer option"},
    {"name": "tier", "type": "string", "default": "small", "choices": ["small", "large", "extra large"],
     "env": ["TESTBOX_TIER"], "help": "an option with choices, one of two words"},
    {"name": "account-file", "type": "string", "env": ["TESTBOX_ACCOUNT_FILE"],
     "help": "a file naming the account this instance works for, as a kubeconfig's current context does: its sandboxes live in DIR/ACCOUNT, where no other account sees them"}
  ],
  "docs": {"category": "test double", "location": "local", "gpu": "no", "cleanupOwner": "corral",
           "bestFit": "tests", "caveat": "not a sandbox"}
})json";

// An exclusive flock on `path` (created when missing), held while it lives.
class QuotaLock {
 public:
  explicit QuotaLock(const std::string& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)) {
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~QuotaLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  QuotaLock(const QuotaLock&) = delete;
  QuotaLock& operator=(const QuotaLock&) = delete;

 private:
  int fd_;
};

class Testbox : public corral::sdk::Provider {
 public:
  explicit Testbox(const corral::sdk::Options& o)
      : dir_(o.get("dir")), fail_(o.get("fail")), crash_(o.get("crash")), fill_(o.get("fill")), pause_(o.get("pause")),
        flaw_(o.get("flaw")), token_(o.get("token")),
        leak_(o.get_bool("leak", false)), quota_(o.get_int("quota", 0)) {
    maybe_fail("open");
    if (flawed("misspelt-option")) dir_ = o.get("dirr", dir_.string());
    if (dir_.empty()) throw corral::Error(corral::ErrorCode::invalid_argument, "testbox needs TESTBOX_DIR");
    if (const std::string file = o.get("account-file"); !file.empty()) {
      std::ifstream in(file);
      std::getline(in, account_);
      if (account_.empty()) throw corral::Error(corral::ErrorCode::invalid_argument, file + " names no account");
      dir_ /= account_;
      fs::create_directories(dir_);
    }
  }

  std::string target() const override { return account_.empty() ? "" : "account " + account_; }

  corral::Sandbox create(const corral::CreateRequest& r, const corral::sdk::Host&) override {
    maybe_fail("create");
    fs::path d = dir_ / ("tb-" + r.lease_id);
    // Counting and creating under one lock (beside the folder: list() reads everything in
    // it), so creations at once cannot all slip under the quota.
    QuotaLock lock(dir_.string() + ".quota-lock");
    if (quota_ > 0) {
      std::int64_t live = 0;
      std::error_code ec;
      for (auto& e : fs::directory_iterator(dir_, ec)) live += e.is_directory() ? 1 : 0;
      if (live >= quota_)
        throw corral::Error(corral::ErrorCode::quota,
                            "testbox quota reached: " + std::to_string(live) + " sandboxes exist",
                            "stop some, or raise TESTBOX_QUOTA");
    }
    fs::create_directories(d / "workspace");
    try {
      corral::sdk::write_labels(d, r.labels);
    } catch (const corral::Error& e) {
      // A disk with no room (a test's `ulimit -f 0`, aimed at corral's claim) costs the
      // sandbox its labels, as it cost testbox's other small files, not its creation.
      if (e.code() != corral::ErrorCode::quota) throw;
    }
    std::ofstream(d / "seconds") << 0;
    std::ofstream(d / "mount") << r.workspace;
    std::ofstream(d / "network") << corral::to_string(r.network);  // what create was asked to enforce
    if (!r.idle.empty()) std::ofstream(d / "idle") << r.idle;
    maybe_pause("create", "after");
    maybe_fill("create");
    return sandbox("tb-" + r.lease_id);
  }

#ifndef TESTBOX_MOUNT  // mountbox provides neither: the loader test sees a primitive left out
  corral::Sandbox pause(const corral::Sandbox& s, const corral::sdk::Host&) override {
    maybe_fail("pause");
    if (!fs::exists(dir_ / s.id)) throw corral::Error(corral::ErrorCode::not_found, "testbox " + s.id + " is gone");
    std::ofstream(dir_ / s.id / "paused") << "paused\n";
    return sandbox(s.id);
  }

  corral::Sandbox resume(const corral::Sandbox& s, const corral::sdk::Host&) override {
    maybe_fail("resume");
    if (!fs::exists(dir_ / s.id)) throw corral::Error(corral::ErrorCode::not_found, "testbox " + s.id + " is gone");
    if (quota_ > 0 && running() >= quota_)
      throw corral::Error(corral::ErrorCode::quota, "testbox quota reached: cannot resume " + s.id,
                          "stop some, or raise TESTBOX_QUOTA");
    fs::remove(dir_ / s.id / "paused");
    return sandbox(s.id);
  }

  // Each fork a copy of the source's folder with the target's labels; past TESTBOX_QUOTA
  // a fork fails on its own (the call goes on), as a provider's per-sandbox limit does.
  std::vector<corral::ForkOutcome> fork(const corral::Sandbox& source, const std::vector<corral::ForkTarget>& targets,
                                        const corral::sdk::Host& host) override {
    maybe_fail("fork");
    if (!fs::exists(dir_ / source.id))
      throw corral::Error(corral::ErrorCode::not_found, "testbox " + source.id + " is gone");
    std::vector<corral::ForkOutcome> out;
    QuotaLock lock(dir_.string() + ".quota-lock");
    for (const corral::ForkTarget& t : targets) {
      corral::ForkOutcome made;
      if (quota_ > 0 && live() >= quota_) {
        made.error = corral::Error(corral::ErrorCode::quota, "testbox quota reached: cannot fork " + source.id,
                                   "stop some, or raise TESTBOX_QUOTA");
      } else {
        const std::string id = "tb-" + t.lease_id;
        fs::copy(dir_ / source.id, dir_ / id, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
        fs::remove(dir_ / id / "paused");
        corral::sdk::write_labels(dir_ / id, t.labels);
        made.sandbox = sandbox(id);
      }
      out.push_back(std::move(made));
    }
    // A provider whose fork finishes whatever the user asked: corral must remove the forks.
    maybe_wait_for_stop("fork", host);
    return out;
  }

#endif

  corral::Sandbox get(const std::string& id, const corral::sdk::Host&) override {
    maybe_fail("get");
    if (!fs::exists(dir_ / id) && !flawed("get-never-not-found")) throw corral::Error(corral::ErrorCode::not_found, "testbox " + id + " is gone");
    return sandbox(id);
  }

  std::vector<corral::Sandbox> list(const corral::StringMap&, const corral::sdk::Host&) override {
    maybe_fail("list");
    std::vector<corral::Sandbox> out;
    std::error_code ec;
    for (auto& e : fs::directory_iterator(dir_, ec))
      if (!flawed("list-skips-paused") || !fs::exists(e.path() / "paused"))
        out.push_back(sandbox(e.path().filename().string()));
    return out;
  }

  void destroy(const corral::Sandbox& s, const corral::sdk::Host& host) override {
    maybe_fail("destroy");
    if (flawed("fail-destroy-gone") && !fs::exists(dir_ / s.id))
      throw corral::Error(corral::ErrorCode::unavailable, "testbox cannot destroy " + s.id + ": it does not exist");
    // A real provider polling cancelled() here would abort cleanup after Ctrl-C.
    if (host.cancelled()) throw corral::Error(corral::ErrorCode::cancelled, "destroy was told to stop");
    fs::remove_all(dir_ / s.id);
    maybe_pause("destroy", "after");
  }

  void upload(const corral::Sandbox& s, const corral::UploadRequest& r, const corral::sdk::Host&) override {
    maybe_fail("upload");
    if (s.secrets.at("token") != "tok-" + s.id)
      throw corral::Error(corral::ErrorCode::auth, "secrets did not travel back to the plugin");
    fs::path ws = dir_ / s.id / "workspace";
    auto p = corral::os::capture_process({{"tar", "-xzf", r.archive_path, "-C", ws.string()}});
    if (p.exit_code != 0) throw corral::Error(corral::ErrorCode::internal, "tar failed: " + p.err);
    corral::sdk::remove_paths_under(ws, r.removed);
    maybe_fill("upload");
  }

  corral::ExecResult exec(const corral::Sandbox& s, const corral::Command& c, const corral::sdk::Host& host) override {
    maybe_fail("exec");
    if (fs::exists(dir_ / s.id / "paused"))
      throw corral::Error(corral::ErrorCode::unavailable, "testbox " + s.id + " is paused: it runs nothing");
    corral::os::ProcessSpec spec;
    spec.argv = c.argv.empty() ? std::vector<std::string>{"/bin/sh", "-c", c.shell} : c.argv;
    if (flawed("join-argv") && !c.argv.empty()) {
      // The argv joined into one shell string, unquoted: what a careless plugin sends an API.
      std::string joined;
      for (const std::string& a : c.argv) joined += (joined.empty() ? "" : " ") + a;
      spec.argv = {"/bin/sh", "-c", joined};
    }
    std::ifstream mount(dir_ / s.id / "mount");
    const fs::path user_tree((std::istreambuf_iterator<char>(mount)), std::istreambuf_iterator<char>());
#ifdef TESTBOX_MOUNT
    const fs::path top = user_tree;
#else
    const fs::path top = flawed("host-cwd") ? user_tree : dir_ / s.id / "workspace";
#endif
    spec.cwd = (flawed("ignore-cwd") ? top : top / c.cwd).string();
    if (leak_) {
      spec.inherit = {"*"};  // the mistake the conformance kit must catch
    } else {
      spec.env = corral::os::command_environment(c.env);
      for (char** entry = environ; *entry; ++entry) {  // what a careless plugin passes on too
        const std::string_view var(*entry);
        const std::string_view name = var.substr(0, var.find('='));
        const bool shaped = (name.size() > 6 && name.substr(name.size() - 6) == "_TOKEN") ||
                            (name.size() > 4 && name.substr(name.size() - 4) == "_KEY");
        if ((flawed("forward-named") && name == "TESTBOX_API_TOKEN") || (flawed("forward-shaped") && shaped))
          spec.env->emplace_back(var);
      }
    }
    if (!flawed("ignore-network") && !network_allowed(s.id)) {
      // A network namespace of its own, holding only a loopback that is down.
      std::vector<std::string> cut = {"unshare", "--net"};
      if (::geteuid() != 0) cut.insert(cut.begin() + 1, "--map-current-user");
      spec.argv.insert(spec.argv.begin(), cut.begin(), cut.end());
    }
    const bool deaf = flawed("ignore-cancel");
    std::string held;  // buffer-output: stdout kept until the command ends
    auto o = corral::os::run_process(
        spec,
        [&](std::string_view d) {
          if (flawed("buffer-output")) held += d;
          else host.emit(CORRAL_STDOUT, d);
        },
        [&](std::string_view d) { host.emit(CORRAL_STDERR, d); }, [&] { return !deaf && host.cancelled(); },
        deaf ? 0 : c.timeout_seconds);
    if (!held.empty()) host.emit(CORRAL_STDOUT, held);
    if (o.cancelled) throw corral::Error(corral::ErrorCode::cancelled, "stopped");
    if (o.timed_out) throw corral::Error(corral::ErrorCode::timeout, "timed out");
    maybe_fill("exec");
    return {o.exit_code};
  }

#ifndef TESTBOX_MOUNT
  corral::DownloadResult download(const corral::Sandbox& s, const corral::DownloadRequest& r,
                                  const corral::sdk::Host& host) override {
    maybe_fail("download");
    maybe_wait_for_stop("download", host);
    fs::path folder = dir_ / s.id / "workspace" / r.cwd;
    auto run = [](const std::string& script, const corral::sdk::OutputSink& out, const corral::sdk::OutputSink& err,
                  const std::function<bool()>& stop) {
      corral::os::ProcessSpec spec;
      spec.argv = {"/bin/sh", "-c", script};
      auto o = corral::os::run_process(spec, out, err, stop, 0);
      return corral::sdk::StreamedScript{o.exit_code, o.cancelled};
    };
    return corral::sdk::download_through_stdout(r, folder.string(), run, [&] { return host.cancelled(); });
  }
#endif

  corral::Sandbox extend(const corral::Sandbox& s, std::int64_t seconds, const corral::sdk::Host&) override {
    std::ofstream(dir_ / s.id / "seconds") << seconds;
    return sandbox(s.id);
  }

  std::string url(const corral::Sandbox& s, int port, const corral::sdk::Host&) override {
    return "https://" + std::to_string(port) + "-" + s.id + ".testbox.invalid";
  }

 private:
  // True when TESTBOX_FLAW names `flaw`.
  bool flawed(const std::string& flaw) const { return ("," + flaw_ + ",").find("," + flaw + ",") != std::string::npos; }

  // True when sandbox `id`'s policy lets its commands use this machine's network.
  bool network_allowed(const std::string& id) const {
    std::ifstream in(dir_ / id / "network");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const corral::NetworkPolicy policy = corral::parse_network_policy(text);
    return policy.mode == corral::NetworkPolicy::Mode::open ||
           (policy.mode == corral::NetworkPolicy::Mode::allow && corral::test::allows_loopback(policy.allow));
  }

  void maybe_fail(const std::string& primitive) const {
    maybe_pause(primitive, "before");
    maybe_linger(primitive);
    maybe_crash(primitive);
    if (("," + fail_ + ",").find("," + primitive + ",") != std::string::npos)
      throw corral::Error(corral::ErrorCode::unavailable,
                          "testbox " + primitive + " failed as asked (token " + token_ + ")", "unset TESTBOX_FAIL");
  }

  // Writes TESTBOX_FILL's path until its disk is full, if it names `primitive`.
  void maybe_fill(const std::string& primitive) const {
    if (fill_.rfind(primitive + ":", 0) != 0) return;
    if (!corral::test::fill_disk(fill_.substr(primitive.size() + 1)))
      throw corral::Error(corral::ErrorCode::internal, "testbox could not fill the disk of " + fill_);
  }

  // Stops for good at `primitive`'s `when` if TESTBOX_PAUSE asks, saying so in DIR.paused.
  void maybe_pause(const std::string& primitive, const std::string& when) const {
    if (pause_ != primitive + ":" + when) return;
    std::ofstream(dir_.string() + ".paused") << primitive << "\n";  // beside DIR: list() reads DIR
    for (;;) ::pause();
  }

  // Takes 4 s at `primitive` (twice the tests' call-timeout) before going on, if
  // TESTBOX_PAUSE asks: a primitive that is slow but not stuck.
  void maybe_linger(const std::string& primitive) const {
    if (pause_ == primitive + ":linger") std::this_thread::sleep_for(std::chrono::seconds(4));
  }

  // Waits at `primitive` until corral is told to stop, then goes on as if nothing happened
  // (a primitive that finishes its work whatever the user asked), if TESTBOX_PAUSE asks.
  void maybe_wait_for_stop(const std::string& primitive, const corral::sdk::Host& host) const {
    if (pause_ != primitive + ":until-stopped") return;
    std::ofstream(dir_.string() + ".paused") << primitive << "\n";
    while (!host.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  // Crashes the way TESTBOX_CRASH asks for `primitive`, if it does.
  void maybe_crash(const std::string& primitive) const {
    std::stringstream items(crash_);
    for (std::string item; std::getline(items, item, ',');) {
      if (item.rfind(primitive + ":", 0) != 0) continue;
      const std::string how = item.substr(primitive.size() + 1);
      if (how == "segv") {
        volatile int* volatile nowhere = nullptr;
        *nowhere = 42;
      } else if (how == "abort") {
        std::abort();
      } else if (how == "throw") {
        // A plugin thread's exception reaches no catch of the SDK's: std::terminate.
        std::thread([] { throw std::runtime_error("testbox: a runaway exception"); }).join();
      } else if (how == "runtime-error") {
        // Not a corral::Error: a bug the SDK's wrapper catches and reports as a crash.
        throw std::runtime_error("testbox: an uncaught runtime error");
      } else if (how == "orphan-segv") {
        // A child that keeps every descriptor of the plugin's process open outlives it.
        if (::fork() == 0) {
          ::sleep(30);
          ::_exit(0);
        }
        volatile int* volatile nowhere = nullptr;
        *nowhere = 42;
      } else if (how == "exit") {
        std::_Exit(3);
      } else if (how == "hang") {
        for (;;) ::pause();  // deaf to cancelled(), like a plugin stuck in a blocking call
      }
    }
  }

  // How many sandbox folders exist, and how many of them are not paused.
  std::int64_t live() const {
    std::int64_t n = 0;
    std::error_code ec;
    for (auto& e : fs::directory_iterator(dir_, ec)) n += e.is_directory() ? 1 : 0;
    return n;
  }
  std::int64_t running() const {
    std::int64_t n = 0;
    std::error_code ec;
    for (auto& e : fs::directory_iterator(dir_, ec)) n += e.is_directory() && !fs::exists(e.path() / "paused") ? 1 : 0;
    return n;
  }

  corral::Sandbox sandbox(const std::string& id) const {
    corral::Sandbox s;
    s.id = id;
    s.state = fs::exists(dir_ / id / "paused") ? "paused" : "running";
    s.details = {{"dir", (dir_ / id).string()}};
    s.secrets = {{"token", "tok-" + id}};
    s.labels = corral::sdk::read_labels(dir_ / id);
    return s;
  }

  fs::path dir_;
  std::string fail_;
  std::string crash_;
  std::string fill_;
  std::string pause_;
  std::string flaw_;
  std::string token_;
  std::string account_;  // from account-file: DIR/ACCOUNT holds this account's sandboxes
  bool leak_ = false;
  std::int64_t quota_ = 0;
};

}  // namespace

CORRAL_PLUGIN(Testbox, "1.0.0", kSpec.c_str())
