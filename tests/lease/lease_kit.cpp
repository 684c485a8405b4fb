#include "lease_kit.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>

#include "corral/wire.hpp"
#include "plugin_host/loader.hpp"

namespace fs = std::filesystem;

namespace corral::test {
namespace {

FakeCloud* g_cloud = nullptr;  // the one FakeCloud alive, which the fake plugin's instances use

// The fake plugin: every primitive is the cloud's.
class FakeProvider : public sdk::Provider {
 public:
  explicit FakeProvider(const sdk::Options&) : cloud_(*g_cloud) {}
  Sandbox create(const CreateRequest& r, const sdk::Host& h) override { return cloud_.create(r, h); }
  Sandbox get(const std::string& id, const sdk::Host& h) override { return cloud_.get(id, h); }
  std::vector<Sandbox> list(const StringMap& labels, const sdk::Host& h) override { return cloud_.list(labels, h); }
  void destroy(const Sandbox& s, const sdk::Host& h) override { cloud_.destroy(s, h); }
  ExecResult exec(const Sandbox& s, const Command& c, const sdk::Host& h) override { return {cloud_.exec(s, c, h)}; }
  void upload(const Sandbox& s, const UploadRequest& r, const sdk::Host& h) override { cloud_.upload(s, r, h); }
  DownloadResult download(const Sandbox& s, const DownloadRequest& r, const sdk::Host& h) override {
    return cloud_.download(s, r, h);
  }
  std::vector<ForkOutcome> fork(const Sandbox& s, const std::vector<ForkTarget>& t, const sdk::Host& h) override {
    return cloud_.fork(s, t, h);
  }
  Sandbox extend(const Sandbox& s, std::int64_t, const sdk::Host&) override { return s; }
  std::string url(const Sandbox& s, int port, const sdk::Host&) override {
    return "https://" + std::to_string(port) + "-" + s.id + ".fake.invalid";
  }

