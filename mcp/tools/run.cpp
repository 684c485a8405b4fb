// run, sandbox_start and sandbox_exec: commands in sandboxes made of the served folder.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "corral/errors.hpp"
#include "lease/handle.hpp"
#include "service/exec.hpp"
#include "service/run_spec.hpp"
#include "tools.hpp"

namespace corral::mcp {
namespace {

// stdin is handed to the command through one argv word: below the kernel's 128 KiB limit
// on a single argument, with room for the rest of the command.
constexpr std::size_t kMaxStdin = 96 * 1024;

// The output members run and sandbox_exec share, for their output schemas.
#define CORRAL_MCP_OUTPUT_PROPERTIES \
  R"json("exitCode": {"type": "integer", "description": "The command's exit code"},)json" \
  R"json(    "stdout": {"type": "string", "description": "Its output, cut to the server's bound with a marker saying what was left out"},)json" \
  R"json(    "stderr": {"type": "string"},)json" \
  R"json(    "stdoutBytes": {"type": "integer", "description": "Bytes the command wrote to stdout, all of them"},)json" \
  R"json(    "stderrBytes": {"type": "integer"},)json" \
  R"json(    "notes": {"type": "array", "items": {"type": "string"}, "description": "What corral said meanwhile"})json"

// The arguments that choose a new sandbox, for the input schemas.
#define CORRAL_MCP_SANDBOX_PROPERTIES \
  R"json("provider": {"type": "string", "description": "The provider; default: the server's (the providers tool lists those allowed)"},)json" \
  R"json(    "cwd": {"type": "string", "description": "A folder below the served root: the sandbox holds its working tree and commands start here"},)json" \
  R"json(    "env": {"type": "array", "items": {"type": "string"}, "description": "Names of variables to forward (only those the user allowed)"},)json" \
  R"json(    "network": {"type": "string", "description": "none, open or allow:HOST,... (never wider than the server allows)"})json"

// What a new sandbox is made of: the provider, folder, network and variables a tool asked
// for, each checked against the server's limits.
service::SandboxSpec sandbox_spec(ToolContext& ctx, const Args& args) {
  service::SandboxSpec spec;
  const std::string provider = allowed_provider(ctx.limits, ctx.session.providers(), args.optional_string("provider").value_or(""));
  spec.provider = choice_of(ctx, provider);
  spec.cwd = served_folder(ctx.limits, args.optional_string("cwd").value_or(""));
  spec.env = args.strings("env");
  check_env(ctx.limits, spec.env);
  const ProviderSpec& provider_spec = ctx.session.providers().spec(provider);
  spec.network = to_string(sandbox_network(ctx.limits, provider_spec, ctx.session.config(), ctx.ui,
                                           args.optional_string("network")));
  return spec;
}

void write_output(json::Writer& w, CallUi& ui) {
  json::write_string(w, "stdout", ui.stdout_text());
  json::write_string(w, "stderr", ui.stderr_text());
  w.Key("stdoutBytes");
  w.Uint64(ui.stdout_bytes());
  w.Key("stderrBytes");
  w.Uint64(ui.stderr_bytes());
  json::write_strings(w, "notes", ui.notes());
}

// A run that failed after its sandbox existed: the error, with what the command said.
Error failed_with_output(const Error& error, CallUi& ui) {
  std::string message = error.what();
  const std::string err = ui.stderr_text();
  if (!err.empty()) message += "\nstderr:\n" + err;
  return Error(error.code(), message, error.hint());
}

std::string run(ToolContext& ctx, const json::Value* arguments) {
  const Args args(arguments, {"command", "provider", "cwd", "env", "network", "timeout", "download"});
  service::RunSpec spec;
  spec.argv = args.strings("command", /*required=*/true);
  spec.sandbox = sandbox_spec(ctx, args);
  spec.timeout = bounded_timeout(ctx, args.optional_string("timeout"));
  spec.downloads = args.strings("download");
  Book::Slots slot = ctx.book.reserve(1);
  const RunResult result = service::run(ctx.session, ctx.ui, spec);
  if (result.error) throw failed_with_output(*result.error, ctx.ui);
  return json::text_of([&](json::Writer& w) {
    w.StartObject();
    w.Key("exitCode");
    w.Int(result.exit_code);
    write_output(w, ctx.ui);
    if (result.handle) {
      const std::string handle = handle_to_json(*result.handle);
      w.Key("handle");
      w.RawValue(handle.data(), handle.size(), rapidjson::kObjectType);
    }
    w.EndObject();
  });
}

std::string sandbox_start(ToolContext& ctx, const json::Value* arguments) {
  const Args args(arguments, {"provider", "cwd", "network", "env", "keep"});
  const bool keep = args.boolean("keep", false);
  if (keep && !ctx.limits.allow_keep)
    throw Error(ErrorCode::invalid_argument, "this server may not keep a sandbox past its own end",
                "leave out keep (the sandbox lasts until sandbox_stop or the server ends); the user allows it with "
                "`corral mcp --allow-keep`");
  const service::SandboxSpec spec = sandbox_spec(ctx, args);
  Book::Slots slot = ctx.book.reserve(1);
  const SessionHandle handle = service::warmup(ctx.session, ctx.ui, spec);
  ctx.book.hold(slot, {.lease_id = handle.lease_id,
                       .slug = handle.slug,
                       .kept = keep,
                       .env = spec.env,
                       .deadline = Book::Clock::now() + std::chrono::seconds(ctx.limits.lifetime_seconds)});
  return json::text_of([&](json::Writer& w) {
    w.StartObject();
    json::write_string(w, "lease", handle.slug);
    const std::string text = handle_to_json(handle);
    w.Key("handle");
    w.RawValue(text.data(), text.size(), rapidjson::kObjectType);
    w.EndObject();
  });
}

std::string sandbox_exec(ToolContext& ctx, const json::Value* arguments) {
  const Args args(arguments, {"lease", "command", "cwd", "env", "timeout", "stdin"});
  service::ExecSpec spec;
  const std::string lease = owned_lease(ctx, args.string("lease"));
  spec.lease = {lease, choice_of(ctx, "")};
  spec.argv = args.strings("command", /*required=*/true);
  spec.cwd = args.optional_string("cwd").value_or("");
  spec.env = args.strings("env");
  check_env(ctx.limits, spec.env);
  for (const std::string& name : ctx.book.env_of(lease))
    if (std::find(spec.env.begin(), spec.env.end(), name) == spec.env.end()) spec.env.push_back(name);
  spec.timeout = bounded_timeout(ctx, args.optional_string("timeout"));
  if (std::optional<std::string> input = args.optional_string("stdin")) {
    if (input->size() > kMaxStdin)
      throw Error(ErrorCode::invalid_argument, fmt::format("stdin is {} bytes; at most {} can be given", input->size(), kMaxStdin),
                  "write larger input to a file with sandbox_write_file and redirect it");
    if (input->find('\0') != std::string::npos)
      throw Error(ErrorCode::invalid_argument, "stdin holds a NUL byte, which cannot be passed",
                  "write binary input to a file with sandbox_write_file (encoding base64) and redirect it");
    // printf feeds the text to the command through a pipe; its exit code is the command's.
    std::vector<std::string> argv = {"/bin/sh", "-c", "printf '%s' \"$0\" | \"$@\"", *input};
    argv.insert(argv.end(), spec.argv.begin(), spec.argv.end());
    spec.argv = std::move(argv);
  }
  const int exit_code = service::exec(ctx.session, ctx.ui, spec);
  return json::text_of([&](json::Writer& w) {
    w.StartObject();
    w.Key("exitCode");
    w.Int(exit_code);
    write_output(w, ctx.ui);
    w.EndObject();
  });
}

}  // namespace

const Tool kRunTool = {
    .name = "run",
    .description = "Run one command in a fresh sandbox made from the served folder, then destroy the sandbox. "
                   "Returns the exit code and the output; a non-zero exit code is a result, not an error.",
    .input_schema = R"json({"type": "object", "additionalProperties": false, "required": ["command"], "properties": {
    "command": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "The command and its arguments, word for word (no shell: use [\"sh\", \"-c\", \"...\"] for one)"},
    )json" CORRAL_MCP_SANDBOX_PROPERTIES R"json(,
    "timeout": {"type": "string", "description": "A duration such as 90s or 10m; at most the server's sandbox lifetime"},
    "download": {"type": "array", "items": {"type": "string"}, "description": "Files or globs to copy back from the sandbox, relative to cwd"}}})json",
    .output_schema = R"json({"type": "object", "required": ["exitCode", "stdout", "stderr", "handle"], "properties": {
    )json" CORRAL_MCP_OUTPUT_PROPERTIES R"json(,
    "handle": {"type": "object", "description": "corral's session handle of the run"}}})json",
    .call = run,
};

