// The plugin's session runner (session_run.hpp) against the stand-in over real HTTP and
// WebSocket, with short watch intervals: the recovery paths the end-to-end tests cannot
// reach in reasonable time.
#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "api.hpp"
#include "corral/sdk/http.hpp"
#include "server.hpp"
#include "session_run.hpp"
#include "settings.hpp"
#include "toolbox.hpp"

using namespace corral;
using namespace corral::daytona;

namespace {

struct Fixture {
  standin::StandIn server;
  Settings settings;
  sdk::http::Client client;
  std::unique_ptr<Api> api;
  std::string sandbox_id, home, toolbox_url;

  Fixture() {
    settings.api_key = server.api_key();
    settings.api_url = server.api_url();
    api = std::make_unique<Api>(client, settings);
    server.with([&](standin::State& st) {
      auto& sb = st.add_sandbox();
      sb.state = "started";
      sandbox_id = sb.id;
      home = standin::State::home_of(sb).string();
      toolbox_url = st.toolbox_url + "/" + sb.id;
      return 0;
    });
  }
  Toolbox toolbox() { return Toolbox(*api, toolbox_url, sandbox_id); }
};

}  // namespace

TEST_CASE("a log stream that never closes is noticed by the watch and the rest is read from the whole log") {
  Fixture f;
  f.server.with([](auto& st) { return st.faults.hold_log_streams = true; });
  Toolbox toolbox = f.toolbox();
  std::string out, err;
  SessionHooks hooks;
  hooks.on_stdout = [&](std::string_view d) { out.append(d); };
  hooks.on_stderr = [&](std::string_view d) { err.append(d); };
  SessionTiming timing{std::chrono::milliseconds(300), std::chrono::milliseconds(300), std::chrono::milliseconds(2000)};
  const auto begin = std::chrono::steady_clock::now();
  int code = run_in_session(toolbox, SessionCommand{{"sh", "-c", "echo out; echo err >&2; printf tail; exit 5"}, f.home, {}, f.home},
                            hooks, "run", timing);
  CHECK(code == 5);
  CHECK(out == "out\ntail");
  CHECK(err == "err\n");
  CHECK(std::chrono::steady_clock::now() - begin < std::chrono::seconds(10));
}

TEST_CASE("binary output comes back exactly, over the stream and from the whole log when the stream stalls") {
  // NULs, prefix look-alikes and invalid UTF-8: lost or misread in Daytona's raw log, and
  // coerced to U+FFFD in its JSON logs answer, so they must travel encoded.
  std::string blob;
  for (int i = 0; i < 256; ++i) blob += static_cast<char>(i);
  const char tail[] = "\x01\x01\x01" "x\x02\x02\x02" "y\0\xc3\n\xff";
  blob.append(tail, sizeof tail - 1);
  for (bool hold : {false, true}) {
    INFO("stream held open: ", hold);
    Fixture f;
    f.server.with([&](auto& st) { return st.faults.hold_log_streams = hold; });
    {
      std::ofstream(f.home + "/blob.bin", std::ios::binary) << blob;
    }
    Toolbox toolbox = f.toolbox();
    std::string out, err;
    SessionHooks hooks;
    hooks.on_stdout = [&](std::string_view d) { out.append(d); };
    hooks.on_stderr = [&](std::string_view d) { err.append(d); };
    SessionTiming timing{std::chrono::milliseconds(300), std::chrono::milliseconds(300),
                         std::chrono::milliseconds(2000)};
    int code = run_in_session(toolbox, SessionCommand{{"sh", "-c", "cat blob.bin; cat blob.bin >&2"}, f.home, {}, f.home},
                              hooks, "run", timing);
    CHECK(code == 0);
    CHECK(out == blob);
    CHECK(err == blob);
  }
}

TEST_CASE("stop deletes the session, which ends the command") {
  Fixture f;
  Toolbox toolbox = f.toolbox();
  auto stop_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  SessionHooks hooks;
  hooks.on_stdout = [](std::string_view) {};
  hooks.on_stderr = [](std::string_view) {};
  hooks.stop = [&] { return std::chrono::steady_clock::now() > stop_at; };
  CHECK_THROWS_WITH_AS(run_in_session(toolbox, SessionCommand{{"sleep", "60"}, f.home, {}, f.home}, hooks, "run"),
                       doctest::Contains("stopped"), Error);
  CHECK(f.server.with([&](auto& st) { return st.sandboxes.at(f.sandbox_id).sessions.size(); }) == 0);
}
