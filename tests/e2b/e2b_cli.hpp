// The E2B end-to-end tests' fixture: the stand-in E2B and a hermetic corral user wired to
// it, checking at the end that no secret leaked into anything corral printed or stored.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cli.hpp"
#include "corral/json.hpp"
#include "server.hpp"

namespace corral::test {

struct E2bCli {
  e2b::standin::StandIn server;
  CliEnv cli;
  std::vector<std::string> seen;  // everything corral printed or stored, checked for secrets

  E2bCli() {
    cli.env["E2B_API_KEY"] = server.api_key();
    cli.env["E2B_API_URL"] = server.api_url();
    cli.env["E2B_SANDBOX_URL"] = server.sandbox_url();
    cli.root().write("work/hello.txt", "hello from the workspace\n");
    cli.root().write("work/src/main.c", "int main(void) { return 0; }\n");
  }

  ~E2bCli() {
    // No output, claim or handle ever holds the API key or an envd token.
    for (const auto& c : cli.claims()) seen.push_back(read_file(c));
    auto tokens = server.with([](auto& st) { return st.issued_tokens; });
    tokens.push_back(server.api_key());
    for (const auto& text : seen)
      for (const auto& secret : tokens) CHECK_MESSAGE(text.find(secret) == std::string::npos, "a secret leaked");
  }

  CliResult run(std::vector<std::string> args) {
    CliResult r = cli.run(args);
    seen.push_back(r.out);
    seen.push_back(r.err);
    return r;
  }
  // `corral run --provider e2b [flags] --lease-output H -- sh -c SCRIPT`, handle parsed.
  CliResult run_script(const std::string& script, std::vector<std::string> flags = {}) {
    std::vector<std::string> args = {"run", "--provider", "e2b", "--lease-output", handle_path()};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--", "sh", "-c", script});
    return run(args);
  }
  std::string handle_path() const { return (cli.root().path() / "handle.json").string(); }
  json::Document handle() {
    std::string text = read_file(handle_path());
    seen.push_back(text);
    REQUIRE_MESSAGE(!text.empty(), "no session handle was written");
    return json::parse(text, "handle");
  }
  std::vector<std::string> alive() { return server.sandbox_ids(); }
  template <class F>
  void fault(F&& f) {
    server.with([&](auto& st) { f(st.faults); return 0; });
  }
};

}  // namespace corral::test
