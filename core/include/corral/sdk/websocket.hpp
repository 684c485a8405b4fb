// The SDK's WebSocket client for providers that stream over a WebSocket upgrade (Daytona's
// log follow, Kubernetes exec, ...): Boost.Beast over Asio, TLS through OpenSSL with peer
// and host-name verification. It follows one server stream to its end, sending what the
// caller hands it (a command's stdin) as binary messages alongside. The safety rules of the HTTP client hold here
// too: plain ws only to loopback hosts, no header value ever in an error.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "corral/sdk/tls.hpp"
#include "corral/types.hpp"

namespace corral::sdk::websocket {

struct Request {
  // http(s):// or ws(s):// URL; http maps to ws and https to wss.
  std::string url;
  // Sent with the upgrade request. Values may be secrets: never logged or put in errors.
  std::vector<std::pair<std::string, std::string>> headers;
  long connect_timeout_seconds = 10;  // TCP, TLS and the upgrade together
  long idle_timeout_seconds = 0;      // no message for this long ends with unavailable; 0 = none
  // Polled about ten times a second; returning true closes the connection and throws
  // Error(cancelled).
  std::function<bool()> cancelled;
  // Names the stream in error messages ("Daytona follow the command's output").
  std::string what;
  // The server's CA and the client certificate, when not the system's defaults.
  TlsSettings tls;
  // Subprotocols offered, most preferred first (Sec-WebSocket-Protocol); empty: none.
  std::vector<std::string> subprotocols;
  // Called once the upgrade succeeded, with the subprotocol the server chose ("" if none).
  std::function<void(const std::string& subprotocol)> on_open;
  // Asked for the next binary message to send once the upgrade succeeded and after each is
  // written; nullopt: nothing more to send. Unset: nothing is sent.
  std::function<std::optional<std::string>()> next_message;
  // For messages that come later (a command's stdin pumped from the user's input on
  // another thread): called once the upgrade succeeded with `wake`, which any thread may
  // call to have next_message asked again after it said nullopt. A wake after follow()
  // returned does nothing.
  std::function<void(std::function<void()> wake)> on_wake;
  // Hand each message to on_message whole (for protocols whose first byte frames it, as
  // Kubernetes' channels do), refusing one above 16 MiB; false: in pieces as they arrive.
  bool whole_messages = false;
  // With an idle timeout: ping the server once the stream has been quiet for half of it, so
  // that its pong keeps a quiet stream (a command that prints nothing for a while) open and
  // only a dead connection runs into the timeout; messages of ours going out count as life
  // too (an upload the server answers only at its end). For servers that send no pings of
  // their own (Kubernetes' API server leaves them to the client).
  bool keepalive_pings = false;
};

// Called with the data of each message as it arrives, a large message in several pieces
// (at most 64 KiB each); `binary` is false for text frames. Throwing ends
// the stream; the exception reaches the caller of follow().
using MessageFn = std::function<void(std::string_view data, bool binary)>;

// How a followed stream ended.
struct Ending {
  // True when the server sent a close frame (any code); false when the connection broke
  // without one (a dropped stream).
  bool closed = false;
  int close_code = 0;
  std::string close_reason;
};

// Connects, upgrades and passes every message's data to `on_message` until the stream ends.
// Throws Error: invalid-argument for a bad URL; the HTTP status's code (see
// http::code_for_status) when the server declines the upgrade, with its message; cancelled;
// unavailable for connection, TLS and idle failures before or while following. A broken
// connection after the upgrade is not an error: it is reported as Ending{closed = false}.
Ending follow(const Request& request, const MessageFn& on_message);

}  // namespace corral::sdk::websocket
