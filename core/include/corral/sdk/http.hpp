// The SDK's HTTP client for providers that speak HTTP (E2B, Daytona, ...): one libcurl
// handle per client (so connections are reused), bounded timeouts for control-plane calls,
// unbounded but idle-guarded streams, cancellation, streamed multipart uploads, and the
// safety rules every provider needs: no redirect to another origin (API keys must not
// follow), plain http only to loopback hosts, and no header value ever in an error.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "corral/json.hpp"
#include "corral/sdk/tls.hpp"
#include "corral/types.hpp"

namespace corral::sdk::http {

// A local file sent as one part of a multipart/form-data body, read from disk as curl
// sends it (never loaded into memory).
struct FilePart {
  std::string field = "file";  // form field name
  std::string path;            // local file to send
  std::string filename;        // filename announced in the part; empty = basename of path
  std::string content_type = "application/octet-stream";
};

// Called with each chunk of a successful (2xx) response body as it arrives. Throwing
// aborts the transfer; the exception reaches the caller of send().
using BodyFn = std::function<void(std::string_view)>;
// Bytes of a transfer moved so far, of `total` (0 = not known).
using TransferFn = std::function<void(std::uint64_t done, std::uint64_t total)>;

struct Response;

struct Request {
  std::string method = "GET";
  std::string url;
  // Header values may be secrets: they are sent, never logged or put into errors.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;                 // sent as is when non-empty (and no file part)
  std::optional<FilePart> file;     // multipart/form-data upload instead of `body`
  long connect_timeout_seconds = 10;
  long timeout_seconds = 60;        // whole request; 0 = none (long streams)
  long idle_timeout_seconds = 0;    // abort when no byte arrives for this long; 0 = none
  BodyFn on_body;                   // stream 2xx bodies here instead of Response::body
  // The most bytes of a 2xx body collected into Response::body (not one streamed to
  // on_body): a longer answer ends the transfer as unexpected_answer, so a server (or a
  // proxy in its place) that sends gigabytes costs no more memory than this. 0: no bound.
  std::size_t max_body_bytes = 0;
  // Called once with the status and headers of a 2xx response before its first body
  // chunk reaches on_body (e.g. to check the content type); throwing aborts the transfer.
  std::function<void(const Response&)> on_headers;
  // Polled about ten times a second; returning true aborts with ErrorCode::cancelled.
  std::function<bool()> cancelled;
  // Names the call in error messages ("E2B create sandbox"); defaults to method + path.
  std::string what;
  // Names the user's setting behind timeout_seconds and idle_timeout_seconds
  // ("--e2b-request-timeout or CORRAL_E2B_REQUEST_TIMEOUT"), so a timeout's message says
  // what to raise; empty when the limits are fixed.
  std::string timeout_setting;
  // For a stream from a sandbox (on_body): what it carries, in the user's words ("command",
  // "download"). A connection that breaks once the answer has begun is then reported by
  // connection_lost() ("the connection to the sandbox was lost mid-command"), not in
  // libcurl's words; empty: like any other transport failure.
  std::string sandbox_stream;
  // The server's CA and the client certificate, when not the system's defaults.
  TlsSettings tls;
  // Told the bytes sent (a file part) or received (on_body) as they move, at most every
  // 1 MiB or 100 ms and at the end, for the user's progress bar (Host::transfer_reporter).
  TransferFn on_transfer;
};

struct Response {
  long status = 0;
  std::string body;                          // error bodies are capped; see send()
  std::map<std::string, std::string> headers;  // lower-case names, last value wins
  int sent = 1;  // how many times send_retrying sent the request for this answer
  // The header `name` (lower-case), or "" when absent.
  std::string header(const std::string& name) const;
  bool ok() const { return status >= 200 && status < 300; }
};

// The ErrorCode an HTTP status stands for: 400 invalid-argument, 401/403 auth, 404/410
// not-found, 408/5xx unavailable, 429 quota, anything else internal.
ErrorCode code_for_status(long status);

// The provider's own explanation in an error body: "message" (or "error" as a string or
// as {"message"}) of a JSON body as sdk::printable() gives it (one line: no newline of the
// server's starts a line that would read as corral's), else a short printable prefix of a
// text body; "" if none.
std::string error_message(std::string_view body);

// An Error for a non-2xx response: "<what>: HTTP <status>: <provider message>".
Error status_error(const Response& response, std::string_view what, std::string hint = {});

// Throws invalid-argument unless `url` is an absolute http(s) URL, and plain http only to
// a loopback host (localhost, 127.0.0.0/8, ::1). `setting` names the option in the error;
// the URL is shown without its user:password part.
void check_url(const std::string& url, std::string_view setting);

// "scheme://host[:port]" of an absolute URL (lower-cased, default port made explicit).
std::string origin_of(const std::string& url);

// Percent-encodes `text` for use in a URL query or path segment.
std::string url_encode(std::string_view text);

// Thrown by Client::send when a connection that was made broke before the whole answer
// came (reset, closed mid-answer, closed with no answer). The server may have acted on the
// request, so only a request that is safe to repeat may be sent again.
class ConnectionBroken : public Error {
 public:
  using Error::Error;
};

// A reusable client; not thread-safe (one per provider instance is the intended use).
class Client {
 public:
  Client();
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Performs `request`. Follows redirects only within the same origin (at most 5).
  // Returns the response for every HTTP status (callers decide what is an error); throws
  // Error for transport failures (unavailable; ConnectionBroken when an open connection
  // broke), timeouts (unavailable, saying which limit), cancellation (cancelled), refused
  // redirects and bad URLs (invalid-argument).
  // A non-2xx body is collected (first 64 KiB) even when `on_body` is set.
  Response send(const Request& request);

