#include "server.hpp"
#include "tcp_reset.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <stdlib.h>

#include <cstdio>
#include <stdexcept>

namespace corral::e2b::standin {

void http_error(httplib::Response& res, int status, const std::string& message) {
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::UTF8<>, rapidjson::MemoryPoolAllocator<>> w(b);
  w.StartObject();
  w.Key("code");
  w.Int(status);
  w.Key("message");
  w.String(message.c_str());
  w.EndObject();
  res.status = status;
  res.set_content(b.GetString(), "application/json");
}

void reset_connection(int local_port, int peer_port) {
  // Not thrown: handlers run inside cpp-httplib. The tests see the FIN that follows.
  if (!corral::test::reset_tcp_connection(local_port, peer_port))
    std::fprintf(stderr, "stand-in E2B: could not reset a connection\n");
}

namespace {

std::filesystem::path make_root() {
  std::string base = (std::filesystem::temp_directory_path() / "e2b-standin-XXXXXX").string();
  if (!mkdtemp(base.data())) throw std::runtime_error("mkdtemp failed");
  return base;
}

int bind(httplib::Server& server, int port) {
  // Like the Go servers it stands in for (net/http sets TCP_NODELAY on every connection):
  // without it a response written in two parts waits out the client's delayed ACK, 40 ms.
  server.set_tcp_nodelay(true);
  if (port == 0) return server.bind_to_any_port("127.0.0.1");
  return server.bind_to_port("127.0.0.1", port) ? port : -1;
}

}  // namespace

StandIn::StandIn(std::string api_key, int api_port, int envd_port)
    : root_(make_root()), state_(root_, std::move(api_key)) {
  register_control_plane(api_, state_);
  register_envd(envd_, state_);
  api_port_ = bind(api_, api_port);
  envd_port_ = bind(envd_, envd_port);
  if (api_port_ <= 0 || envd_port_ <= 0) throw std::runtime_error("stand-in E2B cannot bind its ports");
  api_thread_ = std::thread([this] { api_.listen_after_bind(); });
  envd_thread_ = std::thread([this] { envd_.listen_after_bind(); });
  while (!api_.is_running() || !envd_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

StandIn::~StandIn() {
  {
    std::lock_guard lock(state_.mutex());
    std::vector<std::string> ids;
    for (const auto& [id, sb] : state_.sandboxes) ids.push_back(id);
    for (const auto& id : ids) state_.remove(id);  // kills whatever still runs
    state_.release();  // held calls end, so the servers can stop
  }
  api_.stop();
  envd_.stop();
  if (api_thread_.joinable()) api_thread_.join();
  if (envd_thread_.joinable()) envd_thread_.join();
  std::vector<std::thread> drains;
  {
    std::lock_guard lock(state_.mutex());
    drains.swap(state_.drains);
  }
  for (auto& d : drains) d.join();  // their processes were killed above
  std::error_code ec;
  std::filesystem::remove_all(root_, ec);
}

std::vector<std::string> StandIn::sandbox_ids() {
  std::lock_guard lock(state_.mutex());
  state_.expire();
  std::vector<std::string> out;
  for (const auto& [id, sb] : state_.sandboxes) out.push_back(id);
  return out;
}

int StandIn::calls(const std::string& route) {
  std::lock_guard lock(state_.mutex());
  auto it = state_.calls.find(route);
  return it == state_.calls.end() ? 0 : it->second;
}

}  // namespace corral::e2b::standin
