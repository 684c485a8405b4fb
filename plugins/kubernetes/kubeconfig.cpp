#include "kubeconfig.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "corral/sdk/base64.hpp"
#include "corral/sdk/digest.hpp"
#include "corral/os/read_file.hpp"
#include "corral/types.hpp"
#include "spec.hpp"

namespace corral::kubernetes {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kMaxFileBytes = 4 * 1024 * 1024;

Error config_error(const std::string& message) {
  return Error(ErrorCode::invalid_argument, message,
               "check it with `kubectl config view`; pick a context with " + identity().settings.either("context") +
                   " or a file with KUBECONFIG");
}

// A named entry of one of the kubeconfig's lists, with the file it came from.
struct Entry {
  YAML::Node node;
  fs::path file;
};

// The files a merged kubeconfig is read from, each with its parsed text.
struct Merged {
  std::map<std::string, Entry> clusters, users, contexts;
  std::string current_context;
  std::vector<std::string> files;
};

std::string scalar(const YAML::Node& node, const char* key) {
  const YAML::Node v = node[key];
  if (!v || v.IsNull()) return {};
  if (!v.IsScalar()) throw config_error(std::string("kubeconfig field '") + key + "' is not a string");
  return v.as<std::string>();
}

// Adds the named entries of list `key` of `doc`; an earlier file's entry of a name wins.
void merge_list(const YAML::Node& doc, const char* key, const char* field, const fs::path& file,
                std::map<std::string, Entry>& into) {
  const YAML::Node list = doc[key];
  if (!list || list.IsNull()) return;
  if (!list.IsSequence()) throw config_error(file.string() + ": '" + key + "' is not a list");
  for (const YAML::Node& item : list) {
    const std::string name = scalar(item, "name");
    if (name.empty()) continue;
    into.emplace(name, Entry{item[field], file});
  }
}

void merge_file(const fs::path& file, Merged& merged) {
  std::optional<std::string> text = os::read_regular_file(file, kMaxFileBytes, "kubeconfig");
  if (!text) return;  // kubectl skips the files of the list that are not there
  YAML::Node doc;
  try {
    doc = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    // The mark, not yaml-cpp's message: that can quote the file's text (a token).
    throw config_error("kubeconfig " + file.string() + " is not valid YAML (line " + std::to_string(e.mark.line + 1) +
                       ")");
  }
  merged.files.push_back(file.string());
  if (!doc.IsMap()) return;
  merge_list(doc, "clusters", "cluster", file, merged.clusters);
  merge_list(doc, "users", "user", file, merged.users);
  merge_list(doc, "contexts", "context", file, merged.contexts);
  if (merged.current_context.empty()) merged.current_context = scalar(doc, "current-context");
}

// `path` made absolute against the folder of the kubeconfig that named it.
std::string resolve(const std::string& path, const fs::path& file) {
  if (path.empty() || path.front() == '/') return path;
  return (file.parent_path() / path).string();
}

std::string read_secret_file(const std::string& path, const std::string& what) {
  std::optional<std::string> text = os::read_regular_file(path, kMaxFileBytes, what);
  if (!text) throw config_error(what + " " + path + " does not exist");
  return *text;
}

// The PEM of field `data_key` (base64) or `file_key` (a path) of `node`.
std::string pem_of(const YAML::Node& node, const char* data_key, const char* file_key, const fs::path& file,
                   const std::string& what) {
  if (std::string data = scalar(node, data_key); !data.empty()) {
    std::string pem;
    try {
      sdk::base64_decode_lenient(data, pem, what);
    } catch (const Error&) {
      throw config_error(what + " (" + data_key + " in " + file.string() + ") is not base64");
    }
    return pem;
  }
  if (std::string path = scalar(node, file_key); !path.empty()) return read_secret_file(resolve(path, file), what);
  return {};
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  return text;
}

ExecPlugin exec_of(const YAML::Node& exec, const fs::path& file) {
  ExecPlugin plugin;
  plugin.command = scalar(exec, "command");
  if (plugin.command.empty()) throw config_error("the user's exec plugin in " + file.string() + " names no command");
  if (plugin.command.find('/') != std::string::npos) plugin.command = resolve(plugin.command, file);
  plugin.api_version = scalar(exec, "apiVersion");
  if (plugin.api_version != "client.authentication.k8s.io/v1" &&
      plugin.api_version != "client.authentication.k8s.io/v1beta1")
    throw config_error("the user's exec plugin in " + file.string() + " has apiVersion '" + plugin.api_version +
                       "'; corral speaks client.authentication.k8s.io/v1 and v1beta1");
  if (const YAML::Node args = exec["args"]; args && args.IsSequence())
    for (const YAML::Node& a : args) plugin.args.push_back(a.as<std::string>());
  if (const YAML::Node env = exec["env"]; env && env.IsSequence())
    for (const YAML::Node& e : env) plugin.env.emplace_back(scalar(e, "name"), scalar(e, "value"));
  plugin.install_hint = scalar(exec, "installHint");
  return plugin;
}

std::vector<fs::path> kubeconfig_files(const std::string& paths) {
  std::vector<fs::path> files;
  if (paths.empty()) {
    const char* home = std::getenv("HOME");
    if (home && *home) files.push_back(fs::path(home) / ".kube" / "config");
    return files;
  }
  size_t start = 0;
  while (start <= paths.size()) {
    size_t end = paths.find(':', start);
    if (end == std::string::npos) end = paths.size();
    if (end > start) files.emplace_back(paths.substr(start, end - start));
    start = end + 1;
  }
  return files;
}

// A Pod's own account: KUBERNETES_SERVICE_HOST and _PORT, and the mounted token and CA.
std::optional<ClusterAccess> in_cluster(const std::string& dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !*host || !port || !*port) return std::nullopt;
  const fs::path folder(dir);
  std::optional<std::string> token = os::read_regular_file(folder / "token", kMaxFileBytes, "service account token");
  if (!token) return std::nullopt;
  ClusterAccess access;
  std::string h = host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";  // an IPv6 service address
  access.server = "https://" + h + ":" + port;
  access.token = trimmed(*token);
  access.tls.ca_pem = os::read_regular_file(folder / "ca.crt", kMaxFileBytes, "service account CA").value_or("");
  access.ns = trimmed(os::read_regular_file(folder / "namespace", 4096, "service account namespace").value_or(""));
  access.origin = "the in-cluster service account (" + dir + ")";
  access.account = "service account " + dir;
  return access;
}

}  // namespace

