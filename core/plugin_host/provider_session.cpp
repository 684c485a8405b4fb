#include "plugin_host/provider_session.hpp"

#include "base/hash.hpp"
#include "base/ui.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <chrono>
#include <mutex>
#include <optional>

#include "corral/wire.hpp"

namespace corral {

// Whether, and why, one call has been told to stop: the user's Ctrl-C or, for exec, its
// --timeout passing. Settled once; asked from the plugin's threads and the watchdog's.
class CallStop {
 public:
  // corral tells a command to stop this long after its --timeout, so that a plugin which
  // keeps the timeout itself is the first to see it and can say so in its own words.
  static constexpr std::chrono::seconds kTimeoutAllowance{1};

  struct Rules {
    std::int64_t timeout_seconds = 0;  // exec's --timeout, 0 = none
    // The same to the millisecond (Command::timeout_ms), 0 = whole seconds. When it is not
    // whole seconds corral stops the command at it, before the plugin's rounded-up one.
    std::int64_t timeout_ms = 0;
    // exec on a provider with exec-signals: the user's stop goes to the command as a signal
    // first (take_signal), and the call is told to stop only this long after it, or at
    // the user's next ask. nullopt: told to stop at once.
    std::optional<std::chrono::milliseconds> signal_grace;
    // How often the user had asked to stop before the call began: only a later ask stops
    // it (the download after a command that ended by itself on its Ctrl-C).
    int asks_before = 0;
  };

  CallStop(const HostHooks& hooks, Rules rules) : hooks_(hooks), rules_(rules) {
    if (rules.timeout_ms % 1000 != 0)
      deadline_ = Clock::now() + std::chrono::milliseconds(rules.timeout_ms);
    else if (rules.timeout_seconds > 0)
      deadline_ = Clock::now() + std::chrono::seconds(rules.timeout_seconds) + kTimeoutAllowance;
  }
  StopReason reason() {
    StopReason now = reason_.load();
    if (now != StopReason::none) return now;
    if (const int asks = asks_since_start(); asks > 0 && (!rules_.signal_grace || asks > 1 || grace_over()))
      now = StopReason::interrupted;
    else if (deadline_ && Clock::now() >= *deadline_) now = StopReason::timed_out;
    else return StopReason::none;
    StopReason expected = StopReason::none;
    reason_.compare_exchange_strong(expected, now);
    return reason_.load();
  }
  // The signal to pass on to the command now, once; 0 when none (see Rules::signal_grace).
  int take_signal() {
    if (!rules_.signal_grace || asks_since_start() == 0 || signalled_.exchange(true)) return 0;
    (void)grace_over();  // the grace runs from here at the latest
    return hooks_.stop_signal ? hooks_.stop_signal() : SIGINT;
  }
  // Whether the command was passed the user's signal (and so had its grace to end).
  bool signalled() const { return signalled_.load(); }
  // What the user's stop was, in words: "Ctrl-C", "SIGTERM", "SIGHUP".
  std::string signal_words() const { return stop_signal_words(hooks_.stop_signal ? hooks_.stop_signal() : SIGINT); }
  std::chrono::milliseconds signal_grace() const { return rules_.signal_grace.value_or(std::chrono::milliseconds(0)); }

 private:
  using Clock = std::chrono::steady_clock;
  int asks_since_start() const {
    const int asks = hooks_.stop_requests ? hooks_.stop_requests() : hooks_.cancelled && hooks_.cancelled() ? 1 : 0;
    return std::max(0, asks - rules_.asks_before);
  }
  // Whether the grace since the user's first ask seen by this call has passed.
  bool grace_over() {
    const std::int64_t now = Clock::now().time_since_epoch().count();
    std::int64_t first = 0;
    first_ask_.compare_exchange_strong(first, now);
    if (first == 0) first = now;
    return Clock::duration(now - first) >= *rules_.signal_grace;
  }

