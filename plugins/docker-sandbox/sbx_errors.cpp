#include "sbx_errors.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace corral::docker_sandbox {
namespace {

constexpr std::string_view kDiagnose = "run `sbx diagnose` to see which part of the installation fails";

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

template <size_t N>
bool mentions(const std::string& haystack, const std::array<std::string_view, N>& needles) {
  return std::any_of(needles.begin(), needles.end(),
                     [&](std::string_view n) { return haystack.find(n) != std::string::npos; });
}

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

// Calls `fn` with each non-empty line of `text`, trimmed.
template <class Fn>
void for_each_line(std::string_view text, Fn fn) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    std::string line = trim(text.substr(start, end == std::string_view::npos ? text.npos : end - start));
    if (!line.empty()) fn(line);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
}

// True for a line that reports a problem: sbx's conditions are only believed there, so
// a passing check ("✓ kvm available") or a neutral mention never counts.
bool failure_line(const std::string& line) {
  static constexpr std::array<std::string_view, 4> kPassing = {"\u2713", "\u2714", "[ok]", "ok:"};
  static constexpr std::array<std::string_view, 16> kFailing = {
      "\u2717", "\u2718", "error", "fail", "not ", "cannot", "can't", "unable", "missing",
      "denied", "unauthorized", "unavailable", "required", "please", "no such", "[x]"};
  std::string l = lower(line);
  for (std::string_view p : kPassing)
    if (l.rfind(p, 0) == 0) return false;
  return mentions(l, kFailing);
}

// `line` cut to at most 300 characters.
std::string bounded(std::string line) {
  if (line.size() > 300) line = line.substr(0, 297) + "...";
  return line;
}

}  // namespace

std::string gist(std::string_view output) {
  std::string best, last;
  for_each_line(output, [&](const std::string& line) {
    last = line;
    std::string l = lower(line);
    if (l.find("error") != std::string::npos || l.find("fail") != std::string::npos) best = line;
  });
  return bounded(best.empty() ? last : best);
}

std::optional<Error> known_condition(std::string_view output) {
  static constexpr std::array<std::string_view, 8> kAuth = {
      "not logged in", "not signed in", "sbx login", "please log in",
      "please sign in", "login required", "sign-in required", "unauthorized"};
  static constexpr std::array<std::string_view, 6> kVirt = {
      "virtualization", "hypervisor", "/dev/kvm", "kvm", "vt-x", "nested virtuali"};
  static constexpr std::array<std::string_view, 5> kDaemon = {
      "daemon is not running", "cannot connect to the sandbox daemon", "sandboxd is not running",
      "daemon not running", "daemon unresponsive"};
  // Auth outranks virtualization outranks the daemon, whichever line comes first.
  std::string auth_line, virt_line, daemon_line;
  for_each_line(output, [&](const std::string& line) {
    if (!failure_line(line)) return;
    std::string l = lower(line);
    if (auth_line.empty() && mentions(l, kAuth)) auth_line = line;
    if (virt_line.empty() && mentions(l, kVirt)) virt_line = line;
    if (daemon_line.empty() && mentions(l, kDaemon)) daemon_line = line;
  });
  auto said = [](const std::string& line) { return ": " + bounded(line); };
  if (!auth_line.empty())
    return Error(ErrorCode::auth, "sbx is not signed in to Docker" + said(auth_line),
                 "run `sbx login` to sign in, then retry");
  if (!virt_line.empty())
    return Error(ErrorCode::unavailable,
                 "Docker Sandboxes cannot start a microVM: hardware virtualization is unavailable" + said(virt_line),
                 "enable virtualization (VT-x/AMD-V) in the firmware; on Linux make /dev/kvm usable "
                 "(e.g. join the kvm group); inside a VM enable nested virtualization; `sbx diagnose` shows what is missing");
  if (!daemon_line.empty())
    return Error(ErrorCode::unavailable, "the Docker Sandboxes daemon is not reachable" + said(daemon_line),
                 std::string(kDiagnose));
  return std::nullopt;
}

Error sbx_failed(std::string_view action, int exit_code, std::string_view output) {
  if (auto known = known_condition(output)) return *known;
  std::string why = gist(output);
  return Error(ErrorCode::unavailable,
               "`sbx " + std::string(action) + "` failed (exit " + std::to_string(exit_code) + ")" +
                   (why.empty() ? std::string() : ": " + why),
               std::string(kDiagnose));
}

Error sbx_missing(const std::string& cli) {
  return Error(ErrorCode::unavailable, "cannot find the Docker Sandboxes CLI '" + cli + "'",
               "install Docker Sandboxes (https://docs.docker.com/ai/sandboxes/), or set CORRAL_SBX_CLI "
               "(or --docker-sandbox-cli) to the path of the sbx executable");
}

Error sbx_timed_out(std::string_view action, long seconds) {
  // unavailable, not timeout: that cause (exit 124) means the user's command ran too long.
  return Error(ErrorCode::unavailable,
               "`sbx " + std::string(action) + "` did not finish within " + format_duration(seconds),
               "the sandbox daemon may be stuck: " + std::string(kDiagnose) +
                   ", or allow more time with --docker-sandbox-cli-timeout");
}

}  // namespace corral::docker_sandbox
