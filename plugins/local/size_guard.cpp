#include "size_guard.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <system_error>

#include "corral/os/process.hpp"
#include "corral/sdk/sizes.hpp"

namespace corral::local {

namespace {

// Set once `unshare --map-root-user` was seen to fail here (no unprivileged user namespaces).
std::atomic<bool> map_root_fails{false};

// The total `du -s` prints first in `out`.
std::optional<std::uint64_t> parse_du(const std::string& out) {
  std::uint64_t bytes = 0;
  size_t digits = 0;
  for (; digits < out.size() && digits < 19 && out[digits] >= '0' && out[digits] <= '9'; ++digits)
    bytes = bytes * 10 + static_cast<std::uint64_t>(out[digits] - '0');
  if (digits == 0 || digits >= out.size() || out[digits] != '\t') return std::nullopt;
  return bytes;
}

}  // namespace

std::optional<std::uint64_t> disk_usage(const std::filesystem::path& folder, const std::function<bool()>& stop) {
  // The total du prints, e.g. "4096\t/path"; a folder du cannot read counts by what it
  // could (du says so and exits 1). `failed`: it printed none and did not succeed.
  const auto du = [&](std::vector<std::string> argv, bool& failed) -> std::optional<std::uint64_t> {
    os::ProcessSpec spec;
    spec.argv = std::move(argv);
    std::string out;
    const os::ProcessOutcome o = os::run_process(
        spec, [&out](std::string_view d) { out.append(d.substr(0, 4096 - std::min<size_t>(out.size(), 4096))); },
        [](std::string_view) {}, stop);
    const std::optional<std::uint64_t> bytes = o.cancelled || o.timed_out ? std::nullopt : parse_du(out);
    failed = !bytes && !o.cancelled && !o.timed_out && o.exit_code != 0;
    return bytes;
  };
  const std::vector<std::string> plain{"du", "-s", "-x", "-B1", "--", folder.string()};
  bool failed = false;
  // Not root, the caller cannot read a folder the command made unreadable (chmod 000); as
  // root of a user namespace of its own it reads every file it owns, and so sees them all.
  if (::geteuid() != 0 && !map_root_fails.load()) {
    std::vector<std::string> mapped{"unshare", "--map-root-user", "--"};
    mapped.insert(mapped.end(), plain.begin(), plain.end());
    std::optional<std::uint64_t> bytes = du(mapped, failed);
    if (!failed) return bytes;
    // No user namespace to be had, or the folder is gone: du as the caller tells which.
    bytes = du(plain, failed);
    if (bytes) map_root_fails = true;
    return bytes;
  }
  return du(plain, failed);
}

SizeGuard::SizeGuard(std::vector<GuardedFolder> folders, std::uint64_t limit)
    : folders_(std::move(folders)), allowed_(folders_.size()), limit_(limit) {
  if (limit_ == 0 || folders_.empty()) return;
  try {
    measurer_ = os::ParallelThread([this] {
      for (bool first = true;; first = false) {
        const auto started = std::chrono::steady_clock::now();
        // The first measure is what the folders may keep holding: check_now() waits for it,
        // and only a guard given up (Ctrl-C, --timeout) cuts it short.
        if (!measure_all(first ? std::function<bool()>([this] { return abandoned_.load(); })
                               : std::function<bool()>([this] { return stopping_.load(); })))
          return;
        // Measuring a big tree costs what it takes: at most a fifth of the time, and at
        // least a second between measures.
        const auto pause = std::clamp<std::chrono::steady_clock::duration>(
            (std::chrono::steady_clock::now() - started) * 4, std::chrono::seconds(1), std::chrono::seconds(30));
        std::unique_lock lock(mutex_);
        if (wake_.wait_for(lock, pause, [this] { return stopping_.load(); })) return;
      }
    });
  } catch (const std::system_error&) {
    // No thread to be had: check_now() still measures when the command has ended.
  }
}

SizeGuard::~SizeGuard() {
  abandoned_ = true;  // after check_now() this stops nothing: the thread is gone
  stop_measuring();
}

void SizeGuard::stop_measuring() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (measurer_.joinable()) measurer_.join();
}

bool SizeGuard::measure_all(const std::function<bool()>& stop) {
  for (size_t i = 0; i < folders_.size(); ++i) {
    const std::optional<std::uint64_t> used = disk_usage(folders_[i].path, stop);
    if (stop && stop()) return false;
    if (!used) continue;  // gone, or du missing: a kept sandbox's folders are measured again later
    std::lock_guard lock(mutex_);
    if (!allowed_[i]) allowed_[i] = std::max(limit_, *used);
    if (*used <= *allowed_[i]) continue;
    what_exceeded_ = folders_[i].name + " held " + sdk::format_size(*used) + ", past " +
                     (*allowed_[i] == limit_ ? "its limit of " + sdk::format_size(limit_)
                                             : "the " + sdk::format_size(*allowed_[i]) +
                                                   " it held when the command started (its limit is " +
                                                   sdk::format_size(limit_) + ")");
    exceeded_ = true;
    return false;
  }
  return true;
}

bool SizeGuard::check_now() {
  if (limit_ == 0 || folders_.empty()) return false;
  stop_measuring();
  if (exceeded_) return true;
  {
    // Never measured while the command ran (no thread): it may hold its limit.
    std::lock_guard lock(mutex_);
    for (std::optional<std::uint64_t>& allowed : allowed_)
      if (!allowed) allowed = limit_;
  }
  (void)measure_all({});
  return exceeded_;
}

std::string SizeGuard::what_exceeded() const {
  std::lock_guard lock(mutex_);
  return what_exceeded_;
}

}  // namespace corral::local
