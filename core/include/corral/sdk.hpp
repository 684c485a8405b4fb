// The C++ side of the plugin ABI for plugin authors: derive from corral::sdk::Provider,
// override the primitives you provide, and write CORRAL_PLUGIN(YourClass, version, spec),
// where `spec` is a corral::ProviderSpec (typed, checked by the compiler) or its JSON text.
// The macro generates the C entry point; every call is wrapped so that no exception
// crosses the boundary and every failure arrives at the host as {code, message, hint}.
//
// Threads (the ABI's rule, corral/plugin_abi.h): corral constructs one Provider per
// command and calls it from one thread, one call at a time, until it destroys it. A
// fan-out (corral run --shards N) makes N instances in one process and calls them from N
// threads at once, each from its own thread: keep state in the instance, not in globals;
// what instances share must be safe from several threads, and a child forked before exec
// must close what it does not need. Other corral processes may call get and url on a
// sandbox while this one runs exec in it, and exec too on a provider with exec-concurrent
// (keep each command's pid file or session its own). A Host serves the one call it was
// made for.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "corral/json.hpp"
#include "corral/plugin_abi.h"
#include "corral/primitives.hpp"
#include "corral/sdk/redact.hpp"
#include "corral/types.hpp"

namespace corral::sdk {

// The host's services for one call, valid until that call returns. Threads: cancelled()
// may be asked from any thread; the other methods must not run at once on two threads.
class Host {
 public:
  // `secrets`: what the provider registered (Provider::secrets()), masked in every log
  // line and progress note; nullptr: nothing to mask.
  Host(const corral_host_v1* host, void* call, const Redactor* secrets = nullptr)
      : host_(host), call_(call), secrets_(secrets) {}
  // Streams command output to the user as it arrives.
  void emit(corral_stream stream, std::string_view data) const {
    if (!data.empty()) host_->emit(call_, stream, data.data(), data.size());
  }
  // True once the user asked to stop (Ctrl-C). Safe from any thread.
  bool cancelled() const { return host_->cancelled(call_) != 0; }
  void info(const std::string& message) const { host_->log(call_, CORRAL_LOG_INFO, masked(message).c_str()); }
  void warn(const std::string& message) const { host_->log(call_, CORRAL_LOG_WARN, masked(message).c_str()); }
  void debug(const std::string& message) const { host_->log(call_, CORRAL_LOG_DEBUG, masked(message).c_str()); }
  void progress(const std::string& message) const { host_->progress(call_, masked(message).c_str()); }
  // Bytes of this call's upload or download moved so far, of `total` (0 = not known), for
  // the user's progress bar; a host too old to hear it is skipped.
  void transfer(std::uint64_t done, std::uint64_t total) const {
    if (CORRAL_HOST_HAS(host_, transfer)) host_->transfer(call_, done, total);
  }
  // exec of a command with Command::forward_stdin: its next input, waiting at most
  // `timeout_ms`: the bytes read, 0 at its end, -1 when none came in time. A host too old
  // to pass input on has none: 0. From one thread at a time (InputPump's).
  long read_input(char* buffer, std::size_t capacity, int timeout_ms) const {
    return CORRAL_HOST_HAS(host_, read_input) ? host_->read_input(call_, buffer, capacity, timeout_ms) : 0;
  }
  // exec on a provider with exec-signals: the signal to pass on to the command now
  // (SIGINT, SIGTERM, SIGHUP), once; 0 when none. Safe from any thread.
  int take_signal() const { return CORRAL_HOST_HAS(host_, take_signal) ? host_->take_signal(call_) : 0; }
  // exec of a command with Command::tty: the user's terminal size, when it changed since
  // last asked (always at the first ask); false when unchanged or not known. Any thread.
  bool window_size(std::uint16_t& rows, std::uint16_t& cols) const {
    return CORRAL_HOST_HAS(host_, window_size) && host_->window_size(call_, &rows, &cols) != 0;
  }
  // transfer() as a callback, for the SDK's streamed uploads and downloads (their
  // on_transfer); valid during this call, like the Host itself.
  std::function<void(std::uint64_t, std::uint64_t)> transfer_reporter() const {
    return [host = *this](std::uint64_t done, std::uint64_t total) { host.transfer(done, total); };
  }

