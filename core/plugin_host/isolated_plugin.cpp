#include "plugin_host/isolated_plugin.hpp"

#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fmt/format.h>

#include <charconv>
#include <optional>
#include <set>
#include <vector>

#include "plugin_host/child_wait.hpp"
#include "corral/errors.hpp"
#include "corral/json.hpp"
#include "corral/os/descriptors.hpp"
#include "corral/sdk.hpp"
#include "base/paths.hpp"
#include "plugin_host/plugin_channel.hpp"
#include "plugin_host/plugin_probe.hpp"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace corral {

fs::path plugin_host_path() { return (paths::executable_dir() / CORRAL_PLUGIN_HOST_RELPATH).lexically_normal(); }

namespace {

constexpr int kChannelFd = 3;  // where the helper finds its socket
// How long a helper may take to close its instance and exit before it is killed.
constexpr std::chrono::seconds kCloseGrace{5};

double seconds(std::chrono::milliseconds ms) { return static_cast<double>(ms.count()) / 1000; }

// Starts `helper` on `library` with the socket `channel` as its fd 3, in its own process
// group (a terminal's Ctrl-C reaches corral, which forwards it as a cancel frame) and
// dying with corral. Returns its pid.
pid_t spawn_helper(const fs::path& helper, const fs::path& library, const std::string& pin, int channel) {
  std::vector<std::string> args = {helper.string(), library.string()};
  if (!pin.empty()) args.push_back(pin);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0)
    throw Error(ErrorCode::internal, fmt::format("cannot start the plugin helper: fork: {}", strerror(errno)));
  if (pid == 0) {  // only async-signal-safe calls until exec
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(126);
    if (channel != kChannelFd) ::dup2(channel, kChannelFd);
    os::close_on_exec_from(kChannelFd + 1);  // the plugin gets the channel, nothing of corral's
    ::fcntl(kChannelFd, F_SETFD, 0);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so a kill of the group reaches it however early
  return pid;
}

class Isolated final : public PluginInstance {
 public:
  Isolated(const IsolationSettings& settings, const fs::path& library) : settings_(settings), library_(library) {}

  // Asks the helper to close the instance and exit; kills it when it does not.
  ~Isolated() override {
    if (pid_ > 0) {
      int status = 0;
      if (channel::write_frame(fd_, channel::Kind::close)) {
        if (!reap_until(pid_, Clock::now() + kCloseGrace, status)) kill_and_reap(pid_, status);
      } else {
        kill_and_reap(pid_, status);
      }
    }
    if (fd_ >= 0) ::close(fd_);
  }

  // Starts the helper and reads its hello (or why it could not load the plugin).
  void start(const std::string& pin, HelperHello& hello) {
    pin_ = pin;
    launch(hello);
  }

  const ProviderSpec& spec() const override { return spec_; }
  bool provides(Primitive p) const override { return primitives_.count(p) > 0; }

  bool open(const std::string& config, const corral_host_v1& host, void* call) override {
    const CallSite site{"open"};
    config_ = config;
    send(site, channel::Kind::open, config);
    return serve(site, host, call) == 0;
  }

  int call(const CallSite& site, const std::string& request, const corral_host_v1& host, void* call) override {
    if (dead_) throw *dead_;
    if (pid_ < 0) restart(host, call);
    // The terminal's size goes first, so a command on a terminal starts at the user's size.
    pass_window(site, host, call);
    send(site, channel::Kind::call, std::string(site.primitive) + '\0', request);
    return serve(site, host, call);
  }