ClusterAccess find_cluster(const KubeconfigSource& source) {
  Merged merged;
  for (const fs::path& file : kubeconfig_files(source.paths)) merge_file(file, merged);
  if (merged.files.empty()) {
    if (std::optional<ClusterAccess> pod = in_cluster(source.service_account_dir)) return *pod;
    throw Error(ErrorCode::invalid_argument,
                "no Kubernetes cluster is configured: " +
                    (source.paths.empty() ? std::string("~/.kube/config does not exist")
                                          : "none of the kubeconfig files in KUBECONFIG exists") +
                    ", and this is not a Pod with a service account",
                "point KUBECONFIG (or " + identity().settings.flag("kubeconfig") +
                    ") at the kubeconfig kubectl uses, e.g. one your cloud's CLI wrote");
  }
  const std::string files = merged.files.size() == 1 ? merged.files.front() : "KUBECONFIG";
  const std::string context_name = source.context.empty() ? merged.current_context : source.context;
  if (context_name.empty())
    throw config_error("kubeconfig " + files + " has no current-context, and no context was asked for");
  auto context = merged.contexts.find(context_name);
  if (context == merged.contexts.end() || !context->second.node)
    throw config_error("kubeconfig " + files + " has no context '" + context_name + "'");
  const YAML::Node& ctx = context->second.node;
  ClusterAccess access;
  access.origin = "context '" + context_name + "' of " + files;
  access.ns = scalar(ctx, "namespace");

  const std::string cluster_name = scalar(ctx, "cluster");
  auto cluster = merged.clusters.find(cluster_name);
  if (cluster == merged.clusters.end() || !cluster->second.node)
    throw config_error("context '" + context_name + "' names cluster '" + cluster_name + "', which " + files +
                       " does not define");
  const YAML::Node& c = cluster->second.node;
  access.server = scalar(c, "server");
  while (!access.server.empty() && access.server.back() == '/') access.server.pop_back();
  if (access.server.rfind("https://", 0) != 0 && access.server.rfind("http://", 0) != 0)
    throw config_error("cluster '" + cluster_name + "' has no https:// server URL in " + cluster->second.file.string());
  access.tls.ca_pem = pem_of(c, "certificate-authority-data", "certificate-authority", cluster->second.file,
                             "the CA of cluster '" + cluster_name + "'");
  access.tls.insecure = scalar(c, "insecure-skip-tls-verify") == "true";

  const std::string user_name = scalar(ctx, "user");
  auto user = merged.users.find(user_name);
  if (user != merged.users.end() && user->second.node) {
    const YAML::Node& u = user->second.node;
    const fs::path& file = user->second.file;
    const std::string what = "the credentials of user '" + user_name + "'";
    access.tls.client_cert_pem = pem_of(u, "client-certificate-data", "client-certificate", file, what);
    access.tls.client_key_pem = pem_of(u, "client-key-data", "client-key", file, what);
    if (access.tls.client_cert_pem.empty() != access.tls.client_key_pem.empty())
      throw config_error("user '" + user_name + "' in " + file.string() +
                         " has a client certificate without its key, or a key without its certificate");
    access.token = scalar(u, "token");
    if (access.token.empty())
      if (std::string token_file = scalar(u, "tokenFile"); !token_file.empty())
        access.token =
            trimmed(read_secret_file(resolve(token_file, file), "the token file of user '" + user_name + "'"));
    if (const YAML::Node exec = u["exec"]; exec && exec.IsMap()) access.exec = exec_of(exec, file);
    access.account = "user " + user_name;
    if (const std::string token = scalar(u, "token"); !token.empty())
      access.account += "; token " + sdk::sha256_hex(token);
    if (const std::string file_name = scalar(u, "tokenFile"); !file_name.empty())
      access.account += "; token file " + resolve(file_name, file);
    if (!access.tls.client_cert_pem.empty())
      access.account += "; certificate " + sdk::sha256_hex(access.tls.client_cert_pem);
    if (access.exec) {
      access.account += "; exec " + access.exec->command;
      for (const std::string& a : access.exec->args) access.account += " " + a;
    }
    if (const YAML::Node provider = u["auth-provider"]; provider && provider.IsMap())
      throw config_error("user '" + user_name +
                         "' logs in with an auth-provider, which kubectl itself no longer "
                         "supports; use the exec plugin your cloud's CLI offers (e.g. gke-gcloud-auth-plugin)");
  }
  return access;
}

}  // namespace corral::kubernetes
