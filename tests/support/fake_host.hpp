// An in-process stand-in for corral's host services, so provider tests can call the
// plugin's primitives directly and see exactly what it emitted and logged.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "corral/sdk.hpp"

namespace corral::test {

class FakeHost {
 public:
  FakeHost();
  corral::sdk::Host host() { return corral::sdk::Host(&table_, this); }
  std::string out() const;
  std::string err() const;
  std::vector<std::string> logs() const;  // "warn: ...", "info: ...", "progress: ..."
  // Makes cancelled() true, like Ctrl-C.
  void cancel() { cancelled_ = true; }
  // Makes cancelled() true from its (answers + 1)th question on: Ctrl-C in the middle of a call.
  void cancel_after(int answers) { answers_left_ = answers; }
  // Every transfer() report, in order: {done, total}.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> transfers() const;

 private:
  static FakeHost& self(void* call) { return *static_cast<FakeHost*>(call); }
  corral_host_v1 table_{};
  mutable std::mutex mutex_;
  std::string out_, err_;
  std::vector<std::string> logs_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> transfers_;
  std::atomic<bool> cancelled_{false};
  std::atomic<int> answers_left_{-1};  // -1: cancel_after was not called
};

}  // namespace corral::test
