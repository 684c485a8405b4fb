// The MCP server's parts, in-process: JSON-RPC lines, the protocol eras, bounded output,
// bounded line reading, the book of sandboxes and the folder limit.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "cli.hpp"
#include "corral/errors.hpp"
#include "corral/json.hpp"
#include "mcp/book.hpp"
#include "mcp/call_ui.hpp"
#include "mcp/json_rpc.hpp"
#include "mcp/limits.hpp"
#include "mcp/line_reader.hpp"
#include "mcp/protocol.hpp"

namespace fs = std::filesystem;
namespace json = corral::json;
using namespace corral::mcp;

TEST_CASE("JSON-RPC lines: requests, notifications, responses and the errors for the rest") {
  Parsed request = parse_line(R"({"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}})");
  REQUIRE(request.message);
  CHECK(request.message->id == "7");
  CHECK(request.message->is_request());
  CHECK(request.message->params != nullptr);

  Parsed named = parse_line(R"({"jsonrpc":"2.0","id":"a\"b","method":"ping"})");
  REQUIRE(named.message);
  CHECK(named.message->id == R"("a\"b")");
  CHECK(named.message->params == nullptr);

  Parsed note = parse_line(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  REQUIRE(note.message);
  CHECK_FALSE(note.message->is_request());

  Parsed response = parse_line(R"({"jsonrpc":"2.0","id":1,"result":{}})");
  CHECK_FALSE(response.message);
  CHECK_FALSE(response.error);

  auto code_of = [](std::string_view line) {
    Parsed p = parse_line(line);
    REQUIRE(p.error);
    return p.error->code;
  };
  CHECK(code_of("{") == RpcCode::parse_error);
  CHECK(code_of(std::string(200, '[') + std::string(200, ']')) == RpcCode::parse_error);
  CHECK(code_of("[]") == RpcCode::invalid_request);
  CHECK(code_of("7") == RpcCode::invalid_request);
  CHECK(code_of(R"({"id":1,"method":"ping"})") == RpcCode::invalid_request);
  CHECK(code_of(R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})") == RpcCode::invalid_request);
  CHECK(code_of(R"({"jsonrpc":"2.0","id":null,"method":"ping"})") == RpcCode::invalid_request);
  CHECK(code_of(R"({"jsonrpc":"2.0","id":1,"method":3})") == RpcCode::invalid_request);
  CHECK(code_of(R"({"jsonrpc":"2.0","id":1})") == RpcCode::invalid_request);
  Parsed bad_params = parse_line(R"({"jsonrpc":"2.0","id":4,"method":"ping","params":[1]})");
  REQUIRE(bad_params.error);
  CHECK(bad_params.error->code == RpcCode::invalid_params);
  CHECK(bad_params.error_id == "4");
  // A notification gets no answer, not even an error.
  Parsed bad_note = parse_line(R"({"jsonrpc":"2.0","method":"x","params":"y"})");
  CHECK_FALSE(bad_note.message);
  CHECK_FALSE(bad_note.error);

  const std::string line = error_line("\"q\"", {RpcCode::unsupported_version, "no \"such\"\nversion", R"({"a":1})"});
  CHECK(line.find('\n') == std::string::npos);
  json::Document doc = json::parse(line, "an error line");
  CHECK(json::get_string(doc, "id") == "q");
  CHECK(json::get_int(doc["error"], "code") == -32022);
  CHECK(json::get_int(doc["error"]["data"], "a") == 1);
  CHECK(json::get_string(doc["error"], "message") == "no \"such\"\nversion");
  CHECK_FALSE(json::parse(error_line("null", {RpcCode::parse_error, "x", ""}), "line").HasMember("id"));
}

TEST_CASE("the protocol era of a request") {
  auto params = [](const char* text) { return json::parse(text, "params"); };
  json::Document none = params("{}");
  CHECK(era_of("initialize", &none, false).era);
  CHECK(era_of("ping", nullptr, false).era);
  CHECK(era_of("tools/list", &none, false).error->code == RpcCode::invalid_request);
  CHECK_FALSE(era_of("tools/list", &none, true).era->modern);

  json::Document modern = params(
      R"({"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}})");
  CHECK(era_of("tools/list", &modern, false).era->modern);
  json::Document no_caps = params(R"({"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}})");
  CHECK(era_of("tools/list", &no_caps, false).error->code == RpcCode::invalid_params);
  json::Document future = params(R"({"_meta":{"io.modelcontextprotocol/protocolVersion":"2030-01-01"}})");
  const EraOrError unsupported = era_of("tools/list", &future, true);
  REQUIRE(unsupported.error);
  CHECK(unsupported.error->code == RpcCode::unsupported_version);
  json::Document data = json::parse(unsupported.error->data, "data");
  CHECK(json::get_string(data, "requested") == "2030-01-01");
  CHECK(json::get_strings(data, "supported").front() == "2026-07-28");

  CHECK(negotiate_legacy("2025-06-18") == "2025-06-18");
  CHECK(negotiate_legacy("1999-01-01") == "2025-11-25");
  CHECK(result_object(Era{}, "", "1.0") == "{}");
  json::Document result = json::parse(result_object(Era{.modern = true}, R"("a":1)", "1.0"), "result");
  CHECK(json::get_string(result, "resultType") == "complete");
  CHECK(json::get_int(result, "a") == 1);
}