  // Sends `body` (JSON text, may be empty) with JSON accept and content type headers (unless
  // the request names its own content type, as a JSON merge patch does).
  Response send_json(Request request);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Whether a request may be sent again after a "not now" answer: reads, deletes and
// setters may; creating a sandbox or starting a command never may (it could run twice).
// `settling` is a call that pauses or stops a sandbox: safe to repeat, and worth it after
// any server error too (5xx but 501 and 505), as a DELETE is: left undone, it costs money.
enum class Retry { idempotent, never, settling };

// Bounds of send_retrying: at most `max_retries` more attempts, each waiting the
// server's Retry-After (in seconds) or 0.5, 1, 2, 4, ... s, never longer than `max_wait`.
struct RetryLimits {
  int max_retries = 4;
  double max_wait_seconds = 10;
};

// True for the answers that say "try again later": 429, 502, 503 and 504.
bool is_retryable_status(long status);
// True when `request` answered `status` is worth sending again: a retryable status, or
// any 5xx but 501 and 505 to a DELETE or a `settling` call (a cleanup left undone leaves
// a sandbox running).
bool is_retryable_answer(const Request& request, long status, Retry retry = Retry::idempotent);

// Seconds to wait before retry `attempt` (0-based) after `response`: its Retry-After
// when that is whole seconds, else the doubling backoff; nullopt when the server asks
// for longer than `limits` allow (then waiting is pointless: report the answer).
std::optional<double> retry_delay(const Response& response, int attempt, const RetryLimits& limits = {});

// Sends `request` as send_json does. An `idempotent` request answered as
// is_retryable_answer says, or whose connection broke (ConnectionBroken), is sent again within `limits`; the
// last answer is returned, or the last ConnectionBroken thrown, so the caller maps it to an
// error. Waits end early, throwing Error(cancelled), when `request.cancelled` says so.
Response send_retrying(Client& client, Request request, Retry retry, const RetryLimits& limits = {});

// An Error(unavailable) for an answer of the provider that is not what its API defines
// (not JSON, a field of the wrong type, ...): "<what>: the provider sent an unexpected
// answer: <detail>". It is never the user's mistake, so never invalid-argument.
Error unexpected_answer(std::string_view what, std::string_view detail);

// An Error(unavailable) for a stream from a sandbox whose connection broke before it ended:
// "<what>: the connection to the sandbox was lost mid-<stream> (<detail>)", with what to do.
// Every provider reports a broken command or download stream with it, so they all say the
// same thing.
Error connection_lost(std::string_view what, std::string_view stream, std::string_view detail);

// An Error(quota) for a 429 answer: "<what>: <limit> was reached (HTTP 429[: <detail>])",
// then whether corral already retried it (how often, or why not: a call that is never
// sent twice, or a Retry-After longer than corral waits), with the hint: wait and rerun,
// lower --max-parallel for a fan-out, then `advice` (the provider's own, e.g. whom to ask
// for a higher limit). `limit` names the provider's limit ("Daytona's rate limit");
// `detail` is the provider's explanation, or empty when it only repeats the status.
Error rate_limited(const Response& response, std::string_view what, std::string_view limit, std::string_view detail,
                   std::string_view advice);

// Parses a response body as JSON; a body that is not JSON is unexpected_answer().
json::Document parse_body(const Response& response, std::string_view what);

}  // namespace corral::sdk::http