 private:
  FakeCloud& cloud_;
};

// Sets environment variable `name` to `value`.
void set_env(const char* name, const fs::path& value) { ::setenv(name, value.c_str(), 1); }

}  // namespace

// ---- RecordingUi

void RecordingUi::out(std::string_view data) {
  std::lock_guard guard(mutex_);
  out_.append(data);
}
void RecordingUi::err(std::string_view) {}
void RecordingUi::info(const std::string& message) {
  std::lock_guard guard(mutex_);
  messages_.push_back(message);
}
void RecordingUi::note(const std::string& message) { info(message); }
void RecordingUi::warn(const std::string& message) {
  std::lock_guard guard(mutex_);
  messages_.push_back(message);
  warnings_.push_back(message);
}
void RecordingUi::progress(const std::string& message) {
  if (!message.empty()) info(message);
}

std::string RecordingUi::stdout_text() const {
  std::lock_guard guard(mutex_);
  return out_;
}

std::vector<std::string> RecordingUi::warnings() const {
  std::lock_guard guard(mutex_);
  return warnings_;
}

bool RecordingUi::said(const std::string& part) const {
  std::lock_guard guard(mutex_);
  return std::any_of(messages_.begin(), messages_.end(),
                     [&](const std::string& m) { return m.find(part) != std::string::npos; });
}

// ---- FakeCloud

FakeCloud::FakeCloud() {
  REQUIRE(g_cloud == nullptr);
  g_cloud = this;
  exec_ = [](const Command&, const sdk::Host& host) {
    host.emit(CORRAL_STDOUT, "ran\n");
    return 0;
  };
}

FakeCloud::~FakeCloud() { g_cloud = nullptr; }

void FakeCloud::at(const std::string& primitive, Step step) {
  std::lock_guard guard(mutex_);
  steps_[primitive] = std::move(step);
}

void FakeCloud::fail(const std::string& primitive, const Error& error) {
  at(primitive, [error](const sdk::Host&) { throw error; });
}

void FakeCloud::on_exec(Exec exec) {
  std::lock_guard guard(mutex_);
  exec_ = std::move(exec);
}

std::vector<std::string> FakeCloud::calls() const {
  std::lock_guard guard(mutex_);
  return calls_;
}

int FakeCloud::count(const std::string& primitive) const {
  std::lock_guard guard(mutex_);
  return static_cast<int>(std::count_if(calls_.begin(), calls_.end(), [&](const std::string& c) {
    return c == primitive || c.rfind(primitive + " ", 0) == 0;
  }));
}

std::vector<UploadRequest> FakeCloud::uploads() const {
  std::lock_guard guard(mutex_);
  return uploads_;
}

std::vector<Command> FakeCloud::commands() const {
  std::lock_guard guard(mutex_);
  return commands_;
}

std::map<std::string, FakeCloud::Box> FakeCloud::boxes() const {
  std::lock_guard guard(mutex_);
  return boxes_;
}

std::string FakeCloud::add(const StringMap& labels) {
  std::lock_guard guard(mutex_);
  Box box;
  box.sandbox.id = "fake-" + std::to_string(next_id_++);
  box.sandbox.state = "running";
  box.sandbox.labels = labels;
  const std::string id = box.sandbox.id;
  boxes_[id] = std::move(box);
  return id;
}

void FakeCloud::vanish(const std::string& id) {
  std::lock_guard guard(mutex_);
  boxes_.erase(id);
}

int FakeCloud::most_creating_at_once() const {
  std::lock_guard guard(mutex_);
  return most_creating_;
}

std::unique_ptr<PluginInstance> FakeCloud::instance(const ProviderEntry& entry) {
  const corral_plugin_v1 table = sdk::detail::make_descriptor<FakeProvider>("0-fake", *entry.spec);
  auto plugin = std::make_shared<const Plugin>(boost::dll::shared_library(), table, *entry.spec, entry.library);
  return in_process_instance(std::move(plugin), entry.isolation);
}

void FakeCloud::begin(const std::string& primitive, const std::string& id, const sdk::Host& host) {
  Step step;
  {
    std::lock_guard guard(mutex_);
    calls_.push_back(id.empty() ? primitive : primitive + " " + id);
    if (auto it = steps_.find(primitive); it != steps_.end()) step = it->second;
  }
  if (step) step(host);
}

Sandbox FakeCloud::create(const CreateRequest& request, const sdk::Host& host) {
  {
    std::lock_guard guard(mutex_);
    most_creating_ = std::max(most_creating_, ++creating_);
  }
  struct Done {
    FakeCloud& cloud;
    ~Done() {
      std::lock_guard guard(cloud.mutex_);
      --cloud.creating_;
    }
  } done{*this};
  begin("create", "", host);
  return get(add(request.labels), host);
}

Sandbox FakeCloud::get(const std::string& id, const sdk::Host&) {
  std::lock_guard guard(mutex_);
  auto it = boxes_.find(id);
  if (it == boxes_.end()) throw Error(ErrorCode::not_found, "fake sandbox " + id + " is gone");
  return it->second.sandbox;
}

std::vector<Sandbox> FakeCloud::list(const StringMap& labels, const sdk::Host& host) {
  begin("list", "", host);
  std::lock_guard guard(mutex_);
  std::vector<Sandbox> out;
  for (const auto& [id, box] : boxes_)
    if (wire::labels_match(box.sandbox.labels, labels)) out.push_back(box.sandbox);
  return out;
}

std::vector<ForkOutcome> FakeCloud::fork(const Sandbox& source, const std::vector<ForkTarget>& targets,
                                         const sdk::Host& host) {
  begin("fork", source.id, host);
  get(source.id, host);  // a gone source forks nothing
  std::vector<ForkOutcome> out;
  for (const ForkTarget& t : targets) out.push_back({get(add(t.labels), host), std::nullopt});
  return out;
}

void FakeCloud::destroy(const Sandbox& sandbox, const sdk::Host& host) {
  begin("destroy", sandbox.id, host);
  std::lock_guard guard(mutex_);
  if (boxes_.erase(sandbox.id) == 0) throw Error(ErrorCode::not_found, "fake sandbox " + sandbox.id + " is gone");
}

int FakeCloud::exec(const Sandbox& sandbox, const Command& command, const sdk::Host& host) {
  begin("exec", sandbox.id, host);
  Exec exec;
  {
    std::lock_guard guard(mutex_);
    commands_.push_back(command);
    exec = exec_;
  }
  return exec(command, host);
}

void FakeCloud::upload(const Sandbox& sandbox, const UploadRequest& request, const sdk::Host& host) {
  begin("upload", sandbox.id, host);
  std::lock_guard guard(mutex_);
  uploads_.push_back(request);
  if (auto it = boxes_.find(sandbox.id); it != boxes_.end()) ++it->second.uploads;
}

DownloadResult FakeCloud::download(const Sandbox& sandbox, const DownloadRequest& request, const sdk::Host& host) {
  begin("download", sandbox.id, host);
  return {0, request.patterns};  // nothing matched
}

// ---- LeaseKit

LeaseKit::LeaseKit()
    : config(Config::from(std::nullopt, std::nullopt)),
      registry([this] {
        set_env("XDG_STATE_HOME", root.path() / "state");
        set_env("XDG_CACHE_HOME", root.path() / "cache");
        const std::string dir = CORRAL_TEST_PLUGIN_DIR;
        fs::path file = root.write("providers.yaml", "plugins:\n  - path: " + dir + "/libcorral-testbox.so\n  - path: " +
                                                         dir + "/libcorral-mountbox.so\n");
        return Registry::load({{file, "test"}});
      }()),
      providers([this]() -> const Registry& { return registry; }, config,
                [this](const std::string& name) -> std::optional<std::string> {
                  auto it = env.find(name);
                  return it == env.end() ? std::nullopt : std::optional(it->second);
                },
                [this](const ProviderEntry& entry) { return cloud.instance(entry); }),
      claims(root.path() / "state" / "corral" / "leases"),
      ctx{claims, providers, ui} {
  REQUIRE(registry.find("testbox"));
  REQUIRE(registry.find("mountbox"));
  root.write("work/a.txt", "a");
  root.write("work/b.txt", "b");
}

LeaseKit::~LeaseKit() {
  ::unsetenv("XDG_STATE_HOME");
  ::unsetenv("XDG_CACHE_HOME");
}

RunRequest LeaseKit::request(const std::string& provider) const {
  RunRequest r;
  r.choice.provider = provider;
  r.command.argv = {"make", "test"};
  r.cwd = work();
  return r;
}

SessionHandle LeaseKit::kept_lease(const std::string& provider) {
  RunRequest keep = request(provider);
  keep.keep = true;
  RunResult r = run(ctx, keep);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.handle);
  return *r.handle;
}

std::vector<std::string> LeaseKit::claim_folder() const {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(claims.dir(), ec)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace corral::test
