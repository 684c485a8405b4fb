#include "workspace.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "corral/sdk/fd_write.hpp"
#include "corral/sdk/process.hpp"
#include "corral/sdk/read_file.hpp"
#include "corral/types.hpp"
#include "downloads.hpp"
#include "hash.hpp"
#include "ignore.hpp"

namespace fs = std::filesystem;

namespace corral {
namespace {

using CancelFn = std::function<bool()>;
using WarnFn = std::function<void(const std::string&)>;

// How often packing asks whether the user pressed Ctrl-C: often enough to stop within a
// blink, rarely enough that the check costs nothing. The scan asks at every file: with
// thousands of ignore patterns one file can take milliseconds.
constexpr std::size_t kPollFiles = 256;
// An ignore file is patterns, not data: a bound that no real one reaches (and /dev/zero does).
constexpr std::uint64_t kMaxIgnoreBytes = 8 << 20;
constexpr std::size_t kPollBuffers = 16;  // 16 × 64 KiB = 1 MiB of file data

// A workspace file that cannot be read: the user's to fix (permissions, or leave it
// out), unless the reason is something else entirely.
Error unreadable_file(const fs::path& file, int err) {
  const std::string message = fmt::format("cannot read {}: {}", file.string(), std::strerror(err));
  if (err != EACCES && err != EPERM) return Error(ErrorCode::internal, message);
  return Error(ErrorCode::invalid_argument, message,
               fmt::format("make it readable (chmod u+r '{}'), or list it in .corralignore to leave it out",
                           file.filename().string()));
}

// Throws cancelled when `cancelled` says the user asked to stop; `doing` names the phase.
void stop_if_cancelled(const CancelFn& cancelled, std::string_view doing) {
  if (cancelled && cancelled()) throw Error(ErrorCode::cancelled, fmt::format("interrupted while {}", doing));
}

// Runs git to completion and captures its output; on cancel git is stopped (its process
// group gets SIGTERM) and this throws cancelled, so a huge `ls-files` cannot hold Ctrl-C.
sdk::CapturedProcess run_git(const sdk::ProcessSpec& spec, long timeout_seconds, const CancelFn& cancelled) {
  sdk::CapturedProcess captured;
  sdk::ProcessOutcome o = sdk::run_process(
      spec, [&](std::string_view d) { captured.out.append(d); },
      [&](std::string_view d) { captured.err.append(d); }, cancelled, timeout_seconds, 1);
  if (o.cancelled) throw Error(ErrorCode::cancelled, "interrupted while asking git for the workspace's files");
  captured.exit_code = o.exit_code;
  captured.timed_out = o.timed_out;
  return captured;
}

// The git top level containing `cwd`, or empty when it is not in a checkout (or git is absent).
fs::path git_toplevel(const fs::path& cwd, const CancelFn& cancelled = {}) {
  if (sdk::find_program("git").empty()) return {};
  sdk::ProcessSpec spec{{"git", "rev-parse", "--show-toplevel"}, std::nullopt, cwd.string()};
  spec.inherit = {"*"};  // git reads the user's own config, as when they run it
  sdk::CapturedProcess p = run_git(spec, 30, cancelled);
  if (p.exit_code != 0) return {};
  std::string out = p.out;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// What to tell the user of a folder the scan could not enter (`dir` relative to the root).
std::string skipped_folder(std::string_view dir) {
  return fmt::format("left out folder {}: corral cannot read it (permission denied); make it readable to send it, "
                     "or list it in .corralignore to leave it out quietly",
                     dir);
}

// The folders git said it could not open, from its warnings on stderr.
std::vector<std::string> unopened_folders(std::string_view git_stderr) {
  static constexpr std::string_view kWarning = "could not open directory '";
  std::vector<std::string> out;
  for (size_t at = git_stderr.find(kWarning); at != std::string_view::npos; at = git_stderr.find(kWarning, at)) {
    at += kWarning.size();
    size_t end = git_stderr.find("': ", at);
    if (end == std::string_view::npos) break;
    std::string dir(git_stderr.substr(at, end - at));
    while (!dir.empty() && dir.back() == '/') dir.pop_back();
    out.push_back(std::move(dir));
  }
  return out;
}

// The tracked and untracked, not git-ignored files of the checkout at `root`, sorted;
// folders git could not enter are passed to `warn`.
std::vector<std::string> git_files(const fs::path& root, const CancelFn& cancelled, const WarnFn& warn) {
  sdk::ProcessSpec spec{{"git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"}, std::nullopt,
                        root.string()};
  spec.inherit = {"*"};
  sdk::CapturedProcess p = run_git(spec, 120, cancelled);
  if (p.exit_code != 0)
    throw Error(ErrorCode::internal, fmt::format("git ls-files failed in {}: {}", root.string(), p.err));
  if (warn)
    for (const std::string& dir : unopened_folders(p.err)) warn(skipped_folder(dir));
  std::vector<std::string> files;
  std::string_view rest = p.out;
  while (!rest.empty()) {
    size_t nul = rest.find('\0');
    files.emplace_back(rest.substr(0, nul));
    if (nul == std::string_view::npos) break;
    rest.remove_prefix(nul + 1);
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

// Every file below `root` outside .git and ignored folders, sorted; folders it cannot
// enter are passed to `warn`.
std::vector<std::string> walk_files(const fs::path& root, const IgnoreRules& rules, const CancelFn& cancelled,
                                    const WarnFn& warn) {
  std::vector<std::string> files;
  std::error_code ec;
  auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
  if (ec) throw Error(ErrorCode::internal, fmt::format("cannot read {}: {}", root.string(), ec.message()));
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) throw Error(ErrorCode::internal, fmt::format("cannot read {}: {}", root.string(), ec.message()));
    stop_if_cancelled(cancelled, "scanning the workspace");
    std::string rel = it->path().lexically_relative(root).generic_string();
    bool dir = it->is_directory(ec) && !it->is_symlink(ec);
    if (dir) {
      if (it->path().filename() == ".git" || rules.ignored(rel, true)) {
        it.disable_recursion_pending();
      } else if (::access(it->path().c_str(), R_OK | X_OK) != 0) {
        it.disable_recursion_pending();
        if (warn) warn(skipped_folder(rel));
      }
      continue;
    }
    files.push_back(rel);
  }
  std::sort(files.begin(), files.end());
  return files;
}

// git's answer in find_workspace_root, kept for the scan_workspace of the same folder
// that follows it in one corral command (the settings need the root first, the run then
// scans it), so a run asks git once. Taken by the first scan, whatever its folder: any
// other scan asks git itself.
struct ToplevelMemo {
  std::mutex mutex;
  std::optional<std::pair<fs::path, fs::path>> start_and_top;
};
ToplevelMemo& toplevel_memo() {
  static ToplevelMemo memo;
  return memo;
}

}  // namespace

fs::path find_workspace_root(const fs::path& cwd) {
  fs::path start = fs::weakly_canonical(cwd);
  fs::path top = git_toplevel(start);
  {
    ToplevelMemo& memo = toplevel_memo();
    std::lock_guard lock(memo.mutex);
    memo.start_and_top.emplace(start, top);
  }
  return top.empty() ? start : fs::weakly_canonical(top);
}

Workspace scan_workspace(const fs::path& cwd, const CancelFn& cancelled, const WarnFn& warn) {
  Workspace ws;
  fs::path start = fs::weakly_canonical(cwd);
  std::optional<fs::path> known;
  {
    ToplevelMemo& memo = toplevel_memo();
    std::lock_guard lock(memo.mutex);
    if (memo.start_and_top && memo.start_and_top->first == start) known = memo.start_and_top->second;
    memo.start_and_top.reset();
  }
  fs::path top = known ? *known : git_toplevel(start, cancelled);
  ws.git = !top.empty();
  ws.root = ws.git ? fs::weakly_canonical(top) : start;
  std::string sub = start.lexically_relative(ws.root).generic_string();
  ws.subdir = (sub == "." || sub.empty()) ? "" : sub;

  IgnoreRules rules;
  const fs::path ignore_file = ws.root / ".corralignore";
  if (auto text = sdk::read_regular_file(ignore_file, kMaxIgnoreBytes, "the ignore file"))
    rules = IgnoreRules::parse(*text, ignore_file.string(), cancelled);
  std::vector<std::string> names =
      ws.git ? git_files(ws.root, cancelled, warn) : walk_files(ws.root, rules, cancelled, warn);

  Sha256 fingerprint;
  for (const std::string& name : names) {
    stop_if_cancelled(cancelled, "scanning the workspace");
    if (name.empty() || rules.ignored(name)) continue;
    if (name == ".git" || name.rfind(".git/", 0) == 0) continue;
    if (name.size() > kDownloadsFolder.size() && name.compare(0, kDownloadsFolder.size(), kDownloadsFolder) == 0 &&
        name[kDownloadsFolder.size()] == '/')
      continue;  // results brought back by --download
    struct stat st {};
    if (::lstat((ws.root / name).c_str(), &st) != 0) continue;  // tracked but deleted
    WorkspaceFile f;
    f.path = name;
    f.symlink = S_ISLNK(st.st_mode);
    if (!f.symlink && !S_ISREG(st.st_mode)) continue;  // sockets, fifos, submodule folders
    f.executable = (st.st_mode & S_IXUSR) != 0;
    f.size = f.symlink ? 0 : static_cast<std::uint64_t>(st.st_size);
    f.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    fingerprint.update(fmt::format("{}\x1f{}{}\x1f{}\x1f{}\n", f.path, f.symlink ? 'l' : 'f', f.executable ? 'x' : '-',
                                   f.size, f.mtime_ns));
    ws.total_bytes += f.size;
    ws.files.push_back(std::move(f));
  }
  ws.fingerprint = fingerprint.hex();
  return ws;
}

void check_workspace_size(const Workspace& ws, std::uint64_t limit) {
  if (limit == 0 || ws.total_bytes <= limit) return;
  std::vector<const WorkspaceFile*> biggest;
  for (const auto& f : ws.files) biggest.push_back(&f);
  std::partial_sort(biggest.begin(), biggest.begin() + std::min<size_t>(3, biggest.size()), biggest.end(),
                    [](auto* a, auto* b) { return a->size > b->size; });
  std::string top;
  for (size_t i = 0; i < std::min<size_t>(3, biggest.size()); ++i)
    top += fmt::format("{}{} ({})", i ? ", " : "", biggest[i]->path, format_size(biggest[i]->size));
  throw Error(ErrorCode::invalid_argument,
              fmt::format("the workspace {} is {} in {} files, above the {} limit; largest: {}", ws.root.string(),
                          format_size(ws.total_bytes), ws.files.size(), format_size(limit), top),
              "exclude files with .corralignore, or raise the limit with --max-workspace SIZE (0 = no limit)");
}

namespace {

// gzip at its fastest level: the archive is packed for every sync and crosses a network
// or a local copy once, so packing time matters more than the last few percent of size.
constexpr const char* kGzipLevel = "1";
// A workspace at least this large is compressed on several threads, in members of
// kMemberBytes of tar each (gzip -d and tar -xzf read concatenated members as one stream).
constexpr std::uint64_t kParallelFrom = 4u << 20;
constexpr std::size_t kMemberBytes = 1u << 20;

using ArchivePtr = std::unique_ptr<archive, decltype(&archive_write_free)>;

// `in` as one complete gzip member (libarchive's raw format through its gzip filter).
std::string gzip_member(const std::string& in) {
  std::string out;
  out.reserve(in.size() / 2 + 1024);
  ArchivePtr a(archive_write_new(), archive_write_free);
  auto fail = [&](const char* what) {
    const char* why = archive_error_string(a.get());
    return std::runtime_error(fmt::format("gzip {}: {}", what, why ? why : "unknown error"));
  };
  if (archive_write_set_format_raw(a.get()) != ARCHIVE_OK || archive_write_add_filter_gzip(a.get()) != ARCHIVE_OK ||
      archive_write_set_filter_option(a.get(), "gzip", "compression-level", kGzipLevel) < ARCHIVE_WARN ||
      archive_write_set_bytes_per_block(a.get(), 0) != ARCHIVE_OK)  // no padding after the member
    throw fail("setup");
  auto append = [](archive*, void* to, const void* data, size_t size) -> la_ssize_t {
    static_cast<std::string*>(to)->append(static_cast<const char*>(data), size);
    return static_cast<la_ssize_t>(size);
  };
  if (archive_write_open2(a.get(), &out, nullptr, append, nullptr, nullptr) != ARCHIVE_OK) throw fail("open");
  std::unique_ptr<archive_entry, decltype(&archive_entry_free)> entry(archive_entry_new(), archive_entry_free);
  archive_entry_set_pathname(entry.get(), "tar");
  archive_entry_set_filetype(entry.get(), AE_IFREG);
  archive_entry_set_size(entry.get(), static_cast<la_int64_t>(in.size()));
  if (archive_write_header(a.get(), entry.get()) < ARCHIVE_WARN) throw fail("header");
  for (std::size_t done = 0; done < in.size();) {
    la_ssize_t n = archive_write_data(a.get(), in.data() + done, in.size() - done);
    if (n <= 0) throw fail("write");
    done += static_cast<std::size_t>(n);
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) throw fail("close");
  return out;
}

// Takes the tar stream in order, compresses it on `workers` threads in members of
// kMemberBytes, and writes the members to `fd` in order, holding a few in flight.
// Destroying it before finish() (an error, a cancel) stops and joins the workers.
class ParallelGzip {
 public:
  ParallelGzip(int fd, unsigned workers) : fd_(fd), max_in_flight_(2 * workers + 1) {
    try {
      for (unsigned i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
    } catch (const std::system_error&) {
      // Out of threads: the ones started do the work, or with none submit() does it.
    }
  }
  ~ParallelGzip() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    work_cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  ParallelGzip(const ParallelGzip&) = delete;
  ParallelGzip& operator=(const ParallelGzip&) = delete;

  void write(const char* data, std::size_t size) {
    while (size > 0) {
      const std::size_t n = std::min(size, kMemberBytes - pending_.size());
      pending_.append(data, n);
      data += n;
      size -= n;
      if (pending_.size() == kMemberBytes) submit();
    }
  }
  // Compresses what is left and writes every member; throws std::runtime_error, or
  // std::system_error when writing the file fails.
  void finish() {
    if (!pending_.empty()) submit();
    while (write_next(true)) {
    }
  }

 private:
  struct Job {
    std::string data;  // tar in, gzip member out
    bool done = false;
    std::string error;
  };

  void submit() {
    auto job = std::make_shared<Job>();
    job->data.swap(pending_);
    pending_.reserve(kMemberBytes);
    if (threads_.empty()) {
      job->data = gzip_member(job->data);
      job->done = true;
    }
    {
      std::lock_guard lock(mutex_);
      if (!job->done) queue_.push_back(job);
      in_flight_.push_back(job);
    }
    work_cv_.notify_one();
    while (write_next(false)) {  // what is ready already
    }
    std::size_t flying;
    {
      std::lock_guard lock(mutex_);
      flying = in_flight_.size();
    }
    if (flying >= max_in_flight_) write_next(true);  // bounded memory: wait for the oldest
  }

  // Writes the oldest member when it is done (or, with `wait`, once it is); false when
  // there is none to write.
  bool write_next(bool wait) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(mutex_);
      if (in_flight_.empty()) return false;
      if (wait) done_cv_.wait(lock, [&] { return in_flight_.front()->done; });
      if (!in_flight_.front()->done) return false;
      job = in_flight_.front();
      in_flight_.pop_front();
    }
    if (!job->error.empty()) throw std::runtime_error(job->error);
    for (std::size_t done = 0; done < job->data.size();) {
      ssize_t n = ::write(fd_, job->data.data() + done, job->data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw std::system_error(n < 0 ? errno : EIO, std::generic_category());
      done += static_cast<std::size_t>(n);
    }
    return true;
  }

