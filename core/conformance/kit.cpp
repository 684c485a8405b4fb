#include "conformance/kit.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>

#include "corral/json.hpp"
#include "corral/wire.hpp"

namespace corral::conformance {

namespace {

constexpr std::int64_t kProbeSeconds = 60;   // --timeout of a run that tries the network

// What a credential's variable is called: a provider's own, then the ones every CI
// machine and developer's shell has. A plugin that forwards any of these by name, or by
// a pattern such as *_TOKEN, shows it in the environment check.
std::vector<std::string> secret_shaped_names(const std::string& provider) {
  std::string p;
  for (char c : provider) p += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::toupper(c)) : '_';
  return {PlantedEnv::kSecretName, p + "_API_TOKEN", p + "_API_KEY", p + "_TOKEN", p + "_KEY", p + "_SECRET",
          p + "_ACCESS_TOKEN", p + "_PASSWORD", "GITHUB_TOKEN", "NPM_TOKEN", "AWS_SECRET_ACCESS_KEY",
          "OPENAI_API_KEY", "ANTHROPIC_API_KEY"};
}

}  // namespace

PlantedEnv::PlantedEnv(const ProviderSpec& spec) : forwarded_("forwarded-" + random_hex(8)) {
  ::setenv(kForwardedName, forwarded_.c_str(), 1);
  std::vector<std::string> names = secret_shaped_names(spec.name);
  for (const OptionSpec& option : spec.options)  // the provider's own credentials, as the user set them
    if (option.secret) names.insert(names.end(), option.env.begin(), option.env.end());
  for (const std::string& name : names) {
    if (std::any_of(secrets_.begin(), secrets_.end(), [&](const Secret& s) { return s.name == name; })) continue;
    if (std::optional<std::string> value = process_env(name)) {
      if (value->size() >= 6) secrets_.push_back({name, *value, false});  // shorter would match by chance
      continue;
    }
    secrets_.push_back({name, "kit-planted-" + random_hex(12), true});
    ::setenv(name.c_str(), secrets_.back().value.c_str(), 1);
  }
  for (const Secret& s : secrets_) redactor_.add(s.value);
}

PlantedEnv::~PlantedEnv() {
  ::unsetenv(kForwardedName);
  for (const Secret& s : secrets_)
    if (s.planted) ::unsetenv(s.name.c_str());
}

const PlantedEnv::Secret* PlantedEnv::found_in(std::string_view text) const {
  for (const Secret& s : secrets_)
    if (text.find(s.value) != std::string_view::npos) return &s;
  return nullptr;
}

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
  for (const std::string& marker : spec.timed_markers) ui.time_stdout_marker(marker);
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
  if (spec.input) {
    request.command.forward_stdin = true;
    ui.set_input(*spec.input);
  }
  if (spec.stop_timeout_ms >= 0) request.command.stop_timeout_ms = spec.stop_timeout_ms;
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
  for (const std::string& marker : spec.timed_markers) o.seen_at.push_back(ui.stdout_time_of(marker));
  if (spec.cancel_marker.size() && !ui.cancel_fired() && !setup_.user.cancelled())
    fail(fmt::format("stdout never showed {} to interrupt", literal(spec.cancel_marker)) + o.why());
  expect_no_secret(o);
  return o;
}

void Kit::expect_no_secret(const Observed& o) const {
  auto leaked = [&](const PlantedEnv::Secret* s, std::string_view where) {
    if (s)
      fail(fmt::format("the value of {} ({}) {}: a plugin passes on only the variables named with --env, and never "
                       "prints a credential",
                       s->name, s->planted ? "planted in corral's environment by the kit" : "a credential of yours",
                       where));
  };
  leaked(planted_.found_in(o.out), "reached the command's output");
  leaked(planted_.found_in(o.err), "reached the command's error output");
  for (const std::string& m : o.messages) leaked(planted_.found_in(m), "appeared in a message");
  if (o.result.error) {
    leaked(planted_.found_in(o.result.error->what()), "appeared in an error");
    leaked(planted_.found_in(o.result.error->hint()), "appeared in an error's hint");
  }
  if (o.result.handle) leaked(planted_.found_in(handle_to_json(*o.result.handle)), "appeared in the session handle");
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
  const bool get_tells = get_answers_unknown(sandbox_id).empty();
  return with_session([&](ProviderSession& session) -> std::string {
    if (session.has(Feature::run_session) && get_tells) {
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

namespace {

// An id shaped like `sample`, its last alphanumerics redrawn from the same classes (a
// digit for a digit, a hex letter for a hex letter), so a provider that checks an id's
// form takes it for one of its own that does not exist.
std::string never_made_id(const std::string& sample) {
  std::string id = sample;
  const std::string noise = random_hex(16);  // a byte per character redrawn
  std::size_t drawn = 0;
  for (auto c = id.rbegin(); c != id.rend() && drawn < 8; ++c) {
    const auto r = static_cast<unsigned>(std::stoul(noise.substr(drawn * 2, 2), nullptr, 16));
    const auto ch = static_cast<unsigned char>(*c);
    if (std::isdigit(ch)) *c = static_cast<char>('0' + r % 10);
    else if (std::isxdigit(ch)) *c = static_cast<char>((std::islower(ch) ? 'a' : 'A') + r % 6);
    else if (std::isalpha(ch)) *c = static_cast<char>((std::islower(ch) ? 'a' : 'A') + r % 26);
    else continue;
    ++drawn;
  }
  if (id == sample) id += drawn ? "0" : "-0";  // redrawn to itself, or nothing to redraw
  return id;
}

}  // namespace

std::string Kit::get_answers_unknown(const std::string& sample) {
  if (get_answers_unknown_) return *get_answers_unknown_;
  const std::string id = never_made_id(sample);
  get_answers_unknown_ = with_session([&](ProviderSession& session) -> std::string {
    if (!session.has(Feature::run_session)) return "";
    try {
      Sandbox s = session.get(id);
      return fmt::format("get of sandbox {}, which never existed, answered state {} instead of not-found",
                         printable(id), s.state.empty() ? "not given" : literal(s.state));
    } catch (const Error& e) {
      if (e.code() == ErrorCode::not_found) return "";
      return fmt::format("get of sandbox {}, which never existed, failed with {} instead of not-found: {}",
                         printable(id), to_string(e.code()), printable(e.what()));
    }
  });
  return *get_answers_unknown_;
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
std::string CheckContext::streaming_problem() {
  if (not_streamed) return *not_streamed;
  constexpr int kPauseSeconds = 3;
  Observed o = kit.run({.shell = fmt::format("echo first-line; sleep {}; echo second-line", kPauseSeconds),
                        .timed_markers = {"first-line", "second-line"}});
  o.expect_exit(0);
  o.expect_out("first-line\nsecond-line\n");
  const std::optional<Clock::time_point> first = o.seen_at.at(0), second = o.seen_at.at(1);
  const std::int64_t gap =
      first && second ? std::chrono::duration_cast<std::chrono::milliseconds>(*second - *first).count() : 0;
  // Half the pause: a streaming plugin's two lines arrive about the pause apart, a
  // buffering one's together.
  not_streamed = gap >= kPauseSeconds * 1000 / 2
                     ? ""
                     : fmt::format("the command printed a line, slept {} s and printed another, but the two arrived {} "
                                   "ms apart: the plugin hands output over when the command ends instead of as it is "
                                   "printed (exec must pass each piece to the host as it comes)",
                                   kPauseSeconds, gap);
  return *not_streamed;
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