 private:
  // `text` with the provider's secrets masked.
  std::string masked(const std::string& text) const { return secrets_ ? secrets_->apply(text) : text; }

  const corral_host_v1* host_;
  void* call_;
  const Redactor* secrets_;
};

// When a remote command must stop: the user asked (Ctrl-C) or its --timeout passed.
// Poll stop() from the output loop; afterwards timed_out() says which of the two it was.
// Threads: belongs to the thread that polls it.
class CommandDeadline {
 public:
  // `timeout_seconds` 0 means no deadline.
  CommandDeadline(const Host& host, std::int64_t timeout_seconds);
  bool stop();
  bool timed_out() const { return timed_out_; }

 private:
  const Host& host_;
  bool has_deadline_;
  std::chrono::steady_clock::time_point deadline_;
  bool timed_out_ = false;
};

// "provider plugin 'NAME' crashed during 'exec' (SIGSEGV)": the words of every report of
// a plugin that crashed, whether corral saw the signal or the SDK caught what escaped.
std::string crash_message(std::string_view plugin, std::string_view primitive, std::string_view cause);

// "--PROVIDER-OPTION or CORRAL_PROVIDER_OPTION": how a user sets option `option` of
// provider `provider` when its variable follows corral's own naming, for messages and hints.
std::string setting_name(std::string_view provider, std::string_view option);

// The resolved values of a provider's options (strings as given; typed getters validate).
// Made by the SDK with the names the plugin's spec declares, every getter refuses a name
// the spec does not declare (internal: a misspelt name in the plugin's code, which would
// otherwise read as unset and ignore the user's setting). Made from values alone (a unit
// test's), any name reads. Threads: only read once made; safe from any thread.
class Options {
 public:
  Options() = default;
  explicit Options(StringMap values) : values_(std::move(values)) {}
  Options(StringMap values, std::shared_ptr<const std::vector<std::string>> declared)
      : values_(std::move(values)), declared_(std::move(declared)) {}
  // The value, or `fallback` when the option is unset.
  std::string get(const std::string& name, const std::string& fallback = {}) const;
  bool has(const std::string& name) const { return values_.count(declared(name)) != 0; }
  std::int64_t get_int(const std::string& name, std::int64_t fallback) const;
  bool get_bool(const std::string& name, bool fallback) const;
  // Seconds of a duration option such as "1h".
  std::int64_t get_duration(const std::string& name, std::int64_t fallback) const;
  // The same, refused (invalid-argument, the hint naming `setting` and the range) unless
  // it is within [min_seconds, max_seconds]: for time limits, where 0 or a week is a typo.
  std::int64_t get_duration_within(const std::string& name, std::int64_t fallback, std::int64_t min_seconds,
                                    std::int64_t max_seconds, const std::string& setting) const;
  const StringMap& values() const { return values_; }

 private:
  // Refuses `name` unless the spec declares it (or no spec was given); returns it.
  const std::string& declared(const std::string& name) const;

