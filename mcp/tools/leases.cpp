// sandbox_fork, sandbox_pause, sandbox_resume, sandbox_stop, sandbox_status, sandbox_list
// and providers: the sandboxes this server made, and what it may make.
#include <fmt/format.h>

#include <chrono>

#include "corral/errors.hpp"
#include "lease/handle.hpp"
#include "service/leases.hpp"
#include "tools.hpp"

namespace corral::mcp {
namespace {

// Refuses, before anything is asked of it, a tool whose feature `lease_id`'s provider
// lacks, naming the allowed providers that have it.
void require_feature(ToolContext& ctx, const std::string& lease_id, Feature feature, std::string_view tool) {
  const Claim claim = ctx.session.claims().resolve(lease_id);
  Providers& providers = ctx.session.providers();
  const ProviderSpec& spec = providers.spec(claim.provider);
  if (spec.features.has(feature)) return;
  std::vector<std::string> having;
  for (const std::string& name : allowed_providers(ctx.limits, providers))
    if (providers.spec(name).features.has(feature)) having.push_back(name);
  throw Error(ErrorCode::unsupported,
              fmt::format("{} needs the {} feature, which provider '{}' does not have", tool, to_string(feature),
                          spec.name),
              having.empty() ? std::string("none of the providers this server may use has it")
                             : fmt::format("start the sandbox on one that has it: {}", fmt::join(having, ", ")));
}

std::string lease_state(const std::string& slug, std::string_view state) {
  return json::text_of([&](json::Writer& w) {
    w.StartObject();
    json::write_string(w, "lease", slug);
    json::write_string(w, "state", state);
    w.EndObject();
  });
}

std::string fork(ToolContext& ctx, const json::Value* arguments) {
  const Args args(arguments, {"lease", "count"});
  const std::string lease = owned_lease(ctx, args.string("lease"));
  const int count = static_cast<int>(args.integer("count", 1, 1, 16));
  require_feature(ctx, lease, Feature::fork, "sandbox_fork");
  Book::Slots slots = ctx.book.reserve(count);
  const service::ForkOutcome outcome = service::fork(ctx.session, ctx.ui, {.source = {lease, choice_of(ctx, "")}, .count = count});
  const std::vector<std::string> env = ctx.book.env_of(lease);
  for (const SessionHandle& h : outcome.forks)
    ctx.book.hold(slots, {.lease_id = h.lease_id,
                          .slug = h.slug,
                          .env = env,
                          .deadline = Book::Clock::now() + std::chrono::seconds(ctx.limits.lifetime_seconds)});
  return json::text_of([&](json::Writer& w) {
    w.StartObject();
    w.Key("leases");
    w.StartArray();
    for (const SessionHandle& h : outcome.forks) json::write_text(w, h.slug);
    w.EndArray();
    w.EndObject();
  });
}

std::string pause(ToolContext& ctx, const json::Value* arguments) {
  const Args args(arguments, {"lease"});
  const std::string lease = owned_lease(ctx, args.string("lease"));
  require_feature(ctx, lease, Feature::pause_resume, "sandbox_pause");
  const Claim claim = service::pause(ctx.session, ctx.ui, {lease, choice_of(ctx, "")}).claim;
  return lease_state(claim.slug, "paused");
}

std::string resume(ToolContext& ctx, const json::Value* arguments) {
  const Args args(arguments, {"lease"});
  const std::string lease = owned_lease(ctx, args.string("lease"));
  require_feature(ctx, lease, Feature::pause_resume, "sandbox_resume");
  const Claim claim = service::resume(ctx.session, ctx.ui, {lease, choice_of(ctx, "")}).claim;
  return lease_state(claim.slug, "running");
}

std::string stop(ToolContext& ctx, const json::Value* arguments) {
  const Args args(arguments, {"lease"});
  const std::string lease = owned_lease(ctx, args.string("lease"));
  const std::string slug = ctx.session.claims().resolve(lease).slug;
  service::stop(ctx.session, ctx.ui, {.lease = lease});
  ctx.book.forget(lease);
  return lease_state(slug, "stopped");
}

std::string status(ToolContext& ctx, const json::Value* arguments) {
  const Args args(arguments, {"lease"});
  const std::string lease = owned_lease(ctx, args.string("lease"));
  return service::status_to_json(service::status(ctx.session, ctx.ui, {lease, choice_of(ctx, "")}));
}

std::string list(ToolContext& ctx, const json::Value* arguments) {
  const Args args(arguments, {});
  const auto now = Book::Clock::now();
  return json::text_of([&](json::Writer& w) {
    w.StartObject();
    w.Key("leases");
    w.StartArray();
    for (const Book::Entry& e : ctx.book.entries()) {
      std::optional<Claim> claim = ctx.session.claims().read(e.lease_id);
      w.StartObject();
      json::write_string(w, "lease", e.slug);
      json::write_string(w, "provider", claim ? claim->provider : std::string());
      w.Key("kept");
      w.Bool(e.kept || e.adopted);
      if (!e.kept && !e.adopted) {
        w.Key("secondsLeft");
        w.Int64(std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::seconds>(e.deadline - now).count()));
      }
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  });
}

std::string providers(ToolContext& ctx, const json::Value* arguments) {
  const Args args(arguments, {});
  Providers& all = ctx.session.providers();
  const std::vector<std::string> names = allowed_providers(ctx.limits, all);
  return json::text_of([&](json::Writer& w) {
    w.StartObject();
    w.Key("providers");
    w.StartArray();
    for (const std::string& name : names) {
      const ProviderSpec& spec = all.spec(name);
      w.StartObject();
      json::write_string(w, "name", spec.name);
      json::write_strings(w, "features", spec.features.names());
      w.Key("default");
      w.Bool(name == names.front());
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  });
}

#define CORRAL_MCP_LEASE_ONLY \
  R"json({"type": "object", "additionalProperties": false, "required": ["lease"], "properties": {)json" \
  R"json(    "lease": {"type": "string", "description": "A lease sandbox_start or sandbox_fork returned"}}})json"
#define CORRAL_MCP_LEASE_STATE \
  R"json({"type": "object", "required": ["lease", "state"], "properties": {)json" \
  R"json(    "lease": {"type": "string"}, "state": {"type": "string"}}})json"
#define CORRAL_MCP_NO_ARGUMENTS R"json({"type": "object", "additionalProperties": false, "properties": {}})json"

}  // namespace

const Tool kForkTool = {
    .name = "sandbox_fork",
    .description = "Copy a started sandbox, files and state, into new sandboxes (providers with the fork feature).",
    .input_schema = R"json({"type": "object", "additionalProperties": false, "required": ["lease"], "properties": {
    "lease": {"type": "string", "description": "The sandbox to copy"},
    "count": {"type": "integer", "minimum": 1, "maximum": 16, "description": "How many copies; default 1"}}})json",
    .output_schema = R"json({"type": "object", "required": ["leases"], "properties": {
    "leases": {"type": "array", "items": {"type": "string"}, "description": "The copies' leases"}}})json",
    .call = fork,
};

