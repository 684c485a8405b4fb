// The SDK's HTTP client against a real local server: statuses, streaming, idle and total
// timeouts, cancellation, redirects, multipart upload and where secrets may appear; and
// the remote kit's API client over it.
#include <doctest/doctest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "cli.hpp"
#include "corral/sdk/http.hpp"
#include "corral/sdk/remote/api_client.hpp"
#include "fake_host.hpp"

using namespace corral;
namespace http = corral::sdk::http;
using Clock = std::chrono::steady_clock;

namespace {

const std::string kSecret = "sk-very-secret-value-123";

// A local server on a free port, stopped at scope end.
struct LocalServer {
  httplib::Server server;
  int port = 0;
  std::thread thread;
  std::atomic<int> hits{0};
  LocalServer() {
    server.set_logger([this](const httplib::Request&, const httplib::Response&) { ++hits; });
  }
  void start() {
    port = server.bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { server.listen_after_bind(); });
    while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~LocalServer() {
    server.stop();
    if (thread.joinable()) thread.join();
  }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port) + path; }
};

void install_routes(LocalServer& s) {
  s.server.Get("/json", [](const httplib::Request& req, httplib::Response& res) {
    res.set_header("X-Next-Token", "abc");
    res.set_content("{\"accept\":\"" + req.get_header_value("Accept") + "\"}", "application/json");
  });
  s.server.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
    res.set_content(req.method + ":" + req.body, "text/plain");
  });
  s.server.Get(R"(/status/(\d+))", [](const httplib::Request& req, httplib::Response& res) {
    res.status = std::stoi(req.matches[1]);
    res.set_content(R"({"code":)" + std::string(req.matches[1]) + R"(,"message":"the reason"})", "application/json");
  });
  s.server.Get("/text-error", [](const httplib::Request&, httplib::Response& res) {
    res.status = 502;
    res.set_content("upstream went away\nmore", "text/plain");
  });
  s.server.Get("/stream", [](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("application/octet-stream", [](size_t offset, httplib::DataSink& sink) {
      if (offset >= 100 * 1000) {
        sink.done();
        return true;
      }
      std::string chunk(1000, static_cast<char>('a' + (offset / 1000) % 26));
      return sink.write(chunk.data(), chunk.size());
    });
  });
  s.server.Get("/stall", [](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("text/plain", [](size_t offset, httplib::DataSink& sink) {
      if (offset == 0) return sink.write("x", 1);
      std::this_thread::sleep_for(std::chrono::milliseconds(3000));
      sink.done();
      return true;
    });
  });
  s.server.Get("/slow", [](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    res.set_content("late", "text/plain");
  });
  s.server.Post("/upload", [](const httplib::Request& req, httplib::Response& res) {
    auto it = req.files.find("file");
    if (it == req.files.end()) {
      res.status = 400;
      return;
    }
    res.set_content(it->second.filename + ":" + std::to_string(it->second.content.size()) + ":" +
                        std::to_string(std::count(it->second.content.begin(), it->second.content.end(), 'q')),
                    "text/plain");
  });
}

}  // namespace

TEST_CASE("JSON calls: headers in, lower-cased headers out") {
  LocalServer s;
  install_routes(s);
  s.start();
  http::Client c;
  http::Request r;
  r.url = s.url("/json");
  http::Response res = c.send_json(r);
  CHECK(res.status == 200);
  CHECK(res.header("X-Next-Token") == "abc");
  CHECK(res.headers.count("x-next-token") == 1);
  CHECK(json::get_string(http::parse_body(res, "t"), "accept") == "application/json");

  http::Request post;
  post.method = "POST";
  post.url = s.url("/echo");
  post.body = "{\"a\":1}";
  CHECK(c.send(post).body == "POST:{\"a\":1}");
}

