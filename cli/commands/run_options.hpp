// The flags of `corral run` and the part of them `corral warmup` shares, bound to the
// service's specs (service/run_spec.hpp), plus what only a terminal front end has: where
// the session handle goes and how progress shows.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "context.hpp"
#include "service/run_spec.hpp"

namespace corral::cli {

// The flags of a new sandbox, and the handle file and progress mode every run has.
struct SandboxOptions {
  service::SandboxSpec spec;
  std::string lease_output;      // --lease-output FILE: the session handle
  std::string progress = "auto";  // --progress auto|never|json
};

// Registers --provider, --lease-output, --env, --max-workspace, --network, --idle and
// --progress on `app`.
void add_sandbox_options(CLI::App& app, SandboxOptions& options);
// Completes `options` with what the line gave besides its flags (the provider option
// flags, the current folder) and sets the --progress mode on ctx's Ui; a usage error for
// a mode that is none.
void finish_sandbox_options(Context& ctx, SandboxOptions& options);

}  // namespace corral::cli
