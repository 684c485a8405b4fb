#include "server.hpp"

#include <pthread.h>
#include <signal.h>

#include <stdexcept>

#include "standin_http.hpp"
#include "toolbox.hpp"

namespace corral::daytona::standin {

StandIn::StandIn(std::string api_key, int api_port, int toolbox_port)
    : StandinFace("daytona-standin", std::move(api_key)) {
  register_control_plane(api_, state_);
  api_port_ = test::bind_loopback(api_, api_port);
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
    for (const auto& id : test::ids_of(state_.sandboxes)) state_.remove(id);  // kills whatever still runs
  }
  api_.stop();
  if (api_thread_.joinable()) api_thread_.join();
  toolbox_.reset();
  state_.workers.join_all();
}

std::vector<std::string> StandIn::sandbox_ids() {
  return with([](State& s) { return test::ids_of(s.sandboxes); });
}

}  // namespace corral::daytona::standin
