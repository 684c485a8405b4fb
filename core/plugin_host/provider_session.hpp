// The host side of the plugin ABI: an opened provider instance whose primitives are
// called with C++ types, JSON on the wire, errors rethrown as corral::Error. Whether the
// plugin runs in this process or in a helper (plugin_instance.hpp), this is the one place
// that turns its JSON into types, redacts it and maps its errors.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "corral/sdk/redact.hpp"
#include "corral/types.hpp"
#include "corral/wire.hpp"
#include "plugin_host/loader.hpp"
#include "plugin_host/plugin_instance.hpp"

namespace corral {

class CallStop;

// What the user interface does with a plugin's output and messages.
struct HostHooks {
  std::function<void(int stream, std::string_view data)> emit;
  std::function<bool()> cancelled;
  std::function<void(int level, const std::string& message)> log;
  std::function<void(const std::string& message)> progress;
  // How often the user asked to stop so far (Ctrl-C, SIGTERM); unset: 1 once cancelled.
  std::function<int()> stop_requests;
  // The signal of the first of those asks (SIGINT, SIGTERM, SIGHUP); unset: SIGINT.
  std::function<int()> stop_signal;
  // The user's input for a command that reads it (the ABI's read_input); unset: none.
  std::function<long(char* buffer, std::size_t capacity, int timeout_ms)> read_input;
  // The user's terminal size, for a command on a terminal; false when there is none.
  std::function<bool(std::uint16_t& rows, std::uint16_t& cols)> window_size;
};

// Hears the bytes an upload or download moved so far, of a total (0 = not known).
using TransferFn = std::function<void(std::uint64_t done, std::uint64_t total)>;

class ProviderSession {
 public:
  // Opens an instance with resolved `options`; secret option values are registered with
  // the redactor so they never show in errors or logs. Throws corral::Error.
  ProviderSession(std::unique_ptr<PluginInstance> plugin, const StringMap& options, HostHooks hooks);
  // The same for a plugin loaded into this process.
  ProviderSession(std::shared_ptr<const Plugin> plugin, const StringMap& options, HostHooks hooks);
  ~ProviderSession();
  ProviderSession(const ProviderSession&) = delete;
  ProviderSession& operator=(const ProviderSession&) = delete;

  const ProviderSpec& spec() const { return plugin_->spec(); }
  bool has(Feature f) const { return plugin_->spec().features.has(f); }
  const sdk::Redactor& redactor() const { return redactor_; }
  // Who this session works for: a digest of its plugin's target (Provider::target) and of
  // the values of its secret and trusted options (the account and the endpoints), "" when
  // none of them is set. Sessions of one identity see the same sandboxes: warm pools are
  // keyed by it, and a claim records the identity it was made under.
  const std::string& identity() const { return identity_; }

  std::vector<DoctorCheck> doctor();
  Sandbox create(const CreateRequest& request);
  // `lease`: the lease whose claim records the sandbox, named should the plugin crash.
  Sandbox get(const std::string& id, const std::string& lease = {});
  std::vector<Sandbox> list(const StringMap& labels);
  void destroy(const Sandbox& sandbox);
  ExecResult exec(const Sandbox& sandbox, const Command& command);
  // `on_bytes` hears the plugin's transfer reports (the ABI's transfer()), if it makes any.
  void upload(const Sandbox& sandbox, const UploadRequest& request, const TransferFn& on_bytes = {});
  Sandbox extend(const Sandbox& sandbox, std::int64_t seconds);
  std::string url(const Sandbox& sandbox, int port);
  DownloadResult download(const Sandbox& sandbox, const DownloadRequest& request, const TransferFn& on_bytes = {});
  Sandbox pause(const Sandbox& sandbox);
  Sandbox resume(const Sandbox& sandbox);
  // One outcome per target, in order; an answer with another count is the plugin's bug
  // (internal), and the forks it did report are destroyed before that is thrown.
  std::vector<ForkOutcome> fork(const Sandbox& source, const std::vector<ForkTarget>& targets);

 private:
  // Calls primitive `p` and returns its JSON result; `lease` is the lease named should the
  // plugin crash ("" = none). `stop` says when the call was told to stop (the user's
  // Ctrl-C, exec's --timeout of `command_timeout` seconds); with nullptr nothing stops it
  // (cleanup after the Ctrl-C that caused it).
  // `input`: the call may read the user's input (exec of a command that reads it);
  // `terminal`: it may ask the user's window size (exec of a command on a terminal).
  std::string call(Primitive p, const std::string& lease, const std::string& request, CallStop* stop,
                   std::int64_t command_timeout = 0, bool input = false, bool terminal = false);
  // The same, told to stop by the user's Ctrl-C.
  std::string call(Primitive p, const std::string& lease, const std::string& request);
  // Primitive P's request and result, of the types primitives.def names for it.
  template <Primitive P>
  using Request = typename wire::Messages<P>::Request;
  template <Primitive P>
  using Result = typename wire::Messages<P>::Result;
  // Reads P's answer; a malformed one is the plugin's bug (internal).
  template <Primitive P>
  Result<P> answer(const std::string& text);
  // Calls P, told to stop by the user's Ctrl-C, and reads its answer.
  template <Primitive P>
  Result<P> ask(const std::string& lease, const Request<P>& request);
  Sandbox remember(Sandbox sandbox);
  // The lease `sandbox` works for, for crash reports: its corral-lease label, or the lease
  // this session created it for (not every provider reports labels); "" when unknown.
  std::string lease_of(const Sandbox& sandbox) const;

  std::unique_ptr<PluginInstance> plugin_;
  HostHooks hooks_;
  sdk::Redactor redactor_;
  const TransferFn* transfer_ = nullptr;  // during upload() and download(): their on_bytes
  std::string identity_;
  std::pair<std::string, std::string> created_;  // the sandbox id create() returned, and its lease
};

}  // namespace corral