TEST_CASE("statuses map to error codes with the provider's message") {
  LocalServer s;
  install_routes(s);
  s.start();
  http::Client c;
  const std::pair<int, ErrorCode> cases[] = {{400, ErrorCode::invalid_argument}, {401, ErrorCode::auth},
                                             {403, ErrorCode::auth},             {404, ErrorCode::not_found},
                                             {429, ErrorCode::quota},            {500, ErrorCode::unavailable},
                                             {503, ErrorCode::unavailable},      {418, ErrorCode::internal}};
  for (auto [status, code] : cases) {
    http::Request r;
    r.url = s.url("/status/" + std::to_string(status));
    r.headers.emplace_back("X-API-Key", kSecret);
    http::Response res = c.send(r);
    CHECK(res.status == status);
    Error e = http::status_error(res, "probe");
    CHECK(e.code() == code);
    CHECK(std::string(e.what()) == "probe: HTTP " + std::to_string(status) + ": the reason");
    CHECK(std::string(e.what()).find(kSecret) == std::string::npos);
  }
  http::Request r;
  r.url = s.url("/text-error");
  CHECK(http::error_message(c.send(r).body) == "upstream went away");
  CHECK(http::error_message(R"({"error":{"code":"x","message":"nested"}})") == "nested");
  CHECK(http::error_message(R"({"error":"flat"})") == "flat");
  CHECK(http::error_message("<html><body>502</body></html>").empty());
}

TEST_CASE("a provider's message is quoted on one line: its newlines and control characters written out") {
  CHECK(http::error_message(R"({"message":"denied\ncorral: the command succeeded"})") ==
        "denied\\x0acorral: the command succeeded");
  CHECK(http::error_message(R"({"error":{"message":"a\tb\r\u001b[31m"}})") == "a\\x09b\\x0d\\x1b[31m");
  CHECK(http::error_message(R"({"message":"caf\u00e9 \u007f"})") == "caf\xc3\xa9 \\x7f");  // UTF-8 stays, DEL does not
}

TEST_CASE("a streamed body arrives in order and in pieces; error bodies are collected instead") {
  LocalServer s;
  install_routes(s);
  s.start();
  http::Client c;
  http::Request r;
  r.url = s.url("/stream");
  r.timeout_seconds = 0;
  size_t total = 0, calls = 0;
  bool ordered = true;
  r.on_body = [&](std::string_view chunk) {
    for (char ch : chunk) {
      ordered = ordered && ch == static_cast<char>('a' + (total / 1000) % 26);
      ++total;
    }
    ++calls;
  };
  http::Response res = c.send(r);
  CHECK(res.ok());
  CHECK(total == 100000);
  CHECK(ordered);
  CHECK(res.body.empty());

  http::Request bad = r;
  bad.url = s.url("/status/404");
  bool called = false;
  bad.on_body = [&](std::string_view) { called = true; };
  http::Response nf = c.send(bad);
  CHECK_FALSE(called);
  CHECK(nf.status == 404);
  CHECK(http::error_message(nf.body) == "the reason");
}

TEST_CASE("an exception from the body callback stops the transfer and reaches the caller") {
  LocalServer s;
  install_routes(s);
  s.start();
  http::Client c;
  http::Request r;
  r.url = s.url("/stream");
  r.on_body = [](std::string_view) { throw Error(ErrorCode::unavailable, "decoder says no"); };
  CHECK_THROWS_WITH_AS(c.send(r), "decoder says no", Error);
}

TEST_CASE("idle guard, total timeout and cancellation end a request promptly") {
  LocalServer s;
  install_routes(s);
  s.start();
  http::Client c;
  SUBCASE("idle") {
    http::Request r;
    r.url = s.url("/stall");
    r.timeout_seconds = 0;
    r.idle_timeout_seconds = 1;
    auto t0 = Clock::now();
    try {
      c.send(r);
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::unavailable);
      CHECK(std::string(e.what()).find("no data") != std::string::npos);
    }
    CHECK(Clock::now() - t0 < std::chrono::milliseconds(2500));
  }
  SUBCASE("total") {
    http::Request r;
    r.url = s.url("/slow");
    r.timeout_seconds = 1;
    try {
      c.send(r);
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::unavailable);
      CHECK(std::string(e.what()).find("within 1 s") != std::string::npos);
    }
  }
  SUBCASE("total, on a reused connection, with the setting behind the limit") {
    http::Request warm;
    warm.url = s.url("/json");
    REQUIRE(c.send(warm).status == 200);  // the connection the slow call reuses
    http::Request r;
    r.url = s.url("/slow");
    r.timeout_seconds = 1;
    r.timeout_setting = "--x-request-timeout";
    try {
      c.send(r);
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::unavailable);
      CHECK_MESSAGE(std::string(e.what()).find("no complete answer") != std::string::npos, e.what());
      CHECK(std::string(e.what()).find("within 1 s (--x-request-timeout)") != std::string::npos);
      CHECK(e.hint().find("raise that limit") != std::string::npos);
    }
  }
  SUBCASE("cancel") {
    http::Request r;
    r.url = s.url("/stall");
    r.timeout_seconds = 0;
    auto t0 = Clock::now();
    r.cancelled = [&] { return Clock::now() - t0 > std::chrono::milliseconds(200); };
    try {
      c.send(r);
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::cancelled);
    }
    CHECK(Clock::now() - t0 < std::chrono::milliseconds(1000));
  }
  // The client stays usable after an aborted transfer.
  http::Request ok;
  ok.url = s.url("/json");
  CHECK(c.send(ok).status == 200);
}