TEST_CASE("output past the bound keeps its head and tail, says what was left out, never splits a character") {
  BoundedStream small(100);
  small.append("hello ");
  small.append("world\n");
  CHECK_FALSE(small.truncated());
  CHECK(small.text("stdout") == "hello world\n");
  CHECK(small.whole() == std::string("hello world\n"));

  BoundedStream big(100);
  std::string all;
  for (int i = 0; i < 1000; ++i) {
    const std::string piece = "line " + std::to_string(i) + " \xc3\xa9\n";  // with a two-byte character
    all += piece;
    big.append(piece);
  }
  CHECK(big.truncated());
  CHECK(big.total() == all.size());
  CHECK_FALSE(big.whole());
  const std::string text = big.text("stdout");
  CHECK(json::is_valid_utf8(text));
  CHECK(text.rfind("line 0 ", 0) == 0);
  CHECK(text.find("line 999 \xc3\xa9\n") != std::string::npos);
  CHECK(text.find("bytes of stdout left out") != std::string::npos);
  CHECK(text.size() < 400);

  BoundedStream binary(100);
  binary.append(std::string("\x00\xff\xfe binary", 10));
  CHECK(binary.text("stderr").find("10 bytes of binary stderr not shown") != std::string::npos);
}

TEST_CASE("lines are read within a bound: a longer one is reported once and skipped") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const std::string input = "first\r\n" + std::string(300, 'x') + "\nsecond\n" + std::string(50, 'y') + "\nlast";
  REQUIRE(::write(fds[1], input.data(), input.size()) == static_cast<ssize_t>(input.size()));
  ::close(fds[1]);
  LineReader reader(fds[0], 64);
  std::string line;
  CHECK(reader.next(line, 1000) == LineReader::Status::line);
  CHECK(line == "first");
  CHECK(reader.next(line, 1000) == LineReader::Status::oversized);
  CHECK(reader.next(line, 1000) == LineReader::Status::line);
  CHECK(line == "second");
  CHECK(reader.next(line, 1000) == LineReader::Status::line);
  CHECK(line == std::string(50, 'y'));
  CHECK(reader.next(line, 1000) == LineReader::Status::line);
  CHECK(line == "last");
  CHECK(reader.next(line, 1000) == LineReader::Status::eof);
  ::close(fds[0]);

  REQUIRE(::pipe(fds) == 0);
  LineReader idle(fds[0], 64);
  CHECK(idle.next(line, 10) == LineReader::Status::idle);
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST_CASE("the book: slots reserved up front, given back unless held; adopted leases do not count") {
  Book book(2);
  {
    Book::Slots one = book.reserve(1);
    CHECK_THROWS_AS(book.reserve(2), corral::Error);
    book.hold(one, {.lease_id = "a", .slug = "a-a"});
  }
  CHECK(book.live() == 1);
  {
    Book::Slots taken = book.reserve(1);  // not held: back when it goes
    CHECK_THROWS_AS(book.reserve(1), corral::Error);
  }
  Book::Slots again = book.reserve(1);
  book.adopt({.lease_id = "u", .slug = "users"});
  CHECK(book.owns("u"));
  CHECK(book.live() == 1);
  book.forget("a");
  CHECK_FALSE(book.owns("a"));
  CHECK(book.live() == 0);
  try {
    (void)book.reserve(2);
    FAIL("a reservation past the limit was granted");
  } catch (const corral::Error& e) {
    CHECK(std::string(e.what()).find("2 sandboxes at once") != std::string::npos);
    CHECK(e.hint().find("--max-sandboxes") != std::string::npos);
  }
  const auto now = Book::Clock::now();
  Book timed(4);
  timed.adopt({.lease_id = "old-adopted", .deadline = now - std::chrono::seconds(5)});
  Book::Slots s = timed.reserve(2);
  timed.hold(s, {.lease_id = "old", .deadline = now - std::chrono::seconds(5)});
  timed.hold(s, {.lease_id = "kept", .kept = true, .deadline = now - std::chrono::seconds(5)});
  const std::vector<Book::Entry> expired = timed.expired(now);
  REQUIRE(expired.size() == 1);
  CHECK(expired[0].lease_id == "old");
}

TEST_CASE("a tool's folder is below the served root, or refused") {
  corral::test::TempDir dir;
  dir.write("root/sub/file.txt", "x");
  dir.write("outside/file.txt", "x");
  fs::create_directory_symlink(dir.path() / "outside", dir.path() / "root" / "out");
  Limits limits;
  limits.root = fs::canonical(dir.path() / "root");
  CHECK(served_folder(limits, "") == limits.root);
  CHECK(served_folder(limits, "sub") == limits.root / "sub");
  CHECK(served_folder(limits, "sub/../sub") == limits.root / "sub");
  for (const char* bad : {"..", "sub/../..", "/etc", "out", "missing", "sub/file.txt"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(served_folder(limits, bad), corral::Error);
  }
  limits.env = {"A"};
  CHECK_NOTHROW(check_env(limits, {"A"}));
  CHECK_THROWS_AS(check_env(limits, {"A", "B"}), corral::Error);
}
