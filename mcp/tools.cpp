#include "tools.hpp"

#include <array>

namespace corral::mcp {
namespace {

constexpr std::array<const Tool*, 13> kTools = {
    &kRunTool,    &kSandboxStartTool, &kSandboxExecTool, &kWriteFileTool, &kReadFileTool,
    &kListFilesTool, &kForkTool,      &kPauseTool,       &kResumeTool,    &kStopTool,
    &kStatusTool, &kListTool,         &kProvidersTool,
};

}  // namespace

std::span<const Tool> tools() {
  static const std::array<Tool, kTools.size()> table = [] {
    std::array<Tool, kTools.size()> t{};
    for (std::size_t i = 0; i < kTools.size(); ++i) t[i] = *kTools[i];
    return t;
  }();
  return table;
}

const Tool* find_tool(std::string_view name) {
  for (const Tool& t : tools())
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace corral::mcp