const Tool kPauseTool = {
    .name = "sandbox_pause",
    .description = "Pause a started sandbox (providers with pause-resume); sandbox_exec resumes it.",
    .input_schema = CORRAL_MCP_LEASE_ONLY,
    .output_schema = CORRAL_MCP_LEASE_STATE,
    .call = pause,
};

const Tool kResumeTool = {
    .name = "sandbox_resume",
    .description = "Resume a paused sandbox.",
    .input_schema = CORRAL_MCP_LEASE_ONLY,
    .output_schema = CORRAL_MCP_LEASE_STATE,
    .call = resume,
};

const Tool kStopTool = {
    .name = "sandbox_stop",
    .description = "Stop a sandbox and delete it, with its files.",
    .input_schema = CORRAL_MCP_LEASE_ONLY,
    .output_schema = CORRAL_MCP_LEASE_STATE,
    .call = stop,
};

const Tool kStatusTool = {
    .name = "sandbox_status",
    .description = "A sandbox's lease and its state as the provider reports it now.",
    .input_schema = CORRAL_MCP_LEASE_ONLY,
    .output_schema = R"json({"type": "object", "required": ["lease", "sandbox"], "properties": {
    "lease": {"type": "object"}, "sandbox": {"type": "object"}}})json",
    .call = status,
};

const Tool kListTool = {
    .name = "sandbox_list",
    .description = "The sandboxes this server may act on: the ones it started or forked, and those the user let it adopt.",
    .input_schema = CORRAL_MCP_NO_ARGUMENTS,
    .output_schema = R"json({"type": "object", "required": ["leases"], "properties": {
    "leases": {"type": "array", "items": {"type": "object", "required": ["lease", "kept"], "properties": {
      "lease": {"type": "string"}, "provider": {"type": "string"},
      "kept": {"type": "boolean", "description": "Outlives this server"},
      "secondsLeft": {"type": "integer", "description": "Until the server stops it"}}}}}})json",
    .call = list,
};

const Tool kProvidersTool = {
    .name = "providers",
    .description = "The providers this server may use, with their features; the default one first.",
    .input_schema = CORRAL_MCP_NO_ARGUMENTS,
    .output_schema = R"json({"type": "object", "required": ["providers"], "properties": {
    "providers": {"type": "array", "items": {"type": "object", "required": ["name", "features"], "properties": {
      "name": {"type": "string"}, "features": {"type": "array", "items": {"type": "string"}},
      "default": {"type": "boolean"}}}}}})json",
    .call = providers,
};

}  // namespace corral::mcp