TEST_CASE("transport failures name the origin, never a header value") {
  http::Client c;
  LocalServer closed;  // bound, then stopped: nothing listens on the port any more
  closed.start();
  std::string url = closed.url("/x");
  closed.server.stop();
  closed.thread.join();
  http::Request r;
  r.url = url;
  r.headers.emplace_back("Authorization", "Bearer " + kSecret);
  try {
    c.send(r);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::unavailable);
    CHECK(std::string(e.what()).find("127.0.0.1") != std::string::npos);
    CHECK(std::string(e.what()).find(kSecret) == std::string::npos);
  }
}

TEST_CASE("redirects: same origin followed, another origin refused before sending anything") {
  LocalServer s, other;
  install_routes(s);
  install_routes(other);
  other.start();
  s.server.Get("/same", [](const httplib::Request&, httplib::Response& res) { res.set_redirect("/json", 302); });
  s.server.Post("/see-other", [](const httplib::Request&, httplib::Response& res) { res.set_redirect("/json", 303); });
  std::string away = other.url("/json");
  s.server.Get("/away", [away](const httplib::Request&, httplib::Response& res) { res.set_redirect(away, 307); });
  s.start();
  http::Client c;
  http::Request same;
  same.url = s.url("/same");
  CHECK(c.send(same).status == 200);
  http::Request see;
  see.method = "POST";
  see.body = "x";
  see.url = s.url("/see-other");
  CHECK(c.send(see).status == 200);  // became a GET of /json

  http::Request r;
  r.url = s.url("/away");
  r.headers.emplace_back("X-API-Key", kSecret);
  int before = other.hits;
  try {
    c.send(r);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("refused a redirect") != std::string::npos);
    CHECK(std::string(e.what()).find(kSecret) == std::string::npos);
  }
  CHECK(other.hits == before);
}

TEST_CASE("a body that is not JSON is the provider's unexpected answer, not a usage error") {
  http::Response res;
  res.status = 200;
  res.body = "<html>proxy</html>";
  try {
    http::parse_body(res, "E2B get sandbox");
    FAIL("parsed HTML");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::unavailable);
    CHECK(std::string(e.what()).find("E2B get sandbox: the provider sent an unexpected answer") == 0);
    CHECK_FALSE(e.hint().empty());
  }
}

TEST_CASE("an answer past max_body_bytes is the provider's unexpected answer, and the client stays usable") {
  LocalServer s;
  s.server.Get("/big", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(3 << 20, ' ') + "{}", "application/json");
  });
  s.start();
  http::Client c;
  http::Request r;
  r.url = s.url("/big");
  r.what = "E2B list sandboxes";
  r.max_body_bytes = 1 << 20;
  try {
    c.send(r);
    FAIL("a 3 MiB answer was read under a 1 MiB bound");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::unavailable);
    CHECK(std::string(e.what()) ==
          "E2B list sandboxes: the provider sent an unexpected answer: the answer is larger than 1 MiB, the most "
          "corral reads of one");
  }
  r.max_body_bytes = 4 << 20;
  CHECK(c.send(r).body.size() == (3u << 20) + 2);
}

