#include "corral/types.hpp"

namespace corral {

std::string_view to_string(Feature feature) {
  switch (feature) {
    case Feature::run_session: return "run-session";
    case Feature::url_bridge: return "url-bridge";
    case Feature::archive_sync: return "archive-sync";
    case Feature::workspace_mount: return "workspace-mount";
    case Feature::keep_alive: return "keep-alive";
    case Feature::cleanup: return "cleanup";
    case Feature::pause_resume: return "pause-resume";
    case Feature::run_downloads: return "run-downloads";
    case Feature::network_policy: return "network-policy";
    case Feature::network_allowlist: return "network-allowlist";
    case Feature::network_allowlist_domains: return "network-allowlist-domains";
  }
  return "?";
}

std::optional<Feature> parse_feature(std::string_view name) {
  for (Feature f : kAllFeatures)
    if (to_string(f) == name) return f;
  return std::nullopt;
}

std::string_view describe(Feature feature) {
  switch (feature) {
    case Feature::run_session:
      return "a run returns a reusable session handle; sandboxes can be kept and reused by --id";
    case Feature::url_bridge: return "a port inside the sandbox is reachable at a URL (`corral url`)";
    case Feature::archive_sync: return "the workspace is uploaded as an archive and unpacked in the sandbox";
    case Feature::workspace_mount: return "the provider mounts the local working tree; nothing is uploaded";
    case Feature::keep_alive: return "a live sandbox's lifetime can be extended (`corral extend`)";
    case Feature::cleanup: return "corral-owned sandboxes can be listed and destroyed at the provider";
    case Feature::pause_resume: return "a sandbox can be paused and resumed";
    case Feature::run_downloads: return "files the command made come back after the run (`--download`)";
    case Feature::network_policy: return "the sandbox can be cut off the network (`--network none`)";
    case Feature::network_allowlist:
      return "the sandbox can be limited to listed IP addresses and CIDRs (`--network allow:10.0.0.0/8,...`)";
    case Feature::network_allowlist_domains:
      return "the allow list also takes domains and `*.domain` wildcards (`--network allow:pypi.org,*.github.com`)";
  }
  return "";
}

std::vector<std::string> FeatureSet::names() const {
  std::vector<std::string> out;
  for (Feature f : kAllFeatures)
    if (has(f)) out.emplace_back(to_string(f));
  return out;
}

}  // namespace corral
