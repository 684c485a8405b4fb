#include "state.hpp"

#include "private_network.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>

namespace corral::e2b::standin {

namespace fs = std::filesystem;

std::string rfc3339(Clock::time_point t) { return test::utc_seconds(t) + "Z"; }

std::string random_id(size_t length) { return test::random_text(length, "abcdefghijklmnopqrstuvwxyz0123456789"); }

bool FakeSandbox::internet() const {
  if (allow_internet_access && !*allow_internet_access) return false;
  bool deny_all = std::find(deny_out.begin(), deny_out.end(), "0.0.0.0/0") != deny_out.end();
  return !deny_all || test::allows_loopback(allow_out);
}

void State::hold(const std::string& route, std::unique_lock<std::mutex>& lock) {
  if (faults.hold_route != route) return;
  if (faults.hold_skip > 0) {
    --faults.hold_skip;
    return;
  }
  ++held;
  released_.wait(lock, [&] { return faults.hold_route != route; });
  --held;
}

void State::delay(const std::string& route, std::unique_lock<std::mutex>& lock) {
  if (route == "create" && create_delay_ms > 0)  // the full delay: release() does not end it
    released_.wait_for(lock, std::chrono::milliseconds(create_delay_ms), [] { return false; });
  if (faults.delay_route != route || faults.delay_ms <= 0) return;
  released_.wait_for(lock, std::chrono::milliseconds(faults.delay_ms), [&] { return faults.delay_route != route; });
}

void State::release() {
  faults.hold_route.clear();
  faults.delay_route.clear();
  released_.notify_all();
}

bool State::fails(const std::string& route) {
  Faults& f = faults;
  if (f.fail_route != route || f.fail_status <= 0) return false;
  if (f.fail_times > 0 && --f.fail_times == 0) f.fail_route.clear();
  return true;
}

bool State::vanishes(const std::string& route) {
  if (faults.vanish_route != route) return false;
  if (faults.vanish_skip > 0) {
    --faults.vanish_skip;
    return false;
  }
  faults.vanish_route.clear();
  return true;
}

FakeSandbox& State::add_sandbox(const std::string& template_id, bool secure, long timeout_seconds) {
  FakeSandbox sb;
  sb.id = "i" + random_id(19);
  sb.template_id = template_id;
  sb.access_token = secure ? "envd-" + random_id(24) : "";
  if (secure) issued_tokens.push_back(sb.access_token);
  sb.envd_version = faults.envd_version;
  sb.started_at = Clock::now();
  sb.end_at = sb.started_at + std::chrono::seconds(timeout_seconds);
  sb.root = root_ / sb.id;
  fs::create_directories(sb.root / "home" / "user");
  fs::create_directories(sb.root / "tmp");
  return sandboxes[sb.id] = std::move(sb);
}

void State::expire() {
  std::vector<std::string> gone;
  for (auto& [id, sb] : sandboxes) {
    if (sb.state == "paused" || Clock::now() < sb.end_at) continue;
    if (sb.auto_pause) pause(sb, sb.auto_pause_memory);
    else gone.push_back(id);
  }
  for (const auto& id : gone) remove(id);
}

int State::running() const {
  int n = 0;
  for (const auto& entry : sandboxes) n += entry.second.state == "running";
  return n;
}

void State::pause(FakeSandbox& sb, bool memory) {
  for (pid_t pid : sb.processes) {
    const int sig = memory ? SIGSTOP : SIGKILL;
    ::kill(-pid, sig);  // its group, when it made itself a group leader
    ::kill(pid, sig);
  }
  sb.state = "paused";
}

void State::resume(FakeSandbox& sb) {
  for (pid_t pid : sb.processes) {
    ::kill(-pid, SIGCONT);
    ::kill(pid, SIGCONT);
  }
  sb.state = "running";
}

FakeSandbox& State::fork(const FakeSandbox& source, long timeout_seconds) {
  // std::map: adding a sandbox leaves `source` where it is.
  FakeSandbox& sb = add_sandbox(source.template_id, !source.access_token.empty(), timeout_seconds);
  sb.alias = source.alias;
  sb.metadata = source.metadata;
  sb.allow_internet_access = source.allow_internet_access;
  sb.allow_out = source.allow_out;
  sb.deny_out = source.deny_out;
  sb.auto_pause = source.auto_pause;
  sb.auto_pause_memory = source.auto_pause_memory;
  try {
    fs::copy(source.root, sb.root,
             fs::copy_options::recursive | fs::copy_options::copy_symlinks | fs::copy_options::overwrite_existing);
  } catch (const fs::filesystem_error&) {
    remove(sb.id);  // no half-made fork stays behind
    throw;
  }
  return sb;
}

void State::remove(const std::string& id) {
  auto it = sandboxes.find(id);
  if (it == sandboxes.end()) return;
  for (pid_t pid : it->second.processes) {
    ::kill(-pid, SIGKILL);  // its group, when it made itself a group leader
    ::kill(pid, SIGKILL);
  }
  std::error_code ec;
  fs::remove_all(it->second.root, ec);
  sandboxes.erase(it);
}

std::optional<fs::path> State::map_path(const FakeSandbox& sb, const std::string& path, const std::string& user) {
  fs::path inside = path.empty() || path.front() != '/'
                        ? fs::path(user == "root" ? "/root" : "/home/" + user) / path
                        : fs::path(path);
  inside = inside.lexically_normal();
  std::string s = inside.string();
  if (s.rfind("/..", 0) == 0) return std::nullopt;
  return sb.root / s.substr(1);
}

}  // namespace corral::e2b::standin
