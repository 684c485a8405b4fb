// A stand-in Daytona on 127.0.0.1: the control plane (api.json, under /api) served with
// cpp-httplib on one port, and the toolbox (toolbox.openapi3.yaml, under
// /toolbox/{sandboxId}) on another, served with Boost.Beast because its command logs are
// followed over a WebSocket upgrade, which cpp-httplib cannot serve.
#pragma once

#include <httplib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "standin_face.hpp"
#include "state.hpp"

namespace corral::daytona::standin {

// Daytona's JSON error body {statusCode, error, message, path, timestamp}.
std::string error_body(int status, const std::string& message, const std::string& path);
// The JSON of one sandbox as the API returns it; caller holds the mutex.
std::string sandbox_json(const FakeSandbox& sb, const std::string& toolbox_url);

void register_control_plane(httplib::Server& server, State& state);

class ToolboxServer;  // toolbox.cpp

class StandIn : public test::StandinFace<State> {
 public:
  explicit StandIn(std::string api_key = "dtn_standin_secret_key_0123456789abcdef", int api_port = 0,
                   int toolbox_port = 0);
  ~StandIn();

  std::string api_url() const { return api_origin() + "/api"; }
  // "http://127.0.0.1:PORT" of the control plane, for tests that call it themselves.
  std::string api_origin() const { return "http://127.0.0.1:" + std::to_string(api_port_); }
  // IDs of the sandboxes that exist now.
  std::vector<std::string> sandbox_ids();

 private:
  httplib::Server api_;
  std::unique_ptr<ToolboxServer> toolbox_;
  int api_port_ = 0;
  std::thread api_thread_;
};

}  // namespace corral::daytona::standin