const Tool kSandboxStartTool = {
    .name = "sandbox_start",
    .description = "Start a sandbox made from the served folder and keep it for sandbox_exec and the file tools. "
                   "It lasts until sandbox_stop, its lifetime, or the end of this server.",
    .input_schema = R"json({"type": "object", "additionalProperties": false, "properties": {
    )json" CORRAL_MCP_SANDBOX_PROPERTIES R"json(,
    "keep": {"type": "boolean", "description": "Keep it after this server ends (only if the user allowed it)"}}})json",
    .output_schema = R"json({"type": "object", "required": ["lease", "handle"], "properties": {
    "lease": {"type": "string", "description": "The lease to name in the other sandbox tools"},
    "handle": {"type": "object", "description": "corral's session handle of the sandbox"}}})json",
    .call = sandbox_start,
};

const Tool kSandboxExecTool = {
    .name = "sandbox_exec",
    .description = "Run a command in a started sandbox as it is now (nothing is synced), in its workspace. "
                   "Returns the exit code and the output; a non-zero exit code is a result, not an error.",
    .input_schema = R"json({"type": "object", "additionalProperties": false, "required": ["lease", "command"], "properties": {
    "lease": {"type": "string", "description": "The lease sandbox_start returned"},
    "command": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "The command and its arguments, word for word"},
    "cwd": {"type": "string", "description": "A folder inside the sandbox's workspace, relative to it"},
    "env": {"type": "array", "items": {"type": "string"}, "description": "Names of variables to forward (only those the user allowed)"},
    "timeout": {"type": "string", "description": "A duration such as 90s or 10m"},
    "stdin": {"type": "string", "description": "Text for the command's standard input (at most 96 KiB)"}}})json",
    .output_schema = R"json({"type": "object", "required": ["exitCode", "stdout", "stderr"], "properties": {
    )json" CORRAL_MCP_OUTPUT_PROPERTIES R"json(}})json",
    .call = sandbox_exec,
};

}  // namespace corral::mcp
