// The tools this server offers, one table: each with the names and argument names agents'
// prompts and configs rely on, a description, its input and output schemas, and what it
// does. A tool answers with its structured result, or throws corral::Error, which the
// server turns into a tool error (isError) the model can read: bad arguments, limits,
// a provider without the feature, a provider's failure.
//
// Threads: the table is constant; a tool runs on its call's thread, and calls may run at
// once (on different sandboxes; one lease waits for another's call to end).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "args.hpp"
#include "book.hpp"
#include "call_ui.hpp"
#include "limits.hpp"
#include "service/session.hpp"

namespace corral::mcp {

// What a tool works with.
struct ToolContext {
  service::Session& session;
  const Limits& limits;
  const StringMap& provider_flags;  // --<provider>-<option> VALUE, as the server was started
  Book& book;
  CallUi& ui;
};

struct Tool {
  std::string_view name;
  std::string_view description;
  std::string_view input_schema;   // JSON Schema text
  std::string_view output_schema;  // JSON Schema text; its structuredContent is valid against it
  // Runs the tool: the structuredContent, as JSON text.
  std::string (*call)(ToolContext& ctx, const json::Value* arguments);
};

// Every tool, in the order tools/list gives them.
std::span<const Tool> tools();
// The tool called `name`, or nullptr.
const Tool* find_tool(std::string_view name);

// The tools of each file under tools/.
extern const Tool kRunTool, kSandboxStartTool, kSandboxExecTool;
extern const Tool kWriteFileTool, kReadFileTool, kListFilesTool;
extern const Tool kForkTool, kPauseTool, kResumeTool, kStopTool, kStatusTool, kListTool, kProvidersTool;

// Helpers the tools share (tools/common.cpp).
// The lease `name` (id or slug) names, by id, when this server may act on it; else
// not-found or invalid-argument saying why.
std::string owned_lease(ToolContext& ctx, const std::string& name);
// The choice that opens `provider` with the server's option flags.
ProviderChoice choice_of(const ToolContext& ctx, const std::string& provider);
// A duration a tool asked for ("" = none) capped at the server's lifetime, as text.
std::string bounded_timeout(const ToolContext& ctx, const std::optional<std::string>& asked);

}  // namespace corral::mcp