  const HostHooks& hooks_;
  Rules rules_;
  std::optional<Clock::time_point> deadline_;
  std::atomic<StopReason> reason_{StopReason::none};
  std::atomic<std::int64_t> first_ask_{0};  // steady clock ticks; 0 = not seen yet
  std::atomic<bool> signalled_{false};
};

namespace {

struct CallState {
  const HostHooks* hooks;
  const sdk::Redactor* redactor;
  CallStop* stop = nullptr;  // nullptr while cleaning up after the Ctrl-C that caused it
  const TransferFn* transfer = nullptr;  // who hears the call's transfer reports
  std::string result;
  std::optional<Error> error;
  std::optional<std::chrono::milliseconds> retry_after;  // said before the error it qualifies
  bool input = false;  // exec of a command that reads the user's input
  bool terminal = false;  // exec of a command on a terminal: window_size answers
  std::mutex window_mutex;  // window_size may be asked from any thread
  std::uint32_t last_window = 0;  // rows << 16 | cols as last reported; 0 = never
};

// "10s", "1.5s": a grace as --stop-timeout takes it.
std::string seconds_text(std::chrono::milliseconds ms) {
  if (ms.count() % 1000 == 0) return format_duration(ms.count() / 1000);
  return fmt::format("{:g}s", static_cast<double>(ms.count()) / 1000.0);
}

// The error of an exec that was told to stop for `why` and came back with `exit_code`
// (the plugin ran the command to its end) or with its own error of another kind.
Error stopped(StopReason why, const Command& command, const std::string& provider, std::optional<int> exit_code,
              const Error* other, const CallStop& stop) {
  std::string message = why == StopReason::timed_out
                            ? fmt::format("the command ran past its --timeout ({})",
                                          command.timeout_ms % 1000 != 0
                                              ? seconds_text(std::chrono::milliseconds(command.timeout_ms))
                                              : format_duration(command.timeout_seconds))
                            : fmt::format("the command was interrupted ({})", stop.signal_words());
  if (why == StopReason::interrupted && stop.signalled())
    message += fmt::format(" and was killed: it had not ended {} after the signal it was passed (--stop-timeout)",
                           seconds_text(stop.signal_grace()));
  if (exit_code)
    message += fmt::format(", but provider '{}' {}: it ran the command to its end (exit code {})", provider,
                           kIgnoredCancellation, *exit_code);
  if (other) message += fmt::format("; provider '{}' then failed: {}", provider, other->what());
  return Error(stop_error_code(why), message,
               other ? other->hint() : why == StopReason::timed_out ? "raise --timeout if it needs longer" : "");
}

CallState& state(void* call) { return *static_cast<CallState*>(call); }


const corral_host_v1 kHost = {
    sizeof(corral_host_v1),
    /*result=*/[](void* call, const char* json, size_t len) { state(call).result.assign(json, len); },
    /*error=*/
    [](void* call, int code, const char* message, const char* hint) {
      CallState& s = state(call);
      s.error.emplace(error_code_from_abi(code), s.redactor->apply(message ? message : "unknown error"),
                      s.redactor->apply(hint ? hint : ""));
      if (s.retry_after) s.error->set_retry_after(*s.retry_after);
    },
    /*emit=*/
    [](void* call, int stream, const char* data, size_t len) {
      const HostHooks& h = *state(call).hooks;
      if (h.emit) h.emit(stream, std::string_view(data, len));
    },
    /*cancelled=*/
    [](void* call) -> int {
      CallState& s = state(call);
      return s.stop && s.stop->reason() != StopReason::none ? 1 : 0;
    },
    /*log=*/
    [](void* call, int level, const char* message) {
      CallState& s = state(call);
      if (s.hooks->log) s.hooks->log(level, s.redactor->apply(message ? message : ""));
    },
    /*progress=*/
    [](void* call, const char* message) {
      CallState& s = state(call);
      if (s.hooks->progress) s.hooks->progress(s.redactor->apply(message ? message : ""));
    },
    /*transfer=*/
    [](void* call, std::uint64_t done, std::uint64_t total) {
      CallState& s = state(call);
      if (s.transfer && *s.transfer) (*s.transfer)(done, total);
    },
    /*retry_after=*/
    [](void* call, std::uint32_t milliseconds) { state(call).retry_after = std::chrono::milliseconds(milliseconds); },
    /*read_input=*/
    [](void* call, char* buffer, size_t capacity, int timeout_ms) -> long {
      CallState& s = state(call);
      if (!s.input || !s.hooks->read_input || buffer == nullptr || capacity == 0) return 0;
      return s.hooks->read_input(buffer, capacity, std::max(timeout_ms, 0));
    },
    /*take_signal=*/
    [](void* call) -> int {
      CallState& s = state(call);
      return s.stop ? s.stop->take_signal() : 0;
    },
    /*window_size=*/
    [](void* call, std::uint16_t* rows, std::uint16_t* cols) -> int {
      CallState& s = state(call);
      std::uint16_t r = 0, c = 0;
      if (!s.terminal || !s.hooks->window_size || !s.hooks->window_size(r, c) || r == 0 || c == 0) return 0;
      const std::uint32_t now = std::uint32_t{r} << 16 | c;
      std::lock_guard lock(s.window_mutex);
      if (now == s.last_window) return 0;
      s.last_window = now;
      if (rows) *rows = r;
      if (cols) *cols = c;
      return 1;
    },
};

// Points `slot` at `fn` (when set) until the end of the scope.
class TransferScope {
 public:
  TransferScope(const TransferFn*& slot, const TransferFn& fn) : slot_(slot) { slot_ = fn ? &fn : nullptr; }
  ~TransferScope() { slot_ = nullptr; }
  TransferScope(const TransferScope&) = delete;
  TransferScope& operator=(const TransferScope&) = delete;