  void work() {
    for (;;) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock lock(mutex_);
        work_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (stop_) return;
        job = queue_.front();
        queue_.pop_front();
      }
      std::string error;
      try {
        job->data = gzip_member(job->data);
      } catch (const std::exception& e) {
        error = e.what();
      }
      {
        std::lock_guard lock(mutex_);
        job->error = std::move(error);
        job->done = true;
      }
      done_cv_.notify_all();
    }
  }

  const int fd_;
  const std::size_t max_in_flight_;
  std::string pending_;
  std::mutex mutex_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<std::shared_ptr<Job>> queue_;      // waiting for a worker
  std::deque<std::shared_ptr<Job>> in_flight_;  // submitted, not yet written, oldest first
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

// How many threads compress `ws`: one (the single-stream path) for a small workspace or
// a one-core machine, else one per core up to four.
unsigned compression_threads(const Workspace& ws) {
  if (ws.total_bytes < kParallelFrom) return 1;
  return std::min(4u, std::max(1u, std::thread::hardware_concurrency()));
}

// Where the parallel path's tar stream goes, for libarchive's write callback.
struct GzipSink {
  std::optional<ParallelGzip> gzip;
  std::string error;  // what the writer threw inside the callback
  int err = 0;        // its errno, when writing the file failed
};

// write_archive without the clean-up of a cancelled archive.
std::uint64_t write_archive_file(const Workspace& ws, const fs::path& archive_path, const CancelFn& cancelled) {
  const unsigned threads = compression_threads(ws);
  // Declared before the archive, so they outlive it: freeing an archive that was not
  // closed (a cancel, an error) flushes it through the callback into the sink and fd.
  int out_fd = -1;
  std::unique_ptr<int, void (*)(int*)> out_closer(&out_fd, [](int* fd) {
    if (*fd >= 0) ::close(*fd);
  });
  GzipSink sink;
  ArchivePtr a(archive_write_new(), archive_write_free);
  archive_write_set_format_pax_restricted(a.get());
  auto check = [&](int rc, const char* what) {
    if (rc >= ARCHIVE_WARN) return;
    const int err = sink.gzip ? sink.err : archive_errno(a.get());
    const char* why = !sink.error.empty() ? sink.error.c_str() : archive_error_string(a.get());
    // A full disk is the user's to fix (quota), not a bug in corral.
    throw Error(sdk::write_error_code(err),
                sdk::with_reason(fmt::format("cannot write workspace archive {} ({}): {}", archive_path.string(), what,
                                             why ? why : "unknown error"),
                                 err),
                "check that the state directory is writable and the disk is not full");
  };
  if (threads <= 1) {
    archive_write_add_filter_gzip(a.get());
    archive_write_set_filter_option(a.get(), "gzip", "compression-level", kGzipLevel);
    check(archive_write_open_filename(a.get(), archive_path.c_str()), "open");
  } else {
    out_fd = ::open(archive_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out_fd < 0)
      throw Error(sdk::write_error_code(errno),
                  fmt::format("cannot write workspace archive {}: {}", archive_path.string(), std::strerror(errno)));
    sink.gzip.emplace(out_fd, threads);
    auto to_gzip = [](archive*, void* to, const void* data, size_t size) -> la_ssize_t {
      GzipSink* s = static_cast<GzipSink*>(to);
      try {
        s->gzip->write(static_cast<const char*>(data), size);
        return static_cast<la_ssize_t>(size);
      } catch (const std::system_error& e) {
        s->error = e.what();
        s->err = e.code().value();
        return -1;
      } catch (const std::exception& e) {
        s->error = e.what();
        return -1;
      }
    };
    check(archive_write_open2(a.get(), &sink, nullptr, to_gzip, nullptr, nullptr), "open");
  }
  std::unique_ptr<archive_entry, decltype(&archive_entry_free)> entry(archive_entry_new(), archive_entry_free);
  std::vector<char> buffer(1 << 16);
  std::size_t files_done = 0, buffers_done = 0;
  for (const WorkspaceFile& f : ws.files) {
    if (++files_done % kPollFiles == 0) stop_if_cancelled(cancelled, "packing the workspace");
    archive_entry_clear(entry.get());
    archive_entry_set_pathname(entry.get(), f.path.c_str());
    archive_entry_set_mtime(entry.get(), f.mtime_ns / 1'000'000'000, f.mtime_ns % 1'000'000'000);
    const fs::path full = ws.root / f.path;
    if (f.symlink) {
      std::error_code ec;
      fs::path target = fs::read_symlink(full, ec);
      archive_entry_set_filetype(entry.get(), AE_IFLNK);
      archive_entry_set_perm(entry.get(), 0777);
      archive_entry_set_symlink(entry.get(), target.c_str());
      check(archive_write_header(a.get(), entry.get()), f.path.c_str());
      continue;
    }
    const int fd = ::open(full.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw unreadable_file(full, errno);
    // Closes fd on every way out, a cancel or a failed write included.
    std::unique_ptr<const int, void (*)(const int*)> closer(&fd, [](const int* d) { ::close(*d); });
    struct stat st {};
    ::fstat(fd, &st);  // the size at open time; the file may have changed since the scan
    archive_entry_set_filetype(entry.get(), AE_IFREG);
    archive_entry_set_perm(entry.get(), f.executable ? 0755 : 0644);
    archive_entry_set_size(entry.get(), st.st_size);
    check(archive_write_header(a.get(), entry.get()), f.path.c_str());
    std::int64_t left = st.st_size;
    while (left > 0) {
      if (++buffers_done % kPollBuffers == 0) stop_if_cancelled(cancelled, "packing the workspace");
      ssize_t n = ::read(fd, buffer.data(), std::min<std::int64_t>(left, static_cast<std::int64_t>(buffer.size())));
      if (n <= 0) break;
      if (archive_write_data(a.get(), buffer.data(), static_cast<size_t>(n)) < 0) check(ARCHIVE_FATAL, f.path.c_str());
      left -= n;
    }
    if (left > 0) {  // the file shrank while we read it: pad, the header promised its size
      std::fill(buffer.begin(), buffer.end(), 0);
      while (left > 0) {
        size_t n = static_cast<size_t>(std::min<std::int64_t>(left, static_cast<std::int64_t>(buffer.size())));
        archive_write_data(a.get(), buffer.data(), n);
        left -= static_cast<std::int64_t>(n);
      }
    }
  }
  check(archive_write_close(a.get()), "close");
  if (sink.gzip) {
    try {
      sink.gzip->finish();
    } catch (const std::system_error& e) {
      sink.error = e.what();
      sink.err = e.code().value();
      check(ARCHIVE_FATAL, "compress");
    } catch (const std::exception& e) {
      sink.error = e.what();
      check(ARCHIVE_FATAL, "compress");
    }
  }
  std::error_code ec;
  return fs::file_size(archive_path, ec);
}

}  // namespace

std::uint64_t write_archive(const Workspace& ws, const fs::path& archive_path, const CancelFn& cancelled) {
  try {
    return write_archive_file(ws, archive_path, cancelled);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::cancelled) throw;
    std::error_code ignored;
    fs::remove(archive_path, ignored);  // half an archive is of no use to anyone
    throw;
  }
}

std::uint64_t parse_size(const std::string& text) {
  auto bad = [&] {
    return Error(ErrorCode::invalid_argument, fmt::format("invalid size '{}'", text), "use bytes or 500k, 200M, 2G");
  };
  std::size_t used = 0;
  std::uint64_t n = 0;
  bool overflow = false;
  for (; used < text.size() && std::isdigit(static_cast<unsigned char>(text[used])); ++used) {
    const unsigned digit = static_cast<unsigned>(text[used] - '0');
    if (n > (UINT64_MAX - digit) / 10) overflow = true;  // keep scanning: the unit names the maximum
    n = n * 10 + digit;
  }
  if (used == 0) throw bad();
  std::string unit = text.substr(used);
  const std::string shown_unit = unit;
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
  unsigned shift = 0;
  if (!unit.empty()) {
    if (unit.size() != 1 && !(unit.size() == 2 && unit[1] == 'i')) throw bad();
    switch (std::tolower(static_cast<unsigned char>(unit[0]))) {
      case 'k': shift = 10; break;
      case 'm': shift = 20; break;
      case 'g': shift = 30; break;
      default: throw bad();
    }
    if (unit.size() == 2 && !std::isupper(static_cast<unsigned char>(unit[0]))) throw bad();  // "Ki", not "ki"
  }
  const std::uint64_t max = UINT64_MAX >> shift;
  if (overflow || n > max)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("size '{}' is too large: the maximum is {}{} (2^64-1 bytes)", text, max, shown_unit),
                "use 0 for no limit");
  return n << shift;
}

std::string format_size(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < (1u << 20)) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  if (bytes < (1u << 30)) return fmt::format("{:.1f} MiB", bytes / 1048576.0);
  return fmt::format("{:.2f} GiB", bytes / 1073741824.0);
}

}  // namespace corral