  StringMap values_;
  std::shared_ptr<const std::vector<std::string>> declared_;  // null: every name reads
};

// A provider's primitives, one method per line of corral/primitives.def. create, destroy
// and exec are required; the others are provided by overriding them, and the loader
// checks that advertised features have them. Threads: the constructor and each method of
// one instance run one at a time (corral/plugin_abi.h); constructors of a fan-out's
// instances run at once.
class Provider {
 public:
  virtual ~Provider() = default;
  // Who this instance works for, beyond the options it was opened with: the account and
  // endpoint it reaches when something other than an option decides them (a kubeconfig's
  // current context). Sessions of different targets never share a warm pool, and a lease
  // made under one is never forgotten because another cannot see it. No secret in it:
  // a digest where a credential decides it. Empty (the default): the options say it all;
  // corral counts secret options in by their digests itself.
  virtual std::string target() const { return ""; }
  virtual std::vector<DoctorCheck> doctor(const Host&) { return {}; }
  virtual Sandbox create(const CreateRequest& request, const Host& host) = 0;
  virtual Sandbox get(const std::string& id, const Host& host);
  virtual std::vector<Sandbox> list(const StringMap& labels, const Host& host);
  virtual void destroy(const Sandbox& sandbox, const Host& host) = 0;
  // Runs `command`, streaming output through host.emit; returns the exit code.
  virtual ExecResult exec(const Sandbox& sandbox, const Command& command, const Host& host) = 0;
  // Unpacks the workspace archive over the sandbox's workdir: the archive's files win,
  // files the sandbox created (build output, caches) survive for a reused sandbox.
  virtual void upload(const Sandbox& sandbox, const UploadRequest& request, const Host& host);
  virtual Sandbox extend(const Sandbox& sandbox, std::int64_t seconds, const Host& host);
  virtual std::string url(const Sandbox& sandbox, int port, const Host& host);
  // Stops the sandbox costing compute, its files kept; returns it with state "paused".
  // Pausing a paused sandbox is no error; a vanished one throws not-found.
  virtual Sandbox pause(const Sandbox& sandbox, const Host& host);
  // Makes a paused sandbox run again as it was; returns it with state "running". Resuming
  // a running one is no error; a provider that refuses for quota throws quota.
  virtual Sandbox resume(const Sandbox& sandbox, const Host& host);
  // Packs the files matching request.patterns into a .tar.gz at request.archive_path;
  // write it through sdk::DownloadFile (corral/sdk/download.hpp), which holds the size
  // bound, and build it in the sandbox with sdk::download_script.
  virtual DownloadResult download(const Sandbox& sandbox, const DownloadRequest& request, const Host& host);
  // Copies `source`'s current files into one new sandbox per target, in order, each
  // independent of the source and of the others; the source stays as it was. Put each
  // target's labels on its fork where the provider stores labels. A fork that could not
  // be made is an outcome with its error; when the call as a whole fails (or host says
  // cancelled), destroy the forks already made before throwing. In a class derived from
  // Provider, `fork` names this method: call POSIX's as ::fork().
  virtual std::vector<ForkOutcome> fork(const Sandbox& source, const std::vector<ForkTarget>& targets,
                                        const Host& host);

  // The secrets this provider holds that corral cannot know of (a token it read from a
  // file of the user's, one a credential plugin printed): add them here as soon as they
  // are known, and the SDK masks them in every error, hint, log line, progress note and
  // doctor check the provider reports, whoever wrote the text (a server quoting a
  // request's Authorization header). Secret options and Sandbox::secrets need no adding:
  // corral masks those itself. Add from the instance's own calls, as its other state.
  Redactor& secrets() { return secrets_; }

