#include "limits.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <system_error>

#include "corral/errors.hpp"
#include "lease/network_policy.hpp"

namespace corral::mcp {
namespace {

Error refused(std::string message, std::string hint) {
  return Error(ErrorCode::invalid_argument, std::move(message), std::move(hint));
}

}  // namespace

std::vector<std::string> allowed_providers(const Limits& limits, Providers& providers) {
  std::vector<std::string> names{providers.resolve({limits.provider, {}})};
  names.front() = providers.spec(names.front()).name;
  for (const std::string& a : limits.allowed) {
    const std::string name = providers.spec(a).name;
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

std::string allowed_provider(const Limits& limits, Providers& providers, const std::string& asked) {
  const std::vector<std::string> names = allowed_providers(limits, providers);
  if (asked.empty()) return names.front();
  std::string name;
  try {
    name = providers.spec(asked).name;
  } catch (const Error&) {
    throw refused(fmt::format("no provider '{}' is installed", asked),
                  fmt::format("this server may use: {}", fmt::join(names, ", ")));
  }
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw refused(fmt::format("provider '{}' is not allowed here", asked),
                  fmt::format("this server may use: {} (the user allows more with `corral mcp --allow-provider {}`)",
                              fmt::join(names, ", "), name));
  return name;
}

std::filesystem::path served_folder(const Limits& limits, const std::string& cwd) {
  if (cwd.empty() || cwd == ".") return limits.root;
  if (cwd.front() == '/' || cwd.find('\0') != std::string::npos)
    throw refused(fmt::format("cwd '{}' is not a folder relative to the served root", cwd),
                  fmt::format("give a folder below {}, e.g. 'src'", limits.root.string()));
  std::error_code ec;
  const std::filesystem::path folder = std::filesystem::canonical(limits.root / cwd, ec);
  if (ec || !std::filesystem::is_directory(folder, ec))
    throw refused(fmt::format("cwd '{}' is not a folder below {}", cwd, limits.root.string()),
                  "give an existing folder, relative to the served root");
  const auto [end, _] = std::mismatch(limits.root.begin(), limits.root.end(), folder.begin(), folder.end());
  if (end != limits.root.end())
    throw refused(fmt::format("cwd '{}' leads outside the served root {}", cwd, limits.root.string()),
                  "give a folder below the root; the user chooses the root with `corral mcp --root DIR`");
  return folder;
}

NetworkPolicy sandbox_network(const Limits& limits, const ProviderSpec& spec, const Config& config, Ui& ui,
                              const std::optional<std::string>& asked) {
  const NetworkPolicy widest = choose_network_policy(limits.network, spec, config, ui);
  if (!asked) return widest;
  const NetworkPolicy wish = parse_network_policy(*asked);
  if (!network_within(wish, widest))
    throw refused(fmt::format("network '{}' is wider than this server allows ({})", *asked, to_string(widest)),
                  fmt::format("ask for '{}' or narrower (none, or fewer allow: entries); the user sets the widest "
                              "with `corral mcp --network POLICY`",
                              to_string(widest)));
  return wish;
}

void check_env(const Limits& limits, const std::vector<std::string>& names) {
  for (const std::string& n : names)
    if (std::find(limits.env.begin(), limits.env.end(), n) == limits.env.end())
      throw refused(fmt::format("variable '{}' may not be forwarded", n),
                    limits.env.empty() ? std::string("this server forwards no variables; the user allows one with "
                                                     "`corral mcp --env NAME`")
                                       : fmt::format("this server may forward: {}", fmt::join(limits.env, ", ")));
}

}  // namespace corral::mcp