TEST_CASE("plain http only to loopback hosts") {
  CHECK_NOTHROW(http::check_url("http://127.0.0.1:8080/x", "URL"));
  CHECK_NOTHROW(http::check_url("http://localhost", "URL"));
  CHECK_NOTHROW(http::check_url("http://[::1]:9/", "URL"));
  CHECK_NOTHROW(http::check_url("https://api.e2b.app", "URL"));
  CHECK_THROWS_AS(http::check_url("http://api.e2b.app", "URL"), Error);
  CHECK_THROWS_AS(http::check_url("http://127.evil.example.com", "URL"), Error);
  CHECK_THROWS_AS(http::check_url("ftp://127.0.0.1/", "URL"), Error);
  CHECK_THROWS_AS(http::check_url("not a url", "URL"), Error);
  http::Client c;
  http::Request r;
  r.url = "http://example.com/";
  CHECK_THROWS_AS(c.send(r), Error);
  CHECK(http::origin_of("HTTPS://Api.E2B.app/x") == "https://api.e2b.app:443");
  // A URL with credentials in it is named in the error without them.
  try {
    http::check_url("ftp://alice:hunter2secret@127.0.0.1/path", "E2B_API_URL");
    FAIL("accepted ftp");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("hunter2secret") == std::string::npos);
    CHECK(std::string(e.what()).find("alice") == std::string::npos);
    CHECK(std::string(e.what()).find("127.0.0.1/path") != std::string::npos);
  }
  CHECK(http::url_encode("a b&c=d/é") == "a%20b%26c%3Dd%2F%C3%A9");
}

TEST_CASE("a multipart upload streams a local file") {
  LocalServer s;
  install_routes(s);
  s.start();
  corral::test::TempDir dir;
  std::string content(5 * 1024 * 1024, 'q');
  auto path = dir.write("big.bin", content);
  http::Client c;
  http::Request r;
  r.method = "POST";
  r.url = s.url("/upload");
  r.file = http::FilePart{"file", path.string(), "archive.tar.gz", "application/octet-stream"};
  http::Response res = c.send(r);
  CHECK(res.status == 200);
  CHECK(res.body == "archive.tar.gz:5242880:5242880");
}

TEST_CASE("send_retrying: a busy answer to an idempotent call is retried within bounds, then returned") {
  // Counted in the handlers: the server's logger runs after the answer is sent, so a
  // count taken there may lag behind the client.
  std::atomic<int> served{0};
  std::atomic<int> busy_left{2};
  LocalServer s;  // after what its handlers capture: it stops (joining them) before those die
  s.server.Get("/busy", [&](const httplib::Request&, httplib::Response& res) {
    ++served;
    if (busy_left-- > 0) {
      res.status = 503;
      res.set_header("Retry-After", "0");
      res.set_content("{\"message\":\"try later\"}", "application/json");
      return;
    }
    res.set_content("{}", "application/json");
  });
  s.server.Get("/always-busy", [&](const httplib::Request&, httplib::Response& res) {
    ++served;
    res.status = 429;
    res.set_header("Retry-After", "0");
  });
  s.server.Get("/come-back-tomorrow", [&](const httplib::Request&, httplib::Response& res) {
    ++served;
    res.status = 429;
    res.set_header("Retry-After", "86400");
  });
  s.server.Get("/slow-down", [&](const httplib::Request&, httplib::Response& res) {
    ++served;
    res.status = 503;
    res.set_header("Retry-After", "5");
  });
  s.start();
  http::Client client;
  auto request = [&](const std::string& path) {
    http::Request r;
    r.url = s.url(path);
    r.what = "test call";
    return r;
  };

  SUBCASE("retried until it succeeds") {
    CHECK(http::send_retrying(client, request("/busy"), http::Retry::idempotent).status == 200);
    CHECK(served == 3);
  }
  SUBCASE("never retried when repeating could run something twice") {
    CHECK(http::send_retrying(client, request("/busy"), http::Retry::never).status == 503);
    CHECK(served == 1);
  }
  SUBCASE("at most max_retries more attempts, then the last answer") {
    CHECK(http::send_retrying(client, request("/always-busy"), http::Retry::idempotent, {.max_retries = 3}).status ==
          429);
    CHECK(served == 4);
  }
  SUBCASE("a Retry-After longer than the cap is not waited for") {
    auto start = std::chrono::steady_clock::now();
    CHECK(http::send_retrying(client, request("/come-back-tomorrow"), http::Retry::idempotent).status == 429);
    CHECK(served == 1);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  }
  SUBCASE("Ctrl-C ends the wait between attempts") {
    http::Request r = request("/slow-down");
    auto start = std::chrono::steady_clock::now();
    r.cancelled = [start] { return std::chrono::steady_clock::now() - start > std::chrono::milliseconds(200); };
    try {
      http::send_retrying(client, r, http::Retry::idempotent);
      FAIL("not cancelled");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::cancelled);
    }
    CHECK(served == 1);
  }
}

