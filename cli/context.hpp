// What every command may need, built once per invocation: the service's Session (the
// settings, the lease store, the providers), the terminal it reports to, and what the
// command line gave besides its own flags.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "corral/types.hpp"
#include "service/session.hpp"
#include "settings/config.hpp"
#include "telemetry/traced_operation.hpp"
#include "terminal.hpp"

namespace corral::cli {

struct Context {
  Context(bool verbose, Config config);
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  const Registry& registry() { return session.registry(); }
  // The provider `--provider` named (empty: the environment's, corral.yaml's or the
  // default) with the command line's --<provider>-<option> flags.
  ProviderChoice choice(const std::string& provider) const { return {provider, provider_flags}; }

  service::Session session;
  TerminalUi ui;
  const Config& config;      // the session's
  const ClaimStore& claims;  // the session's
  Providers& providers;      // the session's
  StringMap provider_flags;  // --<provider>-<option> VALUE, keyed "<provider>.<option>"
  // The line's words after its first "--", untouched: the command to run, or the words
  // `__complete` completes (CommandLine::words_after_dashes).
  std::vector<std::string> words_after_dashes;
  // The trace of this command when it is one corral traces (run, warmup, fork) and the
  // environment asks for traces (OTEL_EXPORTER_OTLP_ENDPOINT); null otherwise.
  std::unique_ptr<telemetry::TracedOperation> trace;
};

}  // namespace corral::cli
