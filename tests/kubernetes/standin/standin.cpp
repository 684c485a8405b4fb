#include "standin.hpp"

#include <stdlib.h>

#include <fstream>
#include <stdexcept>

#include "api_internal.hpp"
#include "tls_server.hpp"

namespace corral::kubernetes::standin {
namespace fs = std::filesystem;
namespace {

void write_text(const fs::path& path, const std::string& text, fs::perms perms = fs::perms::owner_read | fs::perms::owner_write) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  fs::permissions(path, perms);
}

}  // namespace

fs::path schema_dir() {
  if (const char* env = getenv("CORRAL_K8S_SCHEMAS")) return env;
  return CORRAL_K8S_SCHEMA_DIR;
}

StandIn::StandIn(Options options) : options_(std::move(options)) {
  own_dir_ = options_.dir.empty();
  dir_ = own_dir_ ? test::make_standin_folder("k8s-standin") : options_.dir;
  fs::create_directories(dir_ / "cluster");
  state_ = std::make_unique<State>(dir_ / "cluster");
  for (const char* file : {"core-v1.json", "networking-v1.json", "agents-v1beta1.json"})
    state_->schemas.load(schema_dir() / file);
  state_->ca_pem = pki_.ca_pem();
  state_->tokens[options_.token] = {options_.user, {"system:authenticated"}};
  for (const auto& ns : {std::string("default"), std::string("kube-system"), options_.ns})
    if (!state_->store.get(namespace_type(), "", ns)) seed_namespace(*state_, ns);
  server_ = std::make_unique<TlsServer>(*state_, pki_, options_.port);
  state_->server_url = url();
  write_text(ca_file(), pki_.ca_pem(), fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  write_text(token_file(), options_.token);
  KubeconfigUser user;
  user.token = options_.token;
  write_kubeconfig(kubeconfig(), user);
  kubelet_ = std::thread([this] {
    while (!state_->stopping) {
      {
        std::lock_guard lock(state_->mutex());
        kubelet_tick(*state_);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
}

StandIn::~StandIn() {
  state_->stopping = true;
  kubelet_.join();
  server_.reset();
  {
    std::lock_guard lock(state_->mutex());
    kubelet_kill_all(*state_);
  }
  state_->workers.join_all();
  state_.reset();
  std::error_code ec;
  if (own_dir_) fs::remove_all(dir_, ec);
  else fs::remove_all(dir_ / "cluster", ec);
}

std::string StandIn::url() const { return "https://127.0.0.1:" + std::to_string(server_->port()); }
fs::path StandIn::ca_file() const { return dir_ / "ca.crt"; }
fs::path StandIn::token_file() const { return dir_ / "token"; }
fs::path StandIn::kubeconfig() const { return dir_ / "kubeconfig"; }

fs::path StandIn::write_kubeconfig(const fs::path& path, const KubeconfigUser& user, const std::string& ns) const {
  write_text(path, kubeconfig_yaml(url(), pki_.ca_pem(), ns.empty() ? options_.ns : ns, user));
  return path;
}

CertAndKey StandIn::issue_client_certificate(const std::string& user, const std::vector<std::string>& groups,
                                             long valid_seconds) const {
  return pki_.issue_client(user, groups, valid_seconds);
}

fs::path StandIn::write_service_account(const fs::path& dir, const std::string& ns, const std::string& account) {
  const std::string token = "eyJhbGciOiJSUzI1NiJ9." + random_hex(48) + "." + random_hex(64);
  add_token(token, "system:serviceaccount:" + ns + ":" + account, {"system:serviceaccounts", "system:serviceaccounts:" + ns});
  fs::create_directories(dir);
  write_text(dir / "token", token);
  write_text(dir / "ca.crt", pki_.ca_pem());
  write_text(dir / "namespace", ns);
  return dir;
}

void StandIn::add_token(const std::string& token, const std::string& user, const std::vector<std::string>& groups) {
  std::lock_guard lock(state_->mutex());
  Identity who{user, groups};
  who.groups.push_back("system:authenticated");
  state_->tokens[token] = who;
}

void StandIn::revoke_token(const std::string& token) {
  std::lock_guard lock(state_->mutex());
  state_->tokens.erase(token);
}

void StandIn::add_namespace(const std::string& ns) {
  std::lock_guard lock(state_->mutex());
  if (!state_->store.get(namespace_type(), "", ns)) seed_namespace(*state_, ns);
}

void StandIn::add_service_account(const std::string& ns, const std::string& account) {
  std::lock_guard lock(state_->mutex());
  state_->service_accounts.insert(ns + "/" + account);
}

void StandIn::compact() {
  std::lock_guard lock(state_->mutex());
  state_->store.compact();
}

bool StandIn::evict(const std::string& ns, const std::string& pod, ExecEnding ending) {
  std::lock_guard lock(state_->mutex());
  return kubelet_evict(*state_, ns, pod, ending);
}

int StandIn::calls(const std::string& route) {
  std::lock_guard lock(state_->mutex());
  auto it = state_->calls.find(route);
  return it == state_->calls.end() ? 0 : it->second;
}

std::vector<std::string> StandIn::answer_violations() {
  std::lock_guard lock(state_->mutex());
  return state_->answer_violations;
}

fs::path StandIn::pod_root(const std::string& ns, const std::string& pod) {
  std::lock_guard lock(state_->mutex());
  auto it = state_->pods.find({ns, pod});
  return it == state_->pods.end() ? fs::path() : it->second.root;
}

}  // namespace corral::kubernetes::standin
