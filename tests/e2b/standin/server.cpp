#include "server.hpp"

#include "standin_http.hpp"
#include "tcp_reset.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>


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

StandIn::StandIn(std::string api_key, int api_port, int envd_port) : StandinFace("e2b-standin", std::move(api_key)) {
  register_control_plane(api_, state_);
  register_envd(envd_, state_);
  api_port_ = test::bind_loopback(api_, api_port);
  envd_port_ = test::bind_loopback(envd_, envd_port);
  if (api_port_ <= 0 || envd_port_ <= 0) throw std::runtime_error("stand-in E2B cannot bind its ports");
  api_thread_ = std::thread([this] { api_.listen_after_bind(); });
  envd_thread_ = std::thread([this] { envd_.listen_after_bind(); });
  while (!api_.is_running() || !envd_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

StandIn::~StandIn() {
  {
    std::lock_guard lock(state_.mutex());
    for (const auto& id : test::ids_of(state_.sandboxes)) state_.remove(id);  // kills whatever still runs
    state_.release();  // held calls end, so the servers can stop
  }
  api_.stop();
  envd_.stop();
  if (api_thread_.joinable()) api_thread_.join();
  if (envd_thread_.joinable()) envd_thread_.join();
  state_.drains.join_all();  // their processes were killed above
}

std::vector<std::string> StandIn::sandbox_ids() {
  return with([](State& s) {
    s.expire();
    return test::ids_of(s.sandboxes);
  });
}

}  // namespace corral::e2b::standin
