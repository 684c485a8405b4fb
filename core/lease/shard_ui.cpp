#include "lease/shard_ui.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "corral/errors.hpp"
#include "corral/os/fd_write.hpp"

namespace fs = std::filesystem;

namespace corral {

fs::path shard_output_file(const fs::path& dir, int index, int stream) {
  return dir / fmt::format("shard-{}.{}", index, stream == 0 ? "stdout" : "stderr");
}

ShardUi::ShardUi(ShardTerminal& terminal, int index, int count, const fs::path& output_dir)
    : terminal_(terminal), prefix_(fmt::format("[{}/{}] ", index, count)), index_(index) {
  // Made now, not on first use: a shard's pack thread asks for it beside the shard's own.
  if (PhaseTracer* user = terminal_.user.tracer()) tracer_.emplace(*user, index);
  if (output_dir.empty()) return;
  for (int stream = 0; stream < 2; ++stream) {
    const fs::path file = shard_output_file(output_dir, index, stream);
    fds_[stream] = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fds_[stream] < 0) {
      int e = errno;
      for (int& fd : fds_)
        if (fd >= 0) ::close(fd), fd = -1;
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("--shard-output: cannot write {}: {}", file.string(), std::strerror(e)),
                  "give --shard-output a folder you can write to");
    }
  }
}

ShardUi::~ShardUi() {
  for (int fd : fds_)
    if (fd >= 0) ::close(fd);
}

void ShardUi::write(int stream, std::string_view text) {
  if (fds_[stream] >= 0) {
    // A full disk must not stop the shard's command; say so once.
    if (!os::write_all(fds_[stream], text) && !file_failed_) {
      file_failed_ = true;
      warn(fmt::format("cannot write this shard's output file: {}", std::strerror(errno)));
    }
    return;
  }
  std::lock_guard guard(terminal_.mutex);
  if (stream == 0) terminal_.user.out(text);
  else terminal_.user.err(text);
}

void ShardUi::lines(int stream, std::string_view data) {
  std::string whole;  // every complete line, prefixed, written at once
  std::lock_guard guard(mutex_);
  if (fds_[stream] >= 0) {
    write(stream, data);
    return;
  }
  std::string& pending = pending_[stream];
  while (!data.empty()) {
    size_t nl = data.find('\n');
    if (nl == std::string_view::npos) {
      pending.append(data);
      if (pending.size() >= kMaxLine) {
        whole += prefix_ + pending + "\n";
        pending.clear();
      }
      break;
    }
    whole += prefix_;
    whole += pending;
    whole.append(data.substr(0, nl + 1));
    pending.clear();
    data.remove_prefix(nl + 1);
  }
  if (!whole.empty()) write(stream, whole);
}

void ShardUi::flush() {
  std::lock_guard guard(mutex_);
  for (int stream = 0; stream < 2; ++stream) {
    if (pending_[stream].empty()) continue;
    write(stream, prefix_ + pending_[stream] + "\n");
    pending_[stream].clear();
  }
}

void ShardUi::out(std::string_view data) { lines(0, data); }
void ShardUi::err(std::string_view data) { lines(1, data); }

void ShardUi::info(const std::string& message) {
  std::lock_guard guard(terminal_.mutex);
  terminal_.user.info(prefix_ + message);
}

void ShardUi::note(const std::string& message) {
  std::lock_guard guard(terminal_.mutex);
  terminal_.user.note(prefix_ + message);
}

void ShardUi::warn(const std::string& message) {
  std::lock_guard guard(terminal_.mutex);
  terminal_.user.warn(prefix_ + message);
}

void ShardUi::progress(const std::string& message) {
  if (!message.empty()) info(message);
}

void ShardUi::phase(const PhaseEvent& event) {
  PhaseEvent mine = event;
  mine.shard = index_;
  std::lock_guard guard(terminal_.mutex);
  terminal_.user.phase(mine);
}

bool ShardUi::cancelled() { return terminal_.stop.load() || terminal_.user.cancelled(); }

// The fan-out's own stop (fail-fast) gives a shard's command no grace: it counts as asked twice.
int ShardUi::stop_requests() { return terminal_.stop.load() ? 2 : terminal_.user.stop_requests(); }

int ShardUi::stop_signal() { return terminal_.user.stop_signal() ? terminal_.user.stop_signal() : cancelled() ? SIGINT : 0; }

PhaseTracer* ShardUi::tracer() { return tracer_ ? &*tracer_ : nullptr; }

}  // namespace corral
