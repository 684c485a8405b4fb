#include "workspace/archive.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

#include "corral/errors.hpp"
#include "corral/os/fd_write.hpp"
#include "workspace/parallel_gzip.hpp"

namespace fs = std::filesystem;

namespace corral {
namespace {

using CancelFn = std::function<bool()>;
using ReadFn = std::function<void(std::uint64_t)>;
using ArchivePtr = std::unique_ptr<archive, decltype(&archive_write_free)>;

// A workspace at least this large is compressed on several threads (ParallelGzip).
constexpr std::uint64_t kParallelFrom = 4u << 20;
// How often packing asks whether the user pressed Ctrl-C: often enough to stop within a
// blink, rarely enough that the check costs nothing.
constexpr std::size_t kPollFiles = 256;
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

// Throws cancelled when `cancelled` says the user asked to stop.
void stop_if_cancelled(const CancelFn& cancelled) {
  if (cancelled && cancelled()) throw Error(ErrorCode::cancelled, "interrupted while packing the workspace");
}

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
std::uint64_t write_archive_file(const Workspace& ws, const fs::path& archive_path, const CancelFn& cancelled,
                                 const ReadFn& on_read) {
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
    throw Error(os::write_error_code(err),
                os::with_reason(fmt::format("cannot write workspace archive {} ({}): {}", archive_path.string(), what,
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
      throw Error(os::write_error_code(errno),
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
  std::uint64_t read_so_far = 0;
  for (const WorkspaceFile& f : ws.files) {
    if (++files_done % kPollFiles == 0) stop_if_cancelled(cancelled);
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
      if (++buffers_done % kPollBuffers == 0) stop_if_cancelled(cancelled);
      ssize_t n = ::read(fd, buffer.data(), std::min<std::int64_t>(left, static_cast<std::int64_t>(buffer.size())));
      if (n <= 0) break;
      if (archive_write_data(a.get(), buffer.data(), static_cast<size_t>(n)) < 0) check(ARCHIVE_FATAL, f.path.c_str());
      left -= n;
      read_so_far += static_cast<std::uint64_t>(n);
      if (on_read) on_read(read_so_far);
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

std::uint64_t write_archive(const Workspace& ws, const fs::path& archive_path, const CancelFn& cancelled,
                            const ReadFn& on_read) {
  try {
    return write_archive_file(ws, archive_path, cancelled, on_read);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::cancelled) throw;
    std::error_code ignored;
    fs::remove(archive_path, ignored);  // half an archive is of no use to anyone
    throw;
  }
}

}  // namespace corral
