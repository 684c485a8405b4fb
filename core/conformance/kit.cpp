#include "conformance/kit.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>
#include <iterator>

#include "corral/json.hpp"
#include "corral/wire.hpp"

namespace corral::conformance {

namespace {

constexpr std::int64_t kProbeSeconds = 60;   // --timeout of a run that tries the network

}  // namespace

std::int64_t ms_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

std::string literal(std::string_view text) {
  constexpr std::size_t kMax = 120;
  std::string shown = printable(text.substr(0, kMax));
  return "\"" + shown + (text.size() > kMax ? "\"..." : "\"");
}

std::string blob_bytes() {
  std::string blob(kBlobSize, '\0');
  std::uint32_t x = 2463534242u;
  for (std::size_t i = 0; i < blob.size(); ++i) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    blob[i] = static_cast<char>(i < 256 ? i : x & 0xff);
  }
  return blob;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

Observed Kit::run(const RunSpec& spec) {
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
  o.ran = fmt::format("{} in the fixture's {}{}",
                      spec.shell.empty() ? fmt::format("argv {}", literal(fmt::format("{}", fmt::join(spec.argv, " "))))
                                         : fmt::format("sh -c {}", literal(spec.shell)),
                      spec.subdir.empty() ? std::string("top folder") : "folder " + spec.subdir,
                      spec.env_names.empty() ? std::string()
                                             : fmt::format(" with --env {}", fmt::join(spec.env_names, ",")));
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

void Kit::expect_no_secret(const Observed& o) const {
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

Forks Kit::fork(const std::string& id, int count) {
  CaptureUi ui(setup_.user);
  Watched watched(*this, ui);
  Providers providers = kit_providers();
  LeaseContext ctx{setup_.claims, providers, ui};
  Lease source = Lease::attach(ctx, id, choice_, Lease::Access::exclusive);
  Forks forks = fork_lease(ctx, source, {.count = count, .kept = true});
  for (const Claim& c : forks.made) made_.push_back({c.lease_id, c.sandbox_id, true});
  return forks;
}

FanoutResult Kit::fanout_from(const std::string& id, int shards, const std::string& shell) {
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

std::string Kit::still_there(const std::string& sandbox_id) {
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

void Kit::expect_cleaned_up(const Observed& o) {
  const SessionHandle& h = o.handle();
  if (h.kept) fail("the sandbox was kept, but the run did not ask to keep it");
  if (setup_.claims.inspect(h.lease_id)) fail(fmt::format("lease {} is still claimed after the run", h.lease_id));
  if (std::string left = still_there(h.sandbox_id); !left.empty()) fail(left + " after the run");
}

void expect_stopped_in_time(const Observed& o) {
  if (o.result.error && std::string_view(o.result.error->what()).find(kIgnoredCancellation) != std::string_view::npos)
    fail(printable(o.result.error->what()));
}

std::string CheckContext::kept_lease() {
  if (kept.empty()) {
    Observed o = kit.run({.shell = "true", .keep = true});
    o.expect_exit(0);
    kept = o.handle().lease_id;
    kept_sandbox = o.handle().sandbox_id;
  }
  return kept;
}
Reach CheckContext::reach(const NetworkPolicy& policy) {
  Observed o = kit.run({.shell = target.script(), .timeout_seconds = kProbeSeconds, .network = policy});
  o.expect_exit(0);
  const Reach seen = read_reach(o.out);
  if (seen == Reach::unknown)
    fail(fmt::format("trying {} with --network {} printed {}", target.text(), to_string(policy), literal(o.out)));
  if (seen == Reach::no_bash) skip("the sandbox has no bash, whose /dev/tcp the kit connects with");
  return seen;
}
void CheckContext::expect_reachable_when_open() {
  if (!open_reaches) open_reaches = reach({}) == Reach::reached;
  if (*open_reaches) return;
  skip(fmt::format("even with an open network the command could not reach {}, so a policy cannot be seen at work; {}",
                   target.text(),
                   target.own() ? "a sandbox on another machine cannot reach this machine's loopback: pass "
                                   "--network-target IP:PORT, an address the provider's sandboxes can reach"
                                 : "check that the provider's sandboxes can reach that address"));
}
void CheckContext::stop_kept() noexcept {
  for (const Kit::Made& m : kit.made()) {
    if (!m.kept || m.lease_id == kept) continue;
    try {
      if (kit.claims().inspect(m.lease_id)) kit.stop(m.lease_id);
    } catch (const std::exception&) {
      // reported by nothing-left
    }
  }
}
void CheckContext::clean_up() noexcept {
  for (const Kit::Made& m : kit.made()) {
    try {
      if (kit.claims().inspect(m.lease_id)) kit.stop(m.lease_id);
    } catch (const std::exception&) {
    }
  }
}
}  // namespace corral::conformance
