#include "plugin_host/plugin_probe.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>

#include "plugin_host/child_wait.hpp"
#include "corral/json.hpp"
#include "corral/os/fd_write.hpp"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace corral {
namespace {

constexpr std::chrono::milliseconds kDefaultDeadline{10'000};

ProbeResult failed(LoadFailure cause, std::string message) {
  ProbeResult r;
  r.error = LoadError{cause, std::move(message)};
  return r;
}

// The child: load the plugin, report, and leave without running corral's exit handlers.
[[noreturn]] void run_child(const fs::path& library, int report_fd, pid_t parent) {
  // Its own process group, so the kill at the deadline also reaches whatever the plugin
  // started; and it dies with corral rather than outliving an interrupted command.
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(2);
  // A plugin that crashes on load would otherwise drop a core file on every probe.
  struct rlimit no_core {0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  // A crash must end this child with its signal, which the parent names. A handler
  // inherited from corral's process would hide it: a sanitizer runtime's exits with
  // status 1, after a report that may take longer than the deadline to symbolize.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS, SIGTRAP}) ::signal(sig, SIG_DFL);
  // What a plugin prints while loading must not mix into corral's output (--json).
  int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0)
    for (int fd : {0, 1, 2}) ::dup2(null, fd);
  std::string text;
  try {
    text = load_report(load_plugin(library, LoadOptions{"", true}));
  } catch (...) {
    ::_exit(3);
  }
  os::write_all(report_fd, text);
  ::_exit(0);
}

}  // namespace

std::string load_report(const LoadResult& loaded) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  w.Key("ok");
  w.Bool(loaded.plugin != nullptr);
  if (loaded.plugin) {
    json::write_string(w, "spec", loaded.plugin->table().spec_json);
    json::write_string(w, "version", loaded.plugin->version());
    w.Key("abi");
    w.Uint(loaded.plugin->table().abi_version);
  } else {
    json::write_string(w, "cause", to_string(loaded.error->cause));
    json::write_string(w, "message", loaded.error->message);
  }
  w.EndObject();
  return {buffer.GetString(), buffer.GetSize()};
}

std::optional<ProbeResult> read_load_report(std::string_view text) {
  try {
    json::Document doc = json::parse(text, "probe report");
    if (!doc.IsObject()) return std::nullopt;
    ProbeResult r;
    if (json::get_bool(doc, "ok")) {
      r.spec_json = json::get_string(doc, "spec");
      r.plugin_version = json::get_string(doc, "version");
      r.abi_version = static_cast<std::uint32_t>(json::get_int(doc, "abi"));
      return r;
    }
    auto cause = parse_load_failure(json::get_string(doc, "cause"));
    if (!cause) return std::nullopt;
    r.error = LoadError{*cause, json::get_string(doc, "message")};
    return r;
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::chrono::milliseconds probe_deadline() {
  const char* text = std::getenv("CORRAL_PLUGIN_PROBE_TIMEOUT");
  if (!text || !*text) return kDefaultDeadline;
  char* end = nullptr;
  double seconds = std::strtod(text, &end);
  if (*end != '\0' || !(seconds > 0) || seconds > 3600) return kDefaultDeadline;
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}

ProbeResult probe_plugin(const fs::path& library, std::chrono::milliseconds deadline) {
  const std::string file = library.string();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return failed(LoadFailure::load_failed, fmt::format("plugin {}: cannot probe it: pipe: {}", file, strerror(errno)));
  // The child inherits unwritten stdio buffers; a plugin that calls exit() would flush
  // them a second time.
  std::fflush(nullptr);
  // fork without exec is sound here: corral reads its registry before it starts any
  // thread, so no lock is held by a thread the child lacks.
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return failed(LoadFailure::load_failed, fmt::format("plugin {}: cannot probe it: fork: {}", file, strerror(err)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    run_child(library, fds[1], parent);
  }
  ::close(fds[1]);
  ::setpgid(pid, pid);  // also here, so the kill below reaches the group however early

  const Clock::time_point until = Clock::now() + deadline;
  std::string text;
  int status = 0;
  bool reaped = false, eof = false;
  while (!eof) {
    if (!reaped) reaped = ::waitpid(pid, &status, WNOHANG) == pid;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    // Once the child is gone only what is already in the pipe counts: something the
    // plugin started may hold the pipe open for ever.
    int wait_ms = reaped ? 0 : static_cast<int>(std::clamp<long long>(left, 0, 50));
    pollfd p{fds[0], POLLIN, 0};
    int n = ::poll(&p, 1, wait_ms);
    if (n > 0) {
      char buf[8192];
      ssize_t got = ::read(fds[0], buf, sizeof buf);
      if (got > 0) text.append(buf, static_cast<size_t>(got));
      else if (got == 0 || errno != EINTR) eof = true;
      continue;
    }
    if (n < 0 && errno != EINTR) break;
    if (reaped || left <= 0) break;
  }
  ::close(fds[0]);
  if (!reaped) reaped = reap_until(pid, until, status);
  const bool killed = !reaped;
  if (killed) kill_and_reap(pid, status);
  ::kill(-pid, SIGKILL);  // anything the plugin started outlives nothing

  if (killed)
    return failed(LoadFailure::hung,
                  fmt::format("plugin {}: still loading after {:g} s, so it was stopped (its constructor or entry "
                              "point hangs)",
                              file, static_cast<double>(deadline.count()) / 1000));
  if (WIFSIGNALED(status))
    return failed(LoadFailure::crashed,
                  fmt::format("plugin {}: crashed while loading ({})", file, signal_name(WTERMSIG(status))));
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
    return failed(LoadFailure::crashed,
                  fmt::format("plugin {}: ended the process with status {} while loading", file, WEXITSTATUS(status)));
  if (auto result = read_load_report(text)) return *result;
  return failed(LoadFailure::crashed,
                fmt::format("plugin {}: ended the process while loading, before it could be inspected", file));
}

}  // namespace corral
