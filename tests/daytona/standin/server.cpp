#include "server.hpp"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include <stdexcept>

#include "toolbox.hpp"

namespace corral::daytona::standin {
namespace {

std::filesystem::path make_root() {
  std::string base = (std::filesystem::temp_directory_path() / "daytona-standin-XXXXXX").string();
  if (!mkdtemp(base.data())) throw std::runtime_error("mkdtemp failed");
  return base;
}

}  // namespace

StandIn::StandIn(std::string api_key, int api_port, int toolbox_port)
    : root_(make_root()), state_(root_, std::move(api_key)) {
  register_control_plane(api_, state_);
  // As Go's net/http does for the real API: no Nagle delay on a response written in parts.
  api_.set_tcp_nodelay(true);
  api_port_ = api_port == 0 ? api_.bind_to_any_port("127.0.0.1") : (api_.bind_to_port("127.0.0.1", api_port) ? api_port : -1);
  if (api_port_ <= 0) throw std::runtime_error("stand-in Daytona cannot bind its API port");
  toolbox_ = std::make_unique<ToolboxServer>(state_, toolbox_port);
  state_.toolbox_url = "http://127.0.0.1:" + std::to_string(toolbox_->port()) + "/toolbox";
  api_thread_ = std::thread([this] {
    // A client that gave up (a timeout, corral killed) may be gone when a slow or held
    // answer is written; its worker threads, started from here, must not die of SIGPIPE.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    api_.listen_after_bind();
  });
  while (!api_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

StandIn::~StandIn() {
  state_.stopping = true;
  {
    std::lock_guard lock(state_.mutex());
    std::vector<std::string> ids;
    for (const auto& [id, sb] : state_.sandboxes) ids.push_back(id);
    for (const auto& id : ids) state_.remove(id);  // kills whatever still runs
  }
  api_.stop();
  if (api_thread_.joinable()) api_thread_.join();
  toolbox_.reset();
  state_.join_workers();
  std::error_code ec;
  std::filesystem::remove_all(root_, ec);
}

std::vector<std::string> StandIn::sandbox_ids() {
  std::lock_guard lock(state_.mutex());
  std::vector<std::string> out;
  for (const auto& [id, sb] : state_.sandboxes) out.push_back(id);
  return out;
}

int StandIn::calls(const std::string& route) {
  std::lock_guard lock(state_.mutex());
  auto it = state_.calls.find(route);
  return it == state_.calls.end() ? 0 : it->second;
}

}  // namespace corral::daytona::standin