 private:
  const TransferFn*& slot_;
};

// ProviderSession::identity(): what open reported (`open_result`) and the secret and
// trusted values of `options`, digested; "" when there is nothing to tell sessions apart.
std::string identity_of(const ProviderSpec& spec, const StringMap& options, const std::string& open_result) {
  std::string target;
  try {
    target = wire::read<wire::OpenResult>(open_result, "the answer of open").target;
  } catch (const Error&) {
    // Nothing the plugin said can be read: its options alone tell sessions apart.
  }
  Sha256 digest;
  bool any = !target.empty();
  digest.update(target);
  for (const OptionSpec& o : spec.options) {
    auto it = options.find(o.name);
    if (it == options.end() || it->second.empty() || !(o.secret || o.trusted)) continue;
    any = true;
    digest.update(std::string(1, '\0') + o.name + '=' + it->second);
  }
  return any ? digest.hex().substr(0, 16) : std::string();
}

}  // namespace

ProviderSession::ProviderSession(std::unique_ptr<PluginInstance> plugin, const StringMap& options, HostHooks hooks)
    : plugin_(std::move(plugin)), hooks_(std::move(hooks)) {
  for (const OptionSpec& o : plugin_->spec().options)
    if (o.secret)
      if (auto it = options.find(o.name); it != options.end()) redactor_.add(it->second);
  CallStop stop(hooks_, {});
  CallState s{&hooks_, &redactor_, &stop};
  const std::string config = wire::to_json(wire::OpenRequest{options});
  if (!plugin_->open(config, kHost, &s)) {
    if (s.error) throw *s.error;
    throw Error(ErrorCode::internal, fmt::format("provider '{}' failed to start", spec().name));
  }
  identity_ = identity_of(spec(), options, s.result.empty() ? "{}" : s.result);
}

ProviderSession::ProviderSession(std::shared_ptr<const Plugin> plugin, const StringMap& options, HostHooks hooks)
    : ProviderSession(in_process_instance(std::move(plugin)), options, std::move(hooks)) {}

ProviderSession::~ProviderSession() = default;

std::string ProviderSession::call(Primitive p, const std::string& lease, const std::string& request) {
  CallStop stop(hooks_, {});
  return call(p, lease, request, &stop);
}

std::string ProviderSession::call(Primitive p, const std::string& lease, const std::string& request, CallStop* stop,
                                  std::int64_t command_timeout, bool input, bool terminal) {
  if (!plugin_->provides(p))
    throw Error(ErrorCode::unsupported,
                fmt::format("provider '{}' does not support '{}'", spec().name, primitive_name(p)));
  CallState s{&hooks_, &redactor_, stop, transfer_};
  s.input = input;
  s.terminal = terminal;
  CallSite site{primitive_name(p), lease, command_timeout, nullptr};
  if (stop) site.stop = [stop] { return stop->reason(); };
  int rc = plugin_->call(site, request, kHost, &s);
  if (rc != 0) {
    if (s.error) throw *s.error;
    throw Error(ErrorCode::internal,
                fmt::format("provider '{}' failed in '{}' without saying why", spec().name, site.primitive));
  }
  return s.result.empty() ? "{}" : s.result;
}

std::string ProviderSession::lease_of(const Sandbox& sandbox) const {
  if (auto it = sandbox.labels.find(wire::kLeaseLabel); it != sandbox.labels.end()) return it->second;
  return sandbox.id == created_.first ? created_.second : "";
}

template <Primitive P>
ProviderSession::Result<P> ProviderSession::answer(const std::string& text) {
  try {
    const std::string what = fmt::format("the answer of provider '{}' to '{}'", spec().name, primitive_name(P));
    return wire::read<Result<P>>(text, what);
  } catch (const Error& e) {
    throw Error(ErrorCode::internal, redactor_.apply(e.what()),
                "this is a bug in the provider plugin; report it to its authors");
  }
}

template <Primitive P>
ProviderSession::Result<P> ProviderSession::ask(const std::string& lease, const Request<P>& request) {
  return answer<P>(call(P, lease, wire::to_json(request)));
}

Sandbox ProviderSession::remember(Sandbox sandbox) {
  for (const auto& [k, v] : sandbox.secrets) redactor_.add(v);
  return sandbox;
}

std::vector<DoctorCheck> ProviderSession::doctor() {
  auto result = ask<Primitive::doctor>({}, {});
  for (DoctorCheck& c : result.checks) {
    c.detail = redactor_.apply(c.detail);
    c.hint = redactor_.apply(c.hint);
  }
  return result.checks;
}

Sandbox ProviderSession::create(const CreateRequest& request) {
  Sandbox sandbox = remember(ask<Primitive::create>({}, request));
  if (sandbox.id.empty())
    throw Error(ErrorCode::internal, fmt::format("provider '{}' created a sandbox without an id", spec().name),
                "this is a bug in the provider plugin; report it to its authors");
  created_ = {sandbox.id, request.lease_id};
  return sandbox;
}

Sandbox ProviderSession::get(const std::string& id, const std::string& lease) {
  return remember(ask<Primitive::get>(lease, {id}));
}

std::vector<Sandbox> ProviderSession::list(const StringMap& labels) {
  return ask<Primitive::list>({}, {labels}).sandboxes;
}

void ProviderSession::destroy(const Sandbox& sandbox) {
  // Destroying is cleanup: it runs after the Ctrl-C that asked for it and is never cut short by it.
  call(Primitive::destroy, lease_of(sandbox), wire::to_json(Request<Primitive::destroy>{sandbox}), /*stop=*/nullptr);
}

ExecResult ProviderSession::exec(const Sandbox& sandbox, const Command& command) {
  // Once told to stop, the run ends as what stopped it, whatever the plugin answers. A
  // provider that passes signals on gets the user's first and --stop-timeout to end by it.
  CallStop::Rules rules{.timeout_seconds = command.timeout_seconds, .timeout_ms = command.timeout_ms};
  if (has(Feature::exec_signals)) rules.signal_grace = std::chrono::milliseconds(std::max<std::int64_t>(command.stop_timeout_ms, 0));
  CallStop stop(hooks_, rules);
  for (const Secret& secret : command.secrets) redactor_.add(secret.value);  // from here on, masked
  ExecResult result;
  try {
    const std::string request = wire::to_json(Request<Primitive::exec>{sandbox, command});
    const bool input = command.forward_stdin && has(Feature::exec_stdin);
    const bool terminal = input && command.tty && has(Feature::exec_tty);
    result = answer<Primitive::exec>(
        call(Primitive::exec, lease_of(sandbox), request, &stop, command.timeout_seconds, input, terminal));
  } catch (const Error& e) {
    const StopReason why = stop.reason();
    // Stopped at a --timeout corral keeps itself (one to the millisecond, or one the plugin
    // let pass), the plugin saw only a cancel: the timeout is the story.
    if (why == StopReason::timed_out && e.code() == ErrorCode::cancelled)
      throw stopped(why, command, spec().name, std::nullopt, nullptr, stop);
    const bool as_told = e.code() == stop_error_code(why);
    // The plugin's own words for a stop stand, but for a kill after the signal's grace,
    // which only corral knows the story of.
    if (why == StopReason::none || (as_told && !(why == StopReason::interrupted && stop.signalled()))) throw;
    throw stopped(why, command, spec().name, std::nullopt, as_told ? nullptr : &e, stop);
  }
  if (const StopReason why = stop.reason(); why != StopReason::none)
    throw stopped(why, command, spec().name, result.exit_code, nullptr, stop);
  return result;
}

void ProviderSession::upload(const Sandbox& sandbox, const UploadRequest& request, const TransferFn& on_bytes) {
  TransferScope scope(transfer_, on_bytes);
  // Nothing to read: a plugin's answer to upload says nothing.
  call(Primitive::upload, lease_of(sandbox), wire::to_json(Request<Primitive::upload>{sandbox, request}));
}

Sandbox ProviderSession::extend(const Sandbox& sandbox, std::int64_t seconds) {
  return remember(
      ask<Primitive::extend>(lease_of(sandbox), {sandbox, seconds}));
}

std::string ProviderSession::url(const Sandbox& sandbox, int port) {
  return ask<Primitive::url>(lease_of(sandbox), {sandbox, port}).url;
}

DownloadResult ProviderSession::download(const Sandbox& sandbox, const DownloadRequest& request,
                                         const TransferFn& on_bytes) {
  TransferScope scope(transfer_, on_bytes);
  // Results are wanted most from a command that ended on its Ctrl-C: a download begun
  // after it is stopped only by the user's next one.
  CallStop stop(hooks_, {.asks_before = hooks_.stop_requests ? hooks_.stop_requests() : 0});
  return answer<Primitive::download>(
      call(Primitive::download, lease_of(sandbox), wire::to_json(Request<Primitive::download>{sandbox, request}), &stop));
}

Sandbox ProviderSession::pause(const Sandbox& sandbox) {
  return remember(ask<Primitive::pause>(lease_of(sandbox), {sandbox}));
}

Sandbox ProviderSession::resume(const Sandbox& sandbox) {
  return remember(ask<Primitive::resume>(lease_of(sandbox), {sandbox}));
}

std::vector<ForkOutcome> ProviderSession::fork(const Sandbox& source, const std::vector<ForkTarget>& targets) {
  auto result = ask<Primitive::fork>(lease_of(source), {source, targets});
  for (ForkOutcome& f : result.forks) {
    if (f.sandbox) remember(*f.sandbox);
    if (f.error) f.error = Error(f.error->code(), redactor_.apply(f.error->what()), redactor_.apply(f.error->hint()));
  }
  if (result.forks.size() != targets.size()) {
    for (const ForkOutcome& f : result.forks) {
      if (!f.sandbox) continue;
      try {
        destroy(*f.sandbox);
      } catch (const Error&) {
        // Best effort: the error below is what the user needs; the fork carries corral's labels.
      }
    }
    throw Error(ErrorCode::internal,
                fmt::format("provider '{}' answered {} fork outcomes for {} forks", spec().name, result.forks.size(),
                            targets.size()),
                "this is a bug in the provider plugin; report it to its authors");
  }
  for (const ForkOutcome& f : result.forks)
    if (f.sandbox && f.sandbox->id.empty())
      throw Error(ErrorCode::internal, fmt::format("provider '{}' forked a sandbox without an id", spec().name),
                  "this is a bug in the provider plugin; report it to its authors");
  return result.forks;
}

}  // namespace corral
