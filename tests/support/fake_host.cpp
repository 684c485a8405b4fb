#include "fake_host.hpp"

namespace corral::test {

FakeHost::FakeHost() {
  table_.struct_size = sizeof(corral_host_v1);
  table_.result = [](void*, const char*, size_t) {};
  table_.error = [](void*, int, const char*, const char*) {};
  table_.emit = [](void* call, int stream, const char* data, size_t len) {
    std::lock_guard lock(self(call).mutex_);
    (stream == CORRAL_STDOUT ? self(call).out_ : self(call).err_).append(data, len);
  };
  table_.cancelled = [](void* call) -> int {
    FakeHost& host = self(call);
    if (host.answers_left_ >= 0 && host.answers_left_-- == 0) host.cancelled_ = true;
    return host.cancelled_ ? 1 : 0;
  };
  table_.log = [](void* call, int level, const char* message) {
    std::lock_guard lock(self(call).mutex_);
    const char* tag = level == CORRAL_LOG_WARN ? "warn: " : level == CORRAL_LOG_INFO ? "info: " : "debug: ";
    self(call).logs_.push_back(tag + std::string(message));
  };
  table_.progress = [](void* call, const char* message) {
    std::lock_guard lock(self(call).mutex_);
    self(call).logs_.push_back("progress: " + std::string(message));
  };
  table_.transfer = [](void* call, std::uint64_t done, std::uint64_t total) {
    std::lock_guard lock(self(call).mutex_);
    self(call).transfers_.emplace_back(done, total);
  };
}

std::string FakeHost::out() const {
  std::lock_guard lock(mutex_);
  return out_;
}
std::string FakeHost::err() const {
  std::lock_guard lock(mutex_);
  return err_;
}
std::vector<std::string> FakeHost::logs() const {
  std::lock_guard lock(mutex_);
  return logs_;
}
std::vector<std::pair<std::uint64_t, std::uint64_t>> FakeHost::transfers() const {
  std::lock_guard lock(mutex_);
  return transfers_;
}

}  // namespace corral::test
