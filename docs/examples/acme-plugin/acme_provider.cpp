// A minimal private provider: "sandboxes" are folders under ACME_ROOT and commands run
// in them with sh. Real providers call their platform's API here; everything else
// (workspace archive, claims, keep rules, handle, Ctrl-C, exit codes) comes from corral.
#include <corral/sdk.hpp>
#include <corral/sdk/process.hpp>

#include <filesystem>
#include <random>

namespace fs = std::filesystem;

namespace {

constexpr const char* kSpec = R"json({
  "name": "acme",
  "family": "acme",
  "kind": "delegated-run",
  "targets": ["linux"],
  "features": ["archive-sync", "run-session"],
  "options": [
    {"name": "root", "env": ["ACME_ROOT"], "trusted": true, "help": "where ACME sandboxes live"}
  ],
  "docs": {"category": "internal build farm", "location": "self-hosted", "gpu": "no",
           "cleanupOwner": "corral", "bestFit": "ACME's internal CI", "caveat": "ACME network only"}
})json";

class AcmeProvider : public corral::sdk::Provider {
 public:
  explicit AcmeProvider(const corral::sdk::Options& options) : root_(options.get("root")) {
    if (root_.empty())
      throw corral::Error(corral::ErrorCode::invalid_argument, "acme needs a root folder", "set ACME_ROOT");
  }

  corral::Sandbox create(const corral::CreateRequest& request, const corral::sdk::Host&) override {
    fs::path dir = root_ / ("acme-" + request.lease_id);
    fs::create_directories(dir);
    return sandbox(dir.filename().string());
  }

  corral::Sandbox get(const std::string& id, const corral::sdk::Host&) override {
    if (!fs::exists(root_ / id)) throw corral::Error(corral::ErrorCode::not_found, "no ACME sandbox " + id);
    return sandbox(id);
  }

  void destroy(const corral::Sandbox& s, const corral::sdk::Host&) override { fs::remove_all(root_ / s.id); }

  void upload(const corral::Sandbox& s, const corral::UploadRequest& r, const corral::sdk::Host&) override {
    auto tar = corral::sdk::capture_process({{"tar", "-xzf", r.archive_path, "-C", (root_ / s.id).string()}});
    if (tar.exit_code != 0) throw corral::Error(corral::ErrorCode::internal, "unpacking failed: " + tar.err);
  }

  corral::ExecResult exec(const corral::Sandbox& s, const corral::Command& c, const corral::sdk::Host& host) override {
    corral::sdk::ProcessSpec spec;
    spec.argv = c.argv.empty() ? std::vector<std::string>{"sh", "-c", c.shell} : c.argv;
    spec.cwd = (root_ / s.id / c.cwd).string();
    // Exactly the variables the user allowed (--env) on top of the SDK's baseline: never
    // corral's own environment, which holds the user's credentials.
    spec.env = corral::sdk::command_environment(c.env);
    auto outcome = corral::sdk::run_process(
        spec, [&](std::string_view d) { host.emit(CORRAL_STDOUT, d); },
        [&](std::string_view d) { host.emit(CORRAL_STDERR, d); }, [&] { return host.cancelled(); },
        c.timeout_seconds);
    if (outcome.cancelled) throw corral::Error(corral::ErrorCode::cancelled, "stopped");
    if (outcome.timed_out) throw corral::Error(corral::ErrorCode::timeout, "timed out");
    return {outcome.exit_code};
  }

 private:
  corral::Sandbox sandbox(const std::string& id) const {
    corral::Sandbox s;
    s.id = id;
    s.state = "running";
    return s;
  }
  fs::path root_;
};

}  // namespace

CORRAL_PLUGIN(AcmeProvider, "1.0.0", kSpec)
