// The flags of `corral run` and the part of them `corral warmup` shares, bound to the
// service's specs (service/run_spec.hpp), plus what only a terminal front end has: where
// the session handle goes and how progress shows.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "context.hpp"
#include "lease/output_file.hpp"
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

// Runs `spec` in one sandbox made as `sandbox` says (finished by finish_sandbox_options):
// the handle to --lease-output, errors and the kept sandbox's note to the user; returns
// the exit status.
int run_one(Context& ctx, const SandboxOptions& sandbox, service::RunSpec& spec);
// Decides from corral's stdin whether the command gets it (spec.forward_stdin: open, not a
// terminal, no --no-stdin), and with -t checks that stdin is a terminal and notes TERM.
void take_terminal(service::RunSpec& spec);

// Writes a handle as soon as a sandbox exists, so one is there even if corral dies before
// the end (which writes it again). A failure here is reported by that last write.
void write_early(const OutputFile& output, const std::string& text);
// Writes the handle (or handles) of the finished run to --lease-output; a failure is
// reported and becomes the exit status of a run that had none.
void write_final(Context& ctx, const OutputFile& output, const std::string& text, int& exit_code, bool failed);

}  // namespace corral::cli