 private:
  // Starts the helper on the library and reads its hello (or why it could not load the
  // plugin); a helper started before is gone by now.
  void launch(HelperHello& hello) {
    const fs::path helper = plugin_host_path();
    std::error_code ec;
    if (!fs::is_regular_file(helper, ec))
      throw ConfigError(fmt::format("plugin {}: its registry entry asks for isolation: process, but corral's plugin "
                                    "helper {} is missing",
                                    library_.string(), helper.string()),
                        "reinstall corral, or set isolation: in-process in the registry entry");
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
      throw Error(ErrorCode::internal, fmt::format("cannot start the plugin helper: socketpair: {}", strerror(errno)));
    if (fd_ >= 0) ::close(fd_);
    fd_ = sv[0];
    reader_ = channel::Reader(fd_);
    try {
      pid_ = spawn_helper(helper, library_, pin_, sv[1]);
    } catch (...) {
      ::close(sv[1]);
      throw;
    }
    ::close(sv[1]);
    const CallSite site{"load"};
    const Clock::time_point until = Clock::now() + probe_deadline();
    for (;;) {
      if (auto f = reader_.next()) {
        if (f->kind != channel::Kind::hello) broken(site, "sent something other than its hello");
        read_hello(f->payload, hello);
        return;
      }
      if (Clock::now() >= until) hung(site, fmt::format("no hello {:g} s after it started", seconds(probe_deadline())));
      receive(site, until);
    }
  }

  // Starts a fresh helper in place of one stopped for outliving its cancellation, and
  // opens the instance again as it was opened, so cleanup still reaches the provider.
  void restart(const corral_host_v1& host, void* call) {
    const std::string before = hello_spec_;
    HelperHello hello;
    launch(hello);
    if (hello.spec_json != before) broken({"load"}, "described its plugin otherwise than its first helper did");
    if (!open(config_, host, call))
      throw Error(ErrorCode::internal,
                  fmt::format("provider plugin '{}' could not be opened again after its helper was stopped", name()));
  }

  // Learns the plugin's spec and primitives from the hello; throws ConfigError when the
  // helper could not load the plugin, saying why as load_plugin did.
  void read_hello(std::string_view payload, HelperHello& hello) {
    size_t nul = payload.find('\0');
    std::optional<ProbeResult> report =
        nul == std::string_view::npos ? std::nullopt : read_load_report(payload.substr(nul + 1));
    if (!report) broken({"load"}, "sent a malformed hello");
    if (report->error)
      throw ConfigError(report->error->message, "`corral providers` shows every registry entry and its status");
    std::string_view names = payload.substr(0, nul);
    while (!names.empty()) {
      size_t space = std::min(names.find(' '), names.size());
      if (auto p = primitive_named(names.substr(0, space))) primitives_.insert(*p);
      names.remove_prefix(std::min(space + 1, names.size()));
    }
    spec_ = json::spec_from_json(report->spec_json);
    hello_spec_ = report->spec_json;
    hello = {report->spec_json, report->plugin_version, report->abi_version};
  }

  // Sends one frame to the helper; a helper that is gone is a crash of this call.
  void send(const CallSite& site, channel::Kind kind, std::string_view a = {}, std::string_view b = {}) {
    if (!channel::write_frame(fd_, kind, a, b)) died(site);
  }

  // Relays the helper's frames to `host` until the call is done; returns its code. Once
  // the call is told to stop, the helper is told too and has cancel-grace to finish it.
  int serve(const CallSite& site, const corral_host_v1& host, void* call) {
    // call-timeout binds opening the instance and each primitive primitives.def binds.
    const std::optional<Primitive> primitive = primitive_named(site.primitive);
    std::optional<Clock::time_point> deadline;
    if (!primitive || primitive_info(*primitive).call_timeout) deadline = Clock::now() + settings_.call_timeout;
    std::optional<Clock::time_point> grace_ends;
    StopReason why = StopReason::none;
    input_wanted_ = 0;
    for (;;) {
      while (auto f = reader_.next())
        if (auto rc = relay(site, *f, host, call)) return *rc;
      pass_signal(site, host, call);
      pass_window(site, host, call);
      const bool input_sent = pass_input(site, host, call);
      if (!grace_ends && site.stop && (why = site.stop()) != StopReason::none) {
        send(site, channel::Kind::cancel);
        grace_ends = Clock::now() + settings_.cancel_grace;
      }
      if (grace_ends && Clock::now() >= *grace_ends) outlived(site, why);
      if (deadline && Clock::now() >= *deadline)
        hung(site, fmt::format("no answer after {:g} s (the registry entry's call-timeout)",
                               seconds(settings_.call_timeout)));
      // While the plugin waits for input, look for more of it often.
      Clock::time_point wake = Clock::now() + std::chrono::milliseconds(input_wanted_ && !input_sent ? 20 : 100);
      for (const auto& limit : {deadline, grace_ends})
        if (limit) wake = std::min(wake, *limit);
      receive(site, wake);
    }
  }

