// The SDK's WebSocket client (corral/sdk/websocket.hpp) against the stand-in Daytona's
// log follow: a normal close, a stream that breaks, a declined upgrade, cancellation and
// the URL rules.
#include <doctest/doctest.h>

#include <chrono>

#include "corral/json.hpp"
#include "corral/sdk/http.hpp"
#include "corral/sdk/websocket.hpp"
#include "server.hpp"

using namespace corral;
namespace ws = corral::sdk::websocket;
namespace http = corral::sdk::http;

namespace {

// A started sandbox with a session running `command`; returns the toolbox logs URL.
struct Running {
  std::string logs_url;
  std::vector<std::pair<std::string, std::string>> headers;
};

Running start(daytona::standin::StandIn& server, const std::string& command) {
  return server.with([&](daytona::standin::State& st) {
    auto& sb = st.add_sandbox();
    sb.state = "started";
    auto& session = sb.sessions["s"];
    session.id = "s";
    auto cmd = st.start_command(sb, session, command);
    Running r;
    r.logs_url = st.toolbox_url + "/" + sb.id + "/process/session/s/command/" + cmd->id + "/logs?follow=true";
    r.headers = {{"Authorization", "Bearer " + st.api_key()}, {"X-Daytona-Split-Output", "true"}};
    return r;
  });
}

}  // namespace

TEST_CASE("follow delivers every message and reports the server's normal close") {
  daytona::standin::StandIn server;
  Running r = start(server, "echo one; sleep 0.3; echo two >&2");
  ws::Request req{r.logs_url, r.headers, 5, 0, {}, "follow"};
  std::string got;
  auto begin = std::chrono::steady_clock::now();
  ws::Ending end = ws::follow(req, [&](std::string_view d, bool binary) {
    CHECK(binary);
    got.append(d);
  });
  CHECK(end.closed);
  CHECK(end.close_code == 1000);
  CHECK(got == std::string("\x01\x01\x01one\n\x02\x02\x02two\n"));
  CHECK(std::chrono::steady_clock::now() - begin < std::chrono::seconds(5));
}

TEST_CASE("without the split header the stream is combined, prefixes stripped") {
  daytona::standin::StandIn server;
  Running r = start(server, "echo one; echo two >&2");
  r.headers.pop_back();
  std::string got;
  ws::Ending end = ws::follow(ws::Request{r.logs_url, r.headers, 5, 0, {}, "follow"},
                              [&](std::string_view d, bool) { got.append(d); });
  CHECK(end.closed);
  CHECK((got == "one\ntwo\n" || got == "two\none\n"));
}

TEST_CASE("a connection that breaks without a close frame is reported, not thrown") {
  daytona::standin::StandIn server;
  server.with([](auto& st) { return st.faults.drop_log_streams = 1; });
  Running r = start(server, "echo one; sleep 1; echo two");
  std::string got;
  ws::Ending end = ws::follow(ws::Request{r.logs_url, r.headers, 5, 0, {}, "follow"},
                              [&](std::string_view d, bool) { got.append(d); });
  CHECK_FALSE(end.closed);
  CHECK(got == std::string("\x01\x01\x01one\n"));
}

TEST_CASE("a declined upgrade is an error with the HTTP status's code and the server's message") {
  daytona::standin::StandIn server;
  Running r = start(server, "true");
  auto bad_key = r.headers;
  bad_key[0].second = "Bearer wrong";
  try {
    ws::follow(ws::Request{r.logs_url, bad_key, 5, 0, {}, "follow the log"}, [](std::string_view, bool) {});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::auth);
    CHECK(std::string(e.what()).find("follow the log: HTTP 401") != std::string::npos);
    CHECK(std::string(e.what()).find("wrong") == std::string::npos);  // no header value in errors
  }
  std::string missing = r.logs_url;
  missing.replace(missing.find("/command/") + 9, 4, "nope");
  try {
    ws::follow(ws::Request{missing, r.headers, 5, 0, {}, "follow"}, [](std::string_view, bool) {});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::not_found);
  }
}

TEST_CASE("cancellation ends a quiet stream promptly; idle limits and URL rules hold") {
  daytona::standin::StandIn server;
  Running r = start(server, "sleep 30");
  auto begin = std::chrono::steady_clock::now();
  auto cancel_at = begin + std::chrono::milliseconds(300);
  ws::Request req{r.logs_url, r.headers, 5, 0, [&] { return std::chrono::steady_clock::now() > cancel_at; }, "follow"};
  CHECK_THROWS_WITH_AS(ws::follow(req, [](std::string_view, bool) {}), doctest::Contains("cancelled"), Error);
  CHECK(std::chrono::steady_clock::now() - begin < std::chrono::seconds(2));

  ws::Request idle{r.logs_url, r.headers, 5, 1, {}, "follow"};
  begin = std::chrono::steady_clock::now();
  try {
    ws::follow(idle, [](std::string_view, bool) {});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::unavailable);
    CHECK(std::string(e.what()).find("stalled") != std::string::npos);
  }
  CHECK(std::chrono::steady_clock::now() - begin < std::chrono::seconds(4));

  CHECK_THROWS_AS(ws::follow(ws::Request{"ws://example.com/x", {}, 1, 0, {}, "w"}, [](std::string_view, bool) {}), Error);
  try {
    ws::follow(ws::Request{"http://127.0.0.1:1/x", {}, 2, 0, {}, "w"}, [](std::string_view, bool) {});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::unavailable);
  }
}
