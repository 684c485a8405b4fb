#include "settings.hpp"

#include <cctype>

#include "corral/sdk/remote/settings.hpp"
#include "pod.hpp"
#include "spec.hpp"

namespace corral::kubernetes {
namespace {

// A Kubernetes quantity as a Pod's resources take it: digits, a fraction, a suffix.
bool is_quantity(const std::string& q) {
  if (q.empty() || q.size() > 32 || !std::isdigit(static_cast<unsigned char>(q.front()))) return false;
  size_t i = 0;
  while (i < q.size() && (std::isdigit(static_cast<unsigned char>(q[i])) || q[i] == '.')) ++i;
  static const char* const kSuffixes[] = {"", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  for (const char* s : kSuffixes)
    if (q.substr(i) == s) return true;
  return false;
}

std::string quantity_option(const sdk::Options& options, const char* option, const char* example) {
  std::string q = options.get(option);
  if (!q.empty() && !is_quantity(q))
    throw Error(ErrorCode::invalid_argument, "Kubernetes " + std::string(option) + " '" + q + "' is not a quantity",
                "set " + identity().settings.either(option) + " to a quantity such as " + example);
  return q;
}

StringMap node_selector_of(const std::string& text) {
  StringMap selector;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string pair = text.substr(start, end - start);
    const size_t eq = pair.find('=');
    if (eq == std::string::npos || !is_label_text(pair.substr(0, eq), true) ||
        !is_label_text(pair.substr(eq + 1), false))
      throw Error(ErrorCode::invalid_argument,
                  "Kubernetes node selector '" + pair + "' is not KEY=VALUE of node labels",
                  "set " + identity().settings.either("node-selector") +
                      " to labels such as kubernetes.io/arch=amd64,pool=sandboxes");
    selector[pair.substr(0, eq)] = pair.substr(eq + 1);
    start = end + 1;
  }
  return selector;
}

// A DNS-1123 label: what namespaces and service accounts are named by.
void check_dns_label(const std::string& value, const char* option) {
  bool ok = !value.empty() && value.size() <= 63 && std::isalnum(static_cast<unsigned char>(value.front())) &&
            std::isalnum(static_cast<unsigned char>(value.back()));
  for (char c : value) ok = ok && ((c >= 'a' && c <= 'z') || std::isdigit(static_cast<unsigned char>(c)) || c == '-');
  if (!ok)
    throw Error(
        ErrorCode::invalid_argument,
        "Kubernetes " + std::string(option) + " '" + value + "' is not a valid name (lower-case letters, digits, '-')",
        "check " + identity().settings.either(option));
}

}  // namespace

Settings Settings::from(const sdk::Options& options) {
  const sdk::remote::Identity& k8s = identity();
  Settings s;
  s.kubeconfig = options.get("kubeconfig");
  s.context = options.get("context");
  s.ns = options.get("namespace");
  if (!s.ns.empty()) check_dns_label(s.ns, "namespace");
  s.image = options.get("image", "debian:bookworm-slim");
  if (s.image.empty() || s.image.find_first_of(" \t\n\r") != std::string::npos)
    throw Error(ErrorCode::invalid_argument, "Kubernetes image '" + s.image + "' is not an image reference",
                "set " + k8s.settings.either("image") + " to an image such as debian:bookworm-slim");
  s.cpu = quantity_option(options, "cpu", "500m or 2");
  s.memory = quantity_option(options, "memory", "512Mi or 2Gi");
  s.node_selector = node_selector_of(options.get("node-selector"));
  s.service_account = options.get("service-account");
  if (!s.service_account.empty()) check_dns_label(s.service_account, "service-account");
  s.workdir = sdk::remote::without_trailing_slash(options.get("workdir", "/corral/workspace"));
  sdk::remote::check_workdir(k8s, s.workdir, /*relative_ok=*/false, "/corral/workspace");
  s.lifetime_seconds = sdk::remote::lifetime_option(options, k8s, "lifetime", 3600);
  s.max_lifetime_seconds = sdk::remote::lifetime_option(options, k8s, "max-lifetime", 86400);
  s.start_timeout_seconds = sdk::remote::time_limit(options, k8s, "start-timeout", 300);
  s.request_timeout_seconds = sdk::remote::time_limit(options, k8s, "request-timeout", 30);
  s.warm_pool = options.get("warm-pool");
  if (!s.warm_pool.empty()) check_dns_label(s.warm_pool, "warm-pool");
  s.service_account_dir = options.get("service-account-dir", "/var/run/secrets/kubernetes.io/serviceaccount");
  return s;
}

}  // namespace corral::kubernetes
