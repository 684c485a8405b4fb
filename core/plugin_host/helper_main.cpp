// corral-plugin-host: runs one provider plugin for corral in its own process (a registry
// entry's `isolation: process`), so a plugin that crashes or hangs costs this helper and
// never corral. corral starts it as `corral-plugin-host LIBRARY [SHA256]` with a socket
// on fd 3 and speaks the frames of plugin_channel.hpp: it loads LIBRARY with the same
// load_plugin checks corral uses (trust, the sha256 pin, ABI, primitives), says hello,
// then serves open / call / close one at a time and turns the plugin's host callbacks
// into frames as they happen, so output streams with bounded memory.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>

#include "plugin_host/loader.hpp"
#include "plugin_host/plugin_channel.hpp"
#include "plugin_host/plugin_probe.hpp"

namespace {

namespace channel = corral::channel;

constexpr int kChannel = 3;

std::mutex g_write;                // plugin threads may call back concurrently
std::mutex g_read;                 // cancelled(), take_signal() and read_input() read while the main loop waits
std::atomic<bool> g_cancelled{false};
std::atomic<int> g_signal{0};      // a signal corral passed on, not yet taken
std::atomic<std::uint32_t> g_window{0};  // the user's terminal size corral passed on, not yet asked for
// The command's input corral sent (under g_read): bytes not yet read, whether it ended,
// and whether a want_input is out (at most one input frame is ever on its way).
std::string g_input;
bool g_input_ended = false;
bool g_input_wanted = false;

// Sends one frame; corral gone means there is nobody to work for any more.
void send(channel::Kind kind, std::string_view a = {}, std::string_view b = {}) {
  std::lock_guard lock(g_write);
  if (!channel::write_frame(kChannel, kind, a, b)) ::_exit(0);
}

// `value` as the one-byte payload prefix frames use, kept in `storage`.
std::string_view byte(int value, char& storage) {
  storage = static_cast<char>(value);
  return {&storage, 1};
}

channel::Reader g_reader(kChannel);

// The next frame from corral, waiting for it; exits when corral is gone.
channel::Frame receive() {
  for (;;) {
    if (auto f = g_reader.next()) return *f;
    if (g_reader.fill() != channel::Reader::Fill::data) ::_exit(0);
  }
}

// Takes in one frame corral sent during a call (with g_read held); a frame of another
// kind is a late one for a call that already ended.
void absorb(const channel::Frame& f) {
  switch (f.kind) {
    case channel::Kind::cancel: g_cancelled = true; break;
    case channel::Kind::signal:
      if (f.payload.size() == 1) g_signal = static_cast<unsigned char>(f.payload[0]);
      break;
    case channel::Kind::window:
      if (f.payload.size() == 4) g_window = channel::decode_u32(f.payload);
      break;
    case channel::Kind::input:
      g_input_wanted = false;
      if (f.payload.empty()) g_input_ended = true;
      else g_input.append(f.payload);
      break;
    default: break;
  }
}

// Takes in what corral sent, waiting at most `timeout_ms` for the first frame (g_read held).
void absorb_waiting(int timeout_ms) {
  // Frames read together with an earlier one wait in the reader, where poll cannot see them.
  bool any = false;
  while (auto f = g_reader.next()) {
    absorb(*f);
    any = true;
  }
  if (any) timeout_ms = 0;
  pollfd p{kChannel, POLLIN, 0};
  while (::poll(&p, 1, timeout_ms) > 0) {
    absorb(receive());
    timeout_ms = 0;
  }
}

// Takes in what corral sent, unless another thread is reading the channel already (a
// pump waiting in read_input), which takes it in for everybody: polls never wait on it.
void absorb_if_free() {
  std::unique_lock lock(g_read, std::try_to_lock);
  if (lock.owns_lock()) absorb_waiting(0);
}

// read_input: the input corral sent, asking for more when none is left.
long read_input(char* buffer, size_t capacity, int timeout_ms) {
  if (buffer == nullptr || capacity == 0) return 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
  for (;;) {
    {
      std::lock_guard lock(g_read);
      absorb_waiting(0);
      if (!g_input.empty()) {
        const size_t n = std::min(capacity, g_input.size());
        std::memcpy(buffer, g_input.data(), n);
        g_input.erase(0, n);
        return static_cast<long>(n);
      }
      if (g_input_ended) return 0;
      if (!g_input_wanted) {
        char bytes[4];
        g_input_wanted = true;
        send(channel::Kind::want_input, channel::encode_u32(static_cast<std::uint32_t>(std::min<size_t>(capacity, channel::kMaxEmit)), bytes));
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0) return -1;
      // In slices, so that cancelled() on another thread is never kept waiting long.
      absorb_waiting(static_cast<int>(std::min<long long>(left.count(), 20)));
      if (!g_input.empty() || g_input_ended) continue;
    }
    if (std::chrono::steady_clock::now() >= until) return -1;
  }
}

const corral_host_v1 kHost = {
    sizeof(corral_host_v1),
    /*result=*/[](void*, const char* json, size_t len) { send(channel::Kind::result, {json, len}); },
    /*error=*/
    [](void*, int code, const char* message, const char* hint) {
      char head[2] = {static_cast<char>(code), static_cast<char>(hint != nullptr)};
      std::string text = std::string(message ? message : "") + '\0' + (hint ? hint : "");
      send(channel::Kind::error, {head, 2}, text);
    },
    /*emit=*/
    [](void*, int stream, const char* data, size_t len) {
      char s;
      for (size_t at = 0; at < len; at += channel::kMaxEmit)
        send(channel::Kind::emit, byte(stream, s), {data + at, std::min(channel::kMaxEmit, len - at)});
    },
    /*cancelled=*/
    [](void*) -> int {
      if (g_cancelled) return 1;
      absorb_if_free();
      return g_cancelled ? 1 : 0;
    },
    /*log=*/
    [](void*, int level, const char* message) {
      char l;
      send(channel::Kind::log, byte(level, l), message ? message : "");
    },
    /*progress=*/[](void*, const char* message) { send(channel::Kind::progress, message ? message : ""); },
    /*transfer=*/
    [](void*, std::uint64_t done, std::uint64_t total) {
      send(channel::Kind::transfer, std::to_string(done) + ' ' + std::to_string(total));
    },
    /*retry_after=*/
    [](void*, std::uint32_t milliseconds) {
      char bytes[4];
      send(channel::Kind::retry_after, channel::encode_u32(milliseconds, bytes));
    },
    /*read_input=*/[](void*, char* buffer, size_t capacity, int timeout_ms) { return read_input(buffer, capacity, timeout_ms); },
    /*take_signal=*/
    [](void*) -> int {
      absorb_if_free();
      return g_signal.exchange(0);
    },
    /*window_size=*/
    [](void*, std::uint16_t* rows, std::uint16_t* cols) -> int {
      absorb_if_free();
      const std::uint32_t size = g_window.exchange(0);
      if (size == 0) return 0;
      if (rows) *rows = static_cast<std::uint16_t>(size >> 16);
      if (cols) *cols = static_cast<std::uint16_t>(size & 0xffff);
      return 1;
    },
};

void done(int rc) {
  char bytes[4];
  send(channel::Kind::done, channel::encode_u32(static_cast<std::uint32_t>(rc), bytes));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "corral-plugin-host: corral starts this helper itself (isolation: process in a registry)\n");
    return 64;
  }
  // Belt and braces with corral's PR_SET_PDEATHSIG: never outlive the corral that started us.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::signal(SIGPIPE, SIG_IGN);
  // A plugin's crash must end this helper with its signal, which corral names. In a
  // sanitized build the runtime has its own handlers, which would exit 1 instead.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS, SIGTRAP}) ::signal(sig, SIG_DFL);
  // The plugin's commands must not hold corral's socket open after this process is gone.
  ::fcntl(kChannel, F_SETFD, FD_CLOEXEC);

  corral::LoadResult loaded = corral::load_plugin(argv[1], corral::LoadOptions{argc == 3 ? argv[2] : "", true});
  std::string names;
  if (loaded.plugin)
    for (const corral::PrimitiveInfo& p : corral::kPrimitives)
      if (loaded.plugin->table().*p.slot) names += std::string(names.empty() ? "" : " ") + p.name;
  send(channel::Kind::hello, names + '\0', corral::load_report(loaded));
  if (!loaded.plugin) return 0;
  const corral_plugin_v1& table = loaded.plugin->table();

  void* instance = nullptr;
  for (;;) {
    channel::Frame f = [] {
      std::lock_guard lock(g_read);
      return receive();
    }();
    g_cancelled = false;
    g_signal = 0;
    g_input.clear();
    g_input_ended = g_input_wanted = false;
    switch (f.kind) {
      case channel::Kind::open: {
        std::string config(f.payload);
        instance = table.open(config.c_str(), &kHost, nullptr);
        done(instance ? 0 : 1);
        break;
      }
      case channel::Kind::call: {
        size_t nul = f.payload.find('\0');
        std::string name(f.payload.substr(0, nul));
        std::string request(nul == std::string_view::npos ? "{}" : f.payload.substr(nul + 1));
        std::optional<corral::Primitive> primitive = corral::primitive_named(name);
        corral_call_fn fn = primitive ? corral::primitive_entry(table, *primitive) : nullptr;
        done(fn && instance ? fn(instance, request.c_str(), &kHost, nullptr) : 1);
        g_window = 0;
        break;
      }
      case channel::Kind::close:
        if (instance) table.close(instance);
        return 0;
      case channel::Kind::window:  // sent just before the call it is for
        absorb(f);
        break;
      default:  // a late cancel, signal or input for a call that already ended
        break;
    }
  }
}
