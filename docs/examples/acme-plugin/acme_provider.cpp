// A minimal private provider: "sandboxes" are folders under ACME_ROOT and commands run
// in them with sh. Real providers call their platform's API here; everything else
// (workspace archive, claims, keep rules, handle, Ctrl-C, exit codes) comes from corral.
#include <corral/sdk.hpp>
#include <corral/sdk/labels.hpp>
#include <corral/os/process.hpp>
#include <corral/sdk/sync.hpp>
#include <corral/wire.hpp>

#include <filesystem>

namespace fs = std::filesystem;

namespace {

using corral::Feature;

// What corral and its users learn about the provider: typed, so a misspelt field or
// feature does not compile; the loader still checks the rest (e.g. that a destination
// option is trusted) and refuses the plugin naming the field.
const corral::ProviderSpec kSpec = {
    .name = "acme",
    .family = "acme",
    .kind = corral::ProviderKind::delegated_run,
    .targets = {"linux"},
    .features = {Feature::run_session, Feature::archive_sync, Feature::cleanup},
    // A per-user folder unless ACME_ROOT says otherwise: ~/.local/state/acme by default.
    .options = {{.name = "root", .type = "path", .default_value = "${XDG_STATE_HOME}/acme", .env = {"ACME_ROOT"},
                 .help = "where ACME sandboxes live", .trusted = true}},
    .docs = {.category = "internal build farm",
             .location = "self-hosted",
             .gpu = "no",
             .cleanup_owner = "corral",
             .best_fit = "ACME's internal CI",
             .caveat = "ACME network only"},
};

class AcmeProvider : public corral::sdk::Provider {
 public:
  explicit AcmeProvider(const corral::sdk::Options& options) : root_(options.get("root")) {
    if (root_.empty())
      throw corral::Error(corral::ErrorCode::invalid_argument, "acme needs a root folder", "set ACME_ROOT");
  }

  // A sandbox is a folder holding the workspace copy and the labels corral gave it:
  // `get` receives only an id, so whatever it must answer is kept with the sandbox.
  corral::Sandbox create(const corral::CreateRequest& request, const corral::sdk::Host&) override {
    const std::string id = "acme-" + request.lease_id;
    fs::create_directories(root_ / id / "workspace");
    corral::sdk::write_labels(root_ / id, request.labels);  // any bytes, written atomically
    return sandbox(id);
  }

  corral::Sandbox get(const std::string& id, const corral::sdk::Host&) override {
    if (!fs::is_directory(root_ / id)) throw corral::Error(corral::ErrorCode::not_found, "no ACME sandbox " + id);
    return sandbox(id);
  }

  // Every sandbox whose labels include all of `labels` (cleanup: `corral list --remote`).
  std::vector<corral::Sandbox> list(const corral::StringMap& labels, const corral::sdk::Host&) override {
    std::vector<corral::Sandbox> out;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(root_, ec)) {
      corral::Sandbox s = sandbox(entry.path().filename().string());
      if (corral::wire::labels_match(s.labels, labels)) out.push_back(std::move(s));
    }
    return out;
  }

  void destroy(const corral::Sandbox& s, const corral::sdk::Host&) override { fs::remove_all(root_ / s.id); }

  // Unpacks the workspace archive over the previous sync, then removes what the user
  // deleted since (the SDK refuses paths that would leave the folder).
  void upload(const corral::Sandbox& s, const corral::UploadRequest& r, const corral::sdk::Host&) override {
    const fs::path workspace = root_ / s.id / "workspace";
    corral::os::ProcessSpec unpack;
    unpack.argv = {"tar", "-xzf", r.archive_path, "-C", workspace.string()};
    auto tar = corral::os::capture_process(unpack);
    if (tar.exit_code != 0) throw corral::Error(corral::ErrorCode::internal, "unpacking failed: " + tar.err);
    corral::sdk::remove_paths_under(workspace, r.removed);
  }

  corral::ExecResult exec(const corral::Sandbox& s, const corral::Command& c, const corral::sdk::Host& host) override {
    corral::os::ProcessSpec spec;
    spec.argv = c.argv.empty() ? std::vector<std::string>{"sh", "-c", c.shell} : c.argv;
    // The SDK's join refuses an absolute cwd or a ".." part: a command never starts
    // outside the sandbox's workspace, whatever the request says.
    spec.cwd = corral::join_workspace_path((root_ / s.id / "workspace").string(), c.cwd);
    // Exactly the variables the user allowed (--env) on top of the SDK's baseline: never
    // corral's own environment, which holds the user's credentials.
    spec.env = corral::os::command_environment(c.env);
    auto outcome = corral::os::run_process(
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
    s.labels = corral::sdk::read_labels(root_ / id);
    return s;
  }
  fs::path root_;
};

}  // namespace

CORRAL_PLUGIN(AcmeProvider, "1.0.0", kSpec)