  // Passes on a signal the user asks the command to get (take_signal()), if any.
  void pass_signal(const CallSite& site, const corral_host_v1& host, void* call) {
    if (!CORRAL_HOST_HAS(&host, take_signal)) return;
    if (const int sig = host.take_signal(call); sig > 0 && sig < 256) {
      const char byte = static_cast<char>(sig);
      send(site, channel::Kind::signal, {&byte, 1});
    }
  }

  // Passes on a change of the user's terminal size (window_size()), if any.
  void pass_window(const CallSite& site, const corral_host_v1& host, void* call) {
    std::uint16_t rows = 0, cols = 0;
    if (!CORRAL_HOST_HAS(&host, window_size) || !host.window_size(call, &rows, &cols) || rows == 0 || cols == 0) return;
    char bytes[4];
    send(site, channel::Kind::window, channel::encode_u32(std::uint32_t{rows} << 16 | cols, bytes));
  }

  // Answers the helper's want_input with what input there is now; true when it did.
  bool pass_input(const CallSite& site, const corral_host_v1& host, void* call) {
    if (input_wanted_ == 0) return false;
    input_.resize(input_wanted_);
    const long got = CORRAL_HOST_HAS(&host, read_input) ? host.read_input(call, input_.data(), input_.size(), 0) : 0;
    if (got < 0) return false;
    send(site, channel::Kind::input, {input_.data(), static_cast<size_t>(got)});
    input_wanted_ = 0;
    return true;
  }

  // Waits until `until` for the helper to send something and reads it. A helper that
  // ended is noticed even while something it forked still holds its end of the socket.
  void receive(const CallSite& site, Clock::time_point until) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    pollfd p{fd_, POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(std::clamp<long long>(left, 0, 100)));
    if (n < 0 && errno != EINTR) died(site);
    if (n > 0 && reader_.fill() != channel::Reader::Fill::data) died(site);
    if (n == 0 && ended_until(pid_, Clock::now())) died(site);
  }

  // Hands one frame to `host`; the call's return code once it is done.
  std::optional<int> relay(const CallSite& site, const channel::Frame& f, const corral_host_v1& host, void* call) {
    std::string_view p = f.payload;
    switch (f.kind) {
      case channel::Kind::result: host.result(call, p.data(), p.size()); return std::nullopt;
      case channel::Kind::emit:
        if (p.empty()) break;
        host.emit(call, static_cast<unsigned char>(p[0]), p.data() + 1, p.size() - 1);
        return std::nullopt;
      case channel::Kind::error: {
        if (p.size() < 2) break;
        std::string_view text = p.substr(2);
        size_t nul = std::min(text.find('\0'), text.size());
        std::string message(text.substr(0, nul)), hint(text.substr(std::min(nul + 1, text.size())));
        host.error(call, static_cast<unsigned char>(p[0]), message.c_str(), p[1] ? hint.c_str() : nullptr);
        return std::nullopt;
      }
      case channel::Kind::log:
        if (p.empty()) break;
        host.log(call, static_cast<unsigned char>(p[0]), std::string(p.substr(1)).c_str());
        return std::nullopt;
      case channel::Kind::progress: host.progress(call, std::string(p).c_str()); return std::nullopt;
      case channel::Kind::transfer: {
        std::uint64_t done = 0, total = 0;
        const char* end = p.data() + p.size();
        auto [at, ec] = std::from_chars(p.data(), end, done);
        if (ec != std::errc() || at == end || *at != ' ') break;
        auto [last, ec2] = std::from_chars(at + 1, end, total);
        if (ec2 != std::errc() || last != end) break;
        if (CORRAL_HOST_HAS(&host, transfer)) host.transfer(call, done, total);
        return std::nullopt;
      }
      case channel::Kind::retry_after:
        if (p.size() != 4) break;
        if (CORRAL_HOST_HAS(&host, retry_after)) host.retry_after(call, channel::decode_u32(p));
        return std::nullopt;
      case channel::Kind::want_input:
        if (p.size() != 4 || input_wanted_ != 0) break;  // one input frame on its way at most
        input_wanted_ = std::clamp<std::uint32_t>(channel::decode_u32(p), 1, channel::kMaxEmit);
        return std::nullopt;
      case channel::Kind::done:
        if (p.size() != 4) break;
        return static_cast<int>(channel::decode_u32(p));
      default: break;
    }
    broken(site, fmt::format("sent a malformed '{}' frame", static_cast<char>(f.kind)));
  }

