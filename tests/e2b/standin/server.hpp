// A stand-in E2B on 127.0.0.1: the control plane (openapi.yml) on one port and envd
// (envd.yaml, process.proto over Connect) on another, routed by the E2b-Sandbox-Id header
// exactly as E2B_SANDBOX_URL makes the official SDKs send it.
#pragma once

#include <httplib.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "standin_face.hpp"
#include "state.hpp"

namespace corral::e2b::standin {

// Answers with `status` and E2B's JSON error body {"code", "message"}.
void http_error(httplib::Response& res, int status, const std::string& message);

// Resets the connection that carries a request, whose ports are `local_port` (ours) and
// `peer_port`: a TCP RST, no FIN first (corral::test::reset_tcp_connection).
void reset_connection(int local_port, int peer_port);

// Route handlers, one file each.
void register_control_plane(httplib::Server& server, State& state);
void register_envd(httplib::Server& server, State& state);

class StandIn : public test::StandinFace<State> {
 public:
  // Ports 0 pick free ones. Sandbox folders live under a fresh temp folder.
  explicit StandIn(std::string api_key = "e2b_standin_secret_key_0123456789", int api_port = 0, int envd_port = 0);
  ~StandIn();

  std::string api_url() const { return "http://127.0.0.1:" + std::to_string(api_port_); }
  std::string sandbox_url() const { return "http://127.0.0.1:" + std::to_string(envd_port_); }
  // IDs of the sandboxes alive now (expired ones removed first).
  std::vector<std::string> sandbox_ids();

 private:
  httplib::Server api_;
  httplib::Server envd_;
  int api_port_ = 0;
  int envd_port_ = 0;
  std::thread api_thread_;
  std::thread envd_thread_;
};

}  // namespace corral::e2b::standin