TEST_CASE("send_retrying: a connection that breaks mid-answer is sent again when the call is idempotent") {
  std::atomic<int> served{0};
  std::atomic<int> breaks_left{1};
  LocalServer s;  // after what its handlers capture: it stops (joining them) before those die
  // The headers promise 100 bytes, 10 go out, then the connection closes.
  auto break_midway = [](httplib::Response& res) {
    res.set_content_provider(100, "application/json", [](size_t, size_t, httplib::DataSink& sink) {
      sink.write("{\"partial\"", 10);
      return false;
    });
  };
  s.server.Get("/breaks-once", [&](const httplib::Request&, httplib::Response& res) {
    ++served;
    if (breaks_left-- > 0) return break_midway(res);
    res.set_content("{}", "application/json");
  });
  s.server.Get("/always-breaks", [&](const httplib::Request&, httplib::Response& res) {
    ++served;
    break_midway(res);
  });
  s.start();
  http::Client client;
  auto request = [&](const std::string& url) {
    http::Request r;
    r.url = url;
    r.what = "test call";
    return r;
  };
  const http::RetryLimits quick{.max_retries = 2, .max_wait_seconds = 0.05};

  SUBCASE("sent again, and the second answer counts") {
    CHECK(http::send_retrying(client, request(s.url("/breaks-once")), http::Retry::idempotent, quick).status == 200);
    CHECK(served == 2);
  }
  SUBCASE("never sent again when repeating could run something twice") {
    CHECK_THROWS_AS(http::send_retrying(client, request(s.url("/breaks-once")), http::Retry::never, quick),
                    http::ConnectionBroken);
    CHECK(served == 1);
  }
  SUBCASE("at most max_retries more attempts, then the error says how often it was sent") {
    try {
      http::send_retrying(client, request(s.url("/always-breaks")), http::Retry::idempotent, quick);
      FAIL("no error");
    } catch (const http::ConnectionBroken& e) {
      CHECK(e.code() == ErrorCode::unavailable);
      CHECK_MESSAGE(std::string(e.what()).find("test call: request to http://127.0.0.1") == 0, e.what());
      CHECK_MESSAGE(std::string(e.what()).find("(sent 3 times)") != std::string::npos, e.what());
    }
    CHECK(served == 3);
  }
  SUBCASE("a connection never made is not a broken one: reported at once") {
    const auto start = Clock::now();
    try {
      http::send_retrying(client, request("http://127.0.0.1:1/x"), http::Retry::idempotent, quick);
      FAIL("no error");
    } catch (const http::ConnectionBroken&) {
      FAIL("a refused connection was taken for a broken one");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::unavailable);
    }
    CHECK(Clock::now() - start < std::chrono::seconds(2));
  }
}

