#include "standin_state.hpp"

#include <stdlib.h>

#include <ctime>
#include <random>
#include <stdexcept>

namespace corral::test {

std::filesystem::path make_standin_folder(const std::string& prefix) {
  std::string base = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (!mkdtemp(base.data())) throw std::runtime_error("mkdtemp failed");
  return base;
}

std::string utc_seconds(std::chrono::system_clock::time_point t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

std::string random_text(std::size_t length, std::string_view alphabet) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string out;
  for (std::size_t i = 0; i < length; ++i) out += alphabet[rng() % alphabet.size()];
  return out;
}

void Workers::start(std::function<void()> work) {
  std::lock_guard lock(mutex_);
  threads_.emplace_back(std::move(work));
}

void Workers::join_all() {
  for (;;) {
    std::vector<std::thread> batch;
    {
      std::lock_guard lock(mutex_);
      batch.swap(threads_);
    }
    if (batch.empty()) return;
    for (auto& t : batch) t.join();
  }
}

int StandinState::calls_to(const std::string& route) const {
  auto it = calls.find(route);
  return it == calls.end() ? 0 : it->second;
}

}  // namespace corral::test