 private:
  Redactor secrets_;
};

namespace detail {

using Body = std::string (*)(Provider&, std::string_view request, const Host&);

// Runs `body`, primitive `primitive` of the instance, and reports its result or error to
// the host; never throws. An exception other than corral::Error is a bug of the plugin's:
// it is reported as a crash naming the plugin, the primitive and the exception's type.
int invoke(void* instance, const char* request, const corral_host_v1* host, void* call, Body body,
           const char* primitive);
// Creates an instance of plugin `plugin` with `factory` from the config JSON; never throws.
void* open(const char* config, const corral_host_v1* host, void* call, Provider* (*factory)(const Options&),
           const char* plugin, std::shared_ptr<const std::vector<std::string>> declared);
void close(void* instance);
// The provider name in `spec_json`, kept alive for the descriptor.
const char* spec_name(const char* spec_json);
// The option names `spec_json` declares; empty when it cannot be read (the loader refuses it).
std::shared_ptr<const std::vector<std::string>> spec_option_names(const char* spec_json);
// The JSON text of `spec`, kept alive for the descriptor. Not validated here: the loader
// validates every spec the same way, and refuses a bad one naming the field.
const char* spec_text(const ProviderSpec& spec);

// The SDK's side of each primitive: reads its request, calls the Provider method and
// writes its result (sdk.cpp defines one per primitives.def line).
#define CORRAL_PRIMITIVE(slot, need, deadline, request, result) std::string do_##slot(Provider&, std::string_view, const Host&);
#include "corral/primitives.def"

template <Body B, Primitive P>
int call(void* instance, const char* request, const corral_host_v1* host, void* c) {
  return invoke(instance, request, host, c, B, primitive_name(P));
}

// True when Provider's own version of `p` answers (doctor: no checks) rather than refusing
// as unsupported, so a plugin provides it without overriding it.
constexpr bool answers_by_default(Primitive p) { return p == Primitive::doctor; }

// The provider name of plugin class T's descriptor, for the instances open() makes.
template <class T>
const char*& plugin_name() {
  static const char* name = "";
  return name;
}

// The option names plugin class T's spec declares, for the Options open() makes.
template <class T>
std::shared_ptr<const std::vector<std::string>>& declared_options() {
  static std::shared_ptr<const std::vector<std::string>> names;
  return names;
}

// True when T declares its own override of a primitive (not inherited from Provider).
#define CORRAL_SDK_OVERRIDES(T, fn) (!std::is_same_v<decltype(&T::fn), decltype(&Provider::fn)>)

template <class T>
corral_plugin_v1 make_descriptor(const char* version, const char* spec_json) {
  static_assert(std::is_base_of_v<Provider, T>, "a corral plugin class derives from corral::sdk::Provider");
  static_assert(std::is_constructible_v<T, const Options&>, "a corral plugin class is constructible from const Options&");
  corral_plugin_v1 d{};
  d.abi_version = CORRAL_ABI_VERSION;
  d.struct_size = sizeof(corral_plugin_v1);
  d.name = spec_name(spec_json);
  plugin_name<T>() = d.name;
  declared_options<T>() = spec_option_names(spec_json);
  d.plugin_version = version;
  d.spec_json = spec_json;
  d.open = [](const char* config, const corral_host_v1* host, void* c) -> void* {
    return open(config, host, c, [](const Options& o) -> Provider* { return new T(o); }, plugin_name<T>(),
                declared_options<T>());
  };
  d.close = &close;
  // A primitive is in the descriptor when T provides it: when T (or a base between it and
  // Provider) overrides it, or Provider's own version answers. The loader thus sees what
  // the plugin can do, and refuses a feature advertised without its primitives.
#define CORRAL_PRIMITIVE(slot, need, deadline, request, result)                                        \
  if constexpr (CORRAL_SDK_OVERRIDES(T, slot) || answers_by_default(Primitive::slot)) \
    d.slot = &call<do_##slot, Primitive::slot>;
#include "corral/primitives.def"
  return d;
}

// The same, for a spec written in C++ (a ProviderSpec) rather than as JSON text.
template <class T>
corral_plugin_v1 make_descriptor(const char* version, const ProviderSpec& spec) {
  return make_descriptor<T>(version, spec_text(spec));
}

}  // namespace detail
}  // namespace corral::sdk

// Generates the plugin's exported entry point for provider class `Class`.
#define CORRAL_PLUGIN(Class, version, spec)                                                                  \
  extern "C" CORRAL_PLUGIN_EXPORT const corral_plugin_v1* corral_plugin_entry_v1(void) {                     \
    static const corral_plugin_v1 descriptor = ::corral::sdk::detail::make_descriptor<Class>(version, spec); \
    return &descriptor;                                                                                      \
  }