TEST_CASE("retry_delay: Retry-After in seconds within the cap, else a doubling backoff") {
  http::Response r;
  r.status = 429;
  CHECK(*http::retry_delay(r, 0) == doctest::Approx(0.5));
  CHECK(*http::retry_delay(r, 2) == doctest::Approx(2.0));
  CHECK(*http::retry_delay(r, 8) == doctest::Approx(10.0));
  r.headers["retry-after"] = "3";
  CHECK(*http::retry_delay(r, 0) == doctest::Approx(3.0));
  r.headers["retry-after"] = "3600";
  CHECK_FALSE(http::retry_delay(r, 0).has_value());
  r.headers["retry-after"] = "Wed, 21 Oct 2015 07:28:00 GMT";
  CHECK(*http::retry_delay(r, 1) == doctest::Approx(1.0));
  CHECK(http::is_retryable_status(502));
  CHECK_FALSE(http::is_retryable_status(500));  // a server bug: sending it again does not help
  CHECK_FALSE(http::is_retryable_status(404));
  // A delete is safe to repeat, and one left undone leaves a sandbox running: any 5xx.
  http::Request del;
  del.method = "DELETE";
  CHECK(http::is_retryable_answer(del, 500));
  CHECK(http::is_retryable_answer(del, 503));
  CHECK_FALSE(http::is_retryable_answer(del, 501));  // not implemented: it will not be
  CHECK_FALSE(http::is_retryable_answer(del, 404));
  http::Request get;
  CHECK_FALSE(http::is_retryable_answer(get, 500));
  CHECK(http::is_retryable_answer(get, 429));
}

TEST_CASE("a stream from a sandbox cut once it began is 'the connection to the sandbox was lost', in every client") {
  LocalServer s;
  // The headers promise 100 bytes, 10 go out, then the connection closes.
  s.server.Get("/cut", [](const httplib::Request&, httplib::Response& res) {
    res.set_content_provider(100, "application/octet-stream", [](size_t, size_t, httplib::DataSink& sink) {
      sink.write("0123456789", 10);
      return false;
    });
  });
  s.start();
  http::Client client;
  std::string got;
  auto cut_stream = [&](const std::string& stream) {
    http::Request r;
    r.url = s.url("/cut");
    r.what = "E2B sandbox x: run the command";
    r.on_body = [&](std::string_view d) { got.append(d); };
    r.sandbox_stream = stream;
    try {
      client.send(r);
    } catch (const http::ConnectionBroken& e) {
      return e;
    }
    FAIL("the cut went unnoticed");
    return http::ConnectionBroken(ErrorCode::internal, "");
  };
  SUBCASE("a command's stream") {
    http::ConnectionBroken e = cut_stream("command");
    CHECK(e.code() == ErrorCode::unavailable);
    CHECK_MESSAGE(std::string(e.what()).find("E2B sandbox x: run the command: the connection to the sandbox was lost "
                                             "mid-command (") == 0,
                  e.what());
    CHECK(e.hint().find("`corral status --id LEASE`") != std::string::npos);
    CHECK(got == "0123456789");  // what came before the cut was delivered
  }
  SUBCASE("a download") {
    CHECK(std::string(cut_stream("download").what()).find("was lost mid-download (") != std::string::npos);
  }
  SUBCASE("a stream that names no sandbox stream stays a transport failure") {
    CHECK(std::string(cut_stream("").what()).find(": request to http://127.0.0.1") != std::string::npos);
  }
  // A WebSocket user (Daytona) words a stream it gave up on the same way.
  Error lost = http::connection_lost("Daytona sandbox y: run the command", "command", "the output stream broke 6 times");
  CHECK(std::string(lost.what()) == "Daytona sandbox y: run the command: the connection to the sandbox was lost "
                                    "mid-command (the output stream broke 6 times)");
}

