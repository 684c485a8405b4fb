#include "plugin_host/crash_guard.hpp"

#include <dlfcn.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <algorithm>
#include <exception>
#include <mutex>

namespace corral {
namespace {

constexpr int kFatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS, SIGTRAP};

// Prepared before the plugin runs: a signal handler may not allocate or format.
struct Message {
  char prefix[1024];
  char suffix[1024];
};
// A fan-out's shards call plugins from several threads at once: a crash signal is handled
// on the thread that crashed, which names its own call. A crash on a thread the plugin
// started itself (an exception escaping it) names the call armed last.
thread_local Message t_message;
thread_local bool t_armed = false;
Message g_message;
std::mutex g_message_mutex;  // writers only: a signal handler cannot lock
std::atomic<int> g_active{0};
std::atomic<bool> g_reported{false};
std::terminate_handler g_previous_terminate = nullptr;
// The shared libstdc++ the plugins load (one per process, whatever their number), when
// corral's own runtime is another: its std::set_terminate, and the handler it had.
using SetTerminate = std::terminate_handler (*)(std::terminate_handler) noexcept;
std::atomic<SetTerminate> g_plugin_set_terminate{nullptr};
std::terminate_handler g_plugin_previous_terminate = nullptr;

void put(const char* text) { (void)!::write(2, text, ::strlen(text)); }

// Writes the line once (a terminate's abort() must not print it a second time).
void report(const char* cause) {
  const Message* m = t_armed ? &t_message : g_active.load() > 0 ? &g_message : nullptr;
  if (!m || g_reported.exchange(true)) return;
  put(m->prefix);
  put(cause);
  put(m->suffix);
}

const char* name_of(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGSYS: return "SIGSYS";
    case SIGTRAP: return "SIGTRAP";
  }
  return "a fatal signal";
}

void on_fatal_signal(int sig) {
  report(name_of(sig));
  // SA_RESETHAND restored the default action; the re-raised signal is delivered when this
  // handler returns (or the faulting instruction runs again), ending the process with it.
  ::raise(sig);
}

void on_terminate() {
  report("an exception escaped it");
  if (g_previous_terminate) g_previous_terminate();
  ::abort();
}

// The same for the plugins' runtime; its own handler prints the exception's what().
void on_plugin_terminate() {
  report("an exception escaped it");
  if (g_plugin_previous_terminate) g_plugin_previous_terminate();
  ::abort();
}

void install_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    for (int sig : kFatal) ::sigaction(sig, &sa, nullptr);
    g_previous_terminate = std::set_terminate(on_terminate);
  });
}

void copy(char (&to)[1024], const std::string& from) {
  size_t n = std::min(from.size(), sizeof to - 1);
  ::memcpy(to, from.data(), n);
  to[n] = '\0';
}

}  // namespace

void CrashGuard::watch_terminate_of(void* handle) {
  // Searched in the library and what it loaded: the shared runtime's, if it uses that one.
  // Not found when the library carries a runtime of its own, hidden (the local plugin):
  // an exception escaping that one ends in abort(), reported as SIGABRT.
  const auto set = reinterpret_cast<SetTerminate>(::dlsym(handle, "_ZSt13set_terminatePFvvE"));
  if (!set || set == static_cast<SetTerminate>(&std::set_terminate)) return;
  install_once();
  SetTerminate none = nullptr;
  if (!g_plugin_set_terminate.compare_exchange_strong(none, set)) return;  // watched already
  g_plugin_previous_terminate = set(on_plugin_terminate);
}

CrashGuard::CrashGuard(const std::string& message, const std::string& hint) {
  install_once();
  size_t slot = std::min(message.find(kCause), message.size());
  copy(t_message.prefix, "\ncorral: " + message.substr(0, slot));
  copy(t_message.suffix, message.substr(std::min(slot + 1, message.size())) + "; " + hint + "\n");
  {
    std::lock_guard guard(g_message_mutex);
    g_message = t_message;
  }
  t_armed = true;
  ++g_active;
}

CrashGuard::~CrashGuard() {
  t_armed = false;
  --g_active;
}

}  // namespace corral
