// What tests reach of a stand-in of an API that takes a key (E2B's, Daytona's): its state
// under its lock, the key, and the calls it counted. The stand-in derives from it, serves
// its API on threads of its own, and stops them in its destructor; the folder its
// sandboxes lived in goes after that.
//
// Threads: with() and calls() are safe from any thread (they take the state's lock).
#pragma once

#include <filesystem>
#include <mutex>
#include <string>
#include <system_error>

#include "standin_state.hpp"

namespace corral::test {

// `State` derives from StandinState.
template <class State>
class StandinFace {
 public:
  using state_type = State;

  StandinFace(const StandinFace&) = delete;
  StandinFace& operator=(const StandinFace&) = delete;

  // The key the stand-in accepts.
  const std::string& api_key() const { return state_.api_key(); }
  // Runs `f(state)` with the state locked.
  template <class F>
  auto with(F&& f) {
    std::lock_guard lock(state_.mutex());
    return f(state_);
  }
  // Number of calls to `route` so far.
  int calls(const std::string& route) {
    return with([&](const State& s) { return s.calls_to(route); });
  }

 protected:
  // A state accepting `api_key`, its sandboxes in a fresh folder named after `prefix`.
  StandinFace(const std::string& prefix, std::string api_key)
      : root_(make_standin_folder(prefix)), state_(root_, std::move(api_key)) {}
  ~StandinFace() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }

  std::filesystem::path root_;
  State state_;
};

}  // namespace corral::test