TEST_CASE("rate_limited: a 429 names the limit, says what corral already did and what to do") {
  LocalServer s;
  s.server.Get("/always-busy", [](const httplib::Request&, httplib::Response& res) {
    res.status = 429;
    res.set_header("Retry-After", "0");
    res.set_content(R"({"message":"ThrottlerException: Too Many Requests"})", "application/json");
  });
  s.server.Get("/come-back-tomorrow", [](const httplib::Request&, httplib::Response& res) {
    res.status = 429;
    res.set_header("Retry-After", "86400");
  });
  s.start();
  http::Client client;
  auto answer = [&](const std::string& path, http::Retry retry) {
    http::Request r;
    r.url = s.url(path);
    r.what = "Acme get sandbox";
    r.headers.emplace_back("Authorization", "Bearer " + kSecret);
    return http::send_retrying(client, r, retry, {.max_retries = 2, .max_wait_seconds = 10});
  };
  auto error_of = [&](const http::Response& response, std::string_view detail) {
    return http::rate_limited(response, "Acme get sandbox", "Acme's rate limit", detail,
                              "ask Acme for a higher limit");
  };

  SUBCASE("retried: says how often") {
    http::Response response = answer("/always-busy", http::Retry::idempotent);
    CHECK(response.sent == 3);
    Error e = error_of(response, "");
    CHECK(e.code() == ErrorCode::quota);
    CHECK(e.exit_code() == 75);
    CHECK(std::string(e.what()) ==
          "Acme get sandbox: Acme's rate limit was reached (HTTP 429); corral already retried it 2 times, waiting "
          "between tries");
    CHECK(e.hint() == "wait a minute and rerun; for a fan-out (--shards), lower --max-parallel so fewer sandboxes "
                      "start at once; ask Acme for a higher limit");
  }
  SUBCASE("never retried: says why") {
    http::Response response = answer("/always-busy", http::Retry::never);
    CHECK(response.sent == 1);
    const corral::Error e = error_of(response, "too many creates");
    CHECK(std::string(e.what()) ==
          "Acme get sandbox: Acme's rate limit was reached (HTTP 429: too many creates); not sent again by the "
          "plugin: a second create could make a second sandbox, a second start run the command twice");
    // Only "not now": core may wait and ask again (a create, after every corral waited).
    REQUIRE(e.retry_after());
    CHECK(*e.retry_after() == std::chrono::milliseconds(0));  // Retry-After: 0 asks for no wait of its own
  }
  SUBCASE("asked to wait longer than corral does: says so") {
    http::Response response = answer("/come-back-tomorrow", http::Retry::idempotent);
    CHECK(response.sent == 1);
    const corral::Error e = error_of(response, "");
    REQUIRE(e.retry_after());
    CHECK(*e.retry_after() == std::chrono::seconds(86400));
    const std::string message = e.what();
    CHECK(message.find("it asked corral to wait 86400 s, longer than corral waits (10 s), so corral did not retry") !=
          std::string::npos);
    CHECK(message.find(kSecret) == std::string::npos);
  }
}

