// What every provider stand-in keeps alike: a fresh folder of its own for its sandboxes'
// files, its state behind one lock with the calls it counted per route, the threads that
// outlive the request that started them, and the shapes of its times and ids.
//
// Threads: StandinState's members are guarded by its mutex(), except where noted;
// Workers and the free functions are safe from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace corral::test {

// A fresh folder <tmp>/<prefix>-XXXXXX for a stand-in's files.
std::filesystem::path make_standin_folder(const std::string& prefix);

// "2006-01-02T15:04:05" of `t` in UTC: what every RFC 3339 time a stand-in writes begins with.
std::string utc_seconds(std::chrono::system_clock::time_point t);

// `length` characters drawn at random from `alphabet`.
std::string random_text(std::size_t length, std::string_view alphabet);

// The keys of `items` (a stand-in's sandboxes by id), in order.
template <class Item>
std::vector<std::string> ids_of(const std::map<std::string, Item>& items) {
  std::vector<std::string> ids;
  for (const auto& [id, item] : items) ids.push_back(id);
  return ids;
}

// Threads a stand-in starts that outlive the request that started them (a process's
// output pump, a drain); joined when it stops.
class Workers {
 public:
  // Runs `work` on a thread of its own.
  void start(std::function<void()> work);
  // Joins every worker, those started while it waits too.
  void join_all();

 private:
  std::mutex mutex_;
  std::vector<std::thread> threads_;
};

// The state a stand-in of an API that takes a key shares with its tests: the key, the
// folder its sandboxes live in, and the calls it counted.
class StandinState {
 public:
  StandinState(std::filesystem::path root, std::string api_key) : root_(std::move(root)), api_key_(std::move(api_key)) {}

  // The key the stand-in accepts (set once; read without the mutex).
  const std::string& api_key() const { return api_key_; }
  // Guards everything the stand-in's state holds.
  std::mutex& mutex() { return mutex_; }
  // Calls per route ("create", "start", ...).
  std::map<std::string, int> calls;
  // How many calls `route` had so far; caller holds the mutex.
  int calls_to(const std::string& route) const;

 protected:
  std::filesystem::path root_;

 private:
  std::string api_key_;
  std::mutex mutex_;
};

}  // namespace corral::test
