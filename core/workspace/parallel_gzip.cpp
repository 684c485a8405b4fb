#include "workspace/parallel_gzip.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <system_error>

namespace corral {
namespace {

using ArchivePtr = std::unique_ptr<archive, decltype(&archive_write_free)>;

}  // namespace

// libarchive's raw format through its gzip filter.
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

ParallelGzip::ParallelGzip(int fd, unsigned workers) : fd_(fd), max_in_flight_(2 * workers + 1) {
  try {
    for (unsigned i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
  } catch (const std::system_error&) {
    // Out of threads: the ones started do the work, or with none submit() does it.
  }
}

ParallelGzip::~ParallelGzip() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ParallelGzip::write(const char* data, std::size_t size) {
  while (size > 0) {
    const std::size_t n = std::min(size, kGzipMemberBytes - pending_.size());
    pending_.append(data, n);
    data += n;
    size -= n;
    if (pending_.size() == kGzipMemberBytes) submit();
  }
}

void ParallelGzip::finish() {
  if (!pending_.empty()) submit();
  while (write_next(true)) {
  }
}

void ParallelGzip::submit() {
  auto job = std::make_shared<Job>();
  job->data.swap(pending_);
  pending_.reserve(kGzipMemberBytes);
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

bool ParallelGzip::write_next(bool wait) {
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

void ParallelGzip::work() {
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

}  // namespace corral