TEST_CASE("the remote kit's API client: base URL, credentials, the limit's setting, Ctrl-C and retries as the call says") {
  std::atomic<int> served{0};
  std::atomic<int> busy_left{1};
  std::mutex seen_mutex;
  std::vector<std::string> seen;  // "METHOD path key=... type=..." of each request
  LocalServer s;  // after what its handlers capture: it stops (joining them) before those die
  s.server.set_post_routing_handler([&](const httplib::Request& req, httplib::Response&) {
    std::lock_guard lock(seen_mutex);
    seen.push_back(req.method + " " + req.path + " key=" + req.get_header_value("X-Key") +
                   " type=" + req.get_header_value("Content-Type"));
  });
  s.server.Post("/v1/busy", [&](const httplib::Request&, httplib::Response& res) {
    ++served;
    if (busy_left-- > 0) {
      res.status = 503;
      res.set_header("Retry-After", "0");
      return;
    }
    res.set_content("{}", "application/json");
  });
  s.server.Get("/v1/slow", [](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    res.set_content("{}", "application/json");
  });
  s.server.Get("/v1/refused", [&](const httplib::Request& req, httplib::Response& res) {
    ++served;
    res.status = req.get_header_value("X-Key") == "fresh" ? 200 : 401;
  });
  s.start();
  http::Client client;
  namespace remote = corral::sdk::remote;
  ProviderSpec spec;
  spec.name = "acme";
  spec.options = {OptionSpec{.name = "api-key", .env = {"ACME_API_KEY"}},
                  OptionSpec{.name = "request-timeout", .type = "duration", .env = {"CORRAL_ACME_REQUEST_TIMEOUT"}}};
  const remote::Identity acme{"Acme", sdk::SettingNames(spec), "https://acme.example/keys", "", nullptr};
  const remote::Limit limit = remote::limit_of(acme, "request-timeout", 1);
  CHECK(limit.setting == "--acme-request-timeout or CORRAL_ACME_REQUEST_TIMEOUT");

  SUBCASE("the path follows the base URL; the key goes in its header; an idempotent call is retried") {
    remote::ApiClient api(client, s.url("/v1"), remote::key_header(acme, kSecret, "X-Key"));
    CHECK(api.send({.method = "POST", .path = "/busy", .body = "{}", .what = "busy", .limit = limit}).status == 200);
    CHECK(served == 2);
    std::lock_guard lock(seen_mutex);
    REQUIRE(!seen.empty());
    CHECK(seen.back() == "POST /v1/busy key=" + kSecret + " type=application/json");
  }
  SUBCASE("a call that is never retried is sent once") {
    remote::ApiClient api(client, s.url("/v1"), remote::key_header(acme, kSecret, "X-Key"));
    CHECK(api.send({.method = "POST", .path = "/busy", .what = "busy", .limit = limit, .retry = http::Retry::never})
              .status == 503);
    CHECK(served == 1);
  }
  SUBCASE("no key: missing_api_key, and nothing is sent") {
    remote::ApiClient api(client, s.url("/v1"), remote::key_header(acme, "", "X-Key"));
    CHECK_THROWS_WITH_AS(api.send({.method = "POST", .path = "/busy", .what = "busy", .limit = limit}),
                         "ACME_API_KEY is not set", Error);
    CHECK(served == 0);
  }
  SUBCASE("past its limit a call fails naming the setting that chose it") {
    remote::ApiClient api(client, s.url("/v1"), remote::key_header(acme, kSecret, "X-Key"));
    try {
      api.send({.path = "/slow", .what = "slow", .limit = limit});
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::unavailable);
      CHECK(std::string(e.what()).find("(--acme-request-timeout or CORRAL_ACME_REQUEST_TIMEOUT)") != std::string::npos);
    }
  }
  SUBCASE("Ctrl-C ends a cancellable call only") {
    remote::ApiClient api(client, s.url("/v1"), remote::key_header(acme, kSecret, "X-Key"));
    corral::test::FakeHost fake;
    fake.cancel();
    const sdk::Host host = fake.host();
    const remote::Limit three{3, "--x"};
    try {
      api.send({.path = "/slow", .what = "slow", .limit = three, .cancellable = &host});
      FAIL("not cancelled");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::cancelled);
    }
    CHECK(api.send({.path = "/slow", .what = "slow", .limit = three}).status == 200);
  }
  SUBCASE("a refused call is sent once more when the credentials can be renewed") {
    std::string key = "stale";
    int renewals = 0;
    remote::ApiClient api(
        client, s.url("/v1"),
        [&](std::vector<std::pair<std::string, std::string>>& headers, sdk::TlsSettings&,
            const std::function<bool()>&) { headers.emplace_back("X-Key", key); },
        {.renew_credentials = [&] {
          ++renewals;
          key = "fresh";
          return true;
        }});
    CHECK(api.send({.path = "/refused", .what = "refused", .limit = limit}).status == 200);
    CHECK(served == 2);
    CHECK(renewals == 1);
  }
  SUBCASE("a prepared request is sent once, after the base URL, with the credentials after its own headers") {
    remote::ApiClient api(client, s.url("/v1"), remote::key_header(acme, kSecret, "X-Key"));
    http::Request r;
    r.method = "POST";
    r.url = "/busy";
    r.headers.emplace_back("Content-Type", "text/plain");
    CHECK(api.send_once(r).status == 503);
    CHECK(served == 1);
    std::lock_guard lock(seen_mutex);
    REQUIRE(!seen.empty());
    CHECK(seen.back() == "POST /v1/busy key=" + kSecret + " type=text/plain");
  }
}