  // The helper is gone mid-call: say how it ended, then refuse every later call.
  [[noreturn]] void died(const CallSite& site) {
    // Reaped only after its group was killed: whatever the plugin started goes with it.
    const bool ended = ended_until(pid_, Clock::now() + std::chrono::seconds(2));
    int status = 0;
    kill_and_reap(pid_, status);
    std::string cause = !ended                ? std::string("it closed its channel to corral")
                        : WIFSIGNALED(status) ? signal_name(WTERMSIG(status))
                        : WEXITSTATUS(status) == 127 && std::string_view(site.primitive) == "load"
                            ? fmt::format("its helper {} could not be started", plugin_host_path().string())
                            : fmt::format("it ended its helper process with status {}", WEXITSTATUS(status));
    end(site, sdk::crash_message(name(), site.primitive, cause));
  }

  // The helper did not answer in time: kill it and say what it was stuck on.
  [[noreturn]] void hung(const CallSite& site, const std::string& why) {
    int status = 0;
    kill_and_reap(pid_, status);
    end(site, fmt::format("provider plugin '{}' hung during '{}': {}, so it was stopped", name(), site.primitive, why));
  }

  // The call went on past its grace after it was told to stop: kill the helper, which
  // the next call starts again, and end the call as what stopped it.
  [[noreturn]] void outlived(const CallSite& site, StopReason why) {
    int status = 0;
    kill_and_reap(pid_, status);
    pid_ = -1;
    throw Error(stop_error_code(why),
                outlived_message(name(), site, why, settings_.cancel_grace) + ", so corral stopped its helper process",
                "a plugin must return soon after it is told to stop; report it to the plugin's authors");
  }

  // The helper sent what the protocol does not allow: kill it, it cannot be trusted.
  [[noreturn]] void broken(const CallSite& site, const std::string& what) {
    int status = 0;
    kill_and_reap(pid_, status);
    end(site, fmt::format("provider plugin '{}' broke its helper's protocol during '{}': it {}", name(),
                          site.primitive, what));
  }

  // Ends the helper's life with `message` as the call's error and every later call's.
  [[noreturn]] void end(const CallSite& site, const std::string& message) {
    pid_ = -1;  // reaped already
    dead_.emplace(ErrorCode::internal, fmt::format("not asked: {}", message), crash_hint(site.lease));
    throw Error(ErrorCode::internal, message, crash_hint(site.lease));
  }

  std::string name() const { return spec_.name.empty() ? library_.filename().string() : spec_.name; }

  IsolationSettings settings_;
  fs::path library_;
  std::string pin_;
  std::string config_;      // what the instance was opened with, to open it again
  std::string hello_spec_;  // the spec the first helper reported
  pid_t pid_ = -1;
  int fd_ = -1;
  channel::Reader reader_{-1};
  ProviderSpec spec_;
  std::set<Primitive> primitives_;
  std::optional<Error> dead_;
  std::uint32_t input_wanted_ = 0;  // the most bytes of input the helper asked for; 0 = none asked
  std::vector<char> input_;
};

}  // namespace

std::unique_ptr<PluginInstance> isolated_instance(const fs::path& library, const std::string& pin,
                                                  const IsolationSettings& settings, HelperHello& hello) {
  auto instance = std::make_unique<Isolated>(settings, library);
  instance->start(pin, hello);
  return instance;
}

}  // namespace corral
