// The end-to-end tests' fixture of one provider: a hermetic corral user with a small
// working tree, running `corral --provider NAME`, that checks at the end that nothing
// corral printed or stored (output, claims, the session handle) holds a secret.
//
// Threads: a fixture belongs to the test that made it.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cli.hpp"
#include "corral/json.hpp"

namespace corral::test {

class ProviderCli {
 public:
  // Runs `corral --provider provider`, with the working tree's hello.txt and src/main.c.
  explicit ProviderCli(std::string provider);
  // Fails the test when a claim, or anything run() or handle() saw, holds one of `secrets`.
  ~ProviderCli();
  ProviderCli(const ProviderCli&) = delete;
  ProviderCli& operator=(const ProviderCli&) = delete;

  // `corral args...` in `cwd` (default: the working tree); what it prints is checked.
  CliResult run(std::vector<std::string> args, const std::string& cwd = {});
  // The arguments of `corral run --provider P [flags] --lease-output H -- sh -c SCRIPT`.
  std::vector<std::string> script_args(const std::string& script, std::vector<std::string> flags = {}) const;
  // Runs script_args(script, flags).
  CliResult run_script(const std::string& script, std::vector<std::string> flags = {});
  // Where run_script writes the session handle.
  std::string handle_path() const;
  // The session handle, parsed (and checked); fails the test when none was written.
  json::Document handle();

  CliEnv cli;
  std::vector<std::string> seen;     // everything corral printed or stored
  std::vector<std::string> secrets;  // what must never be in it

 private:
  std::string provider_;
};

// A ProviderCli against a provider's stand-in server `StandIn` (E2B's, Daytona's).
template <class StandIn>
class StandinCli : public ProviderCli {
 public:
  explicit StandinCli(std::string provider) : ProviderCli(std::move(provider)) { secrets.push_back(server.api_key()); }

  // The ids of the stand-in's sandboxes that exist now.
  std::vector<std::string> alive() { return server.sandbox_ids(); }
  // Runs `f(faults)` on the stand-in's fault switches, under its lock.
  template <class F>
  void fault(F&& f) {
    server.with([&](auto& st) {
      f(st.faults);
      return 0;
    });
  }

  StandIn server;
};

}  // namespace corral::test
