// The Daytona plugin's pure parts: the log demultiplexer, the output decoder, the command
// wrapper (run through a real local sh, its output decoded), error mapping, settings and
// retry delays.
#include <doctest/doctest.h>

#include <algorithm>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "corral/os/process.hpp"
#include "corral/sdk/shell.hpp"
#include "api.hpp"
#include "errors.hpp"
#include "log_demux.hpp"
#include "output_decoder.hpp"
#include "settings.hpp"

using namespace corral;
using namespace corral::daytona;

namespace {

struct Split {
  std::string out, err;
};

// Feeds `pieces` to a demultiplexer and returns what reached each stream.
Split demux(const std::vector<std::string>& pieces) {
  Split s;
  LogDemux d([&](std::string_view b) { s.out.append(b); }, [&](std::string_view b) { s.err.append(b); });
  for (const auto& p : pieces) d.feed(p);
  d.finish();
  return s;
}

// Decodes `pieces` as one stream with an OutputDecoder.
std::string decode(const std::vector<std::string>& pieces) {
  std::string got;
  OutputDecoder d("test", [&](std::string_view b) { got.append(b); });
  for (const auto& p : pieces) d.feed(p);
  d.finish();
  return got;
}

// Every byte value, then pseudo-random bytes (NULs, 01 01 01, 02 02 02 and invalid UTF-8
// among them), as the conformance kit's output-binary check prints.
std::string every_byte(std::size_t size = 4096) {
  std::string blob(size, '\0');
  std::uint32_t x = 2463534242u;
  for (std::size_t i = 0; i < blob.size(); ++i) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    blob[i] = static_cast<char>(i < 256 ? i : x & 0xff);
  }
  blob += "\x01\x01\x01" "after a stdout prefix\n\x02\x02\x02" "and a stderr one";
  return blob + std::string("\0\0\n\0", 4);
}

// What the wrapper running `argv` in `dir` printed, decoded, and its exit code.
struct Wrapped {
  int exit_code = -1;
  std::string out, err, raw_out, raw_err;
};
Wrapped run_wrapped(const WrappedCommand& c, const std::vector<std::string>& env_prefix = {}) {
  os::ProcessSpec spec;
  spec.argv = env_prefix;
  for (const char* a : {"/bin/sh", "-c"}) spec.argv.emplace_back(a);
  spec.argv.push_back(wrapper_text(c));
  auto p = os::capture_process(spec, 30);
  Wrapped w;
  w.exit_code = p.exit_code;
  w.raw_out = p.out;
  w.raw_err = p.err;
  w.out = decode({p.out});
  w.err = decode({p.err});
  return w;
}

const std::string kLog = std::string("\x01\x01\x01") + "out 1\n" + "\x02\x02\x02" + "err 1\n" + "\x01\x01\x01" +
                         "out 2\n";

}  // namespace

TEST_CASE("the demultiplexer splits prefixed chunks into stdout and stderr") {
  Split s = demux({kLog});
  CHECK(s.out == "out 1\nout 2\n");
  CHECK(s.err == "err 1\n");
}

TEST_CASE("a prefix split across pieces at every position is still recognised") {
  for (size_t cut = 0; cut <= kLog.size(); ++cut) {
    for (size_t cut2 = cut; cut2 <= kLog.size(); ++cut2) {
      Split s = demux({kLog.substr(0, cut), kLog.substr(cut, cut2 - cut), kLog.substr(cut2)});
      INFO("cuts at ", cut, " and ", cut2);
      REQUIRE(s.out == "out 1\nout 2\n");
      REQUIRE(s.err == "err 1\n");
    }
  }
  // One byte per piece: every prefix straddles.
  std::vector<std::string> bytes;
  for (char c : kLog) bytes.emplace_back(1, c);
  Split s = demux(bytes);
  CHECK(s.out == "out 1\nout 2\n");
  CHECK(s.err == "err 1\n");
}

TEST_CASE("lone 01/02 bytes that are no prefix stay output") {
  Split s = demux({std::string("\x01\x01\x01") + "a\x01" "b\x02\x02" "c", "\x01"});
  CHECK(s.out == "a\x01" "b\x02\x02" "c\x01");
  CHECK(s.err.empty());
}

TEST_CASE("the raw log is ambiguous: output holding a prefix switches streams and loses those bytes") {
  // Why the wrapper encodes output: Daytona writes the command's bytes into the log as they
  // are, so a stderr line holding 01 01 01 reads as stderr up to there and stdout after,
  // exactly as the daemon's own DemuxLogBytes reads it. Nothing in the log tells them apart.
  Split s = demux({std::string("\x02\x02\x02" "err \x01\x01\x01" "looks like stdout\n")});
  CHECK(s.err == "err ");
  CHECK(s.out == "looks like stdout\n");
}

TEST_CASE("the output decoder reads base64 padded per chunk, cut anywhere") {
  // "a", "bc", "def" and NUL 01 FF as separate chunks, each padded on its own.
  const std::string encoded = "YQ==\nYmM=\nZGVm\nAAH/\n";
  const std::string expected = std::string("abcdef\0\x01\xff", 9);
  CHECK(decode({encoded}) == expected);
  for (size_t cut = 0; cut <= encoded.size(); ++cut) {
    for (size_t cut2 = cut; cut2 <= encoded.size(); ++cut2) {
      INFO("cuts at ", cut, " and ", cut2);
      REQUIRE(decode({encoded.substr(0, cut), encoded.substr(cut, cut2 - cut), encoded.substr(cut2)}) == expected);
    }
  }
  // A group may straddle a line break (another wrap width) and lines may be empty.
  CHECK(decode({"YW\nJj\n\nZA==\n"}) == "abcd");
  CHECK(decode({""}).empty());
  // Decoded bytes are passed on at once, not held for a line's end.
  std::string live;
  OutputDecoder d("test", [&](std::string_view b) { live.append(b); });
  d.feed("aGVs");
  CHECK(live == "hel");
  d.feed("bG8");
  CHECK(live == "hel");
  d.feed("=");
  CHECK(live == "hello");
  d.finish();
}

TEST_CASE("the output decoder reads od's hex lines, which start with a space") {
  CHECK(decode({" 00 01 ff 41\n 0a\n"}) == std::string("\0\x01\xff" "A\n", 5));
  CHECK(decode({" 4", "1 4", "2\nQw==\n 44\n"}) == "ABCD");  // cut inside a byte; formats mixed by chunk
}

TEST_CASE("the output decoder refuses what the wrapper cannot have written") {
  auto refused = [](const std::vector<std::string>& pieces) {
    try {
      decode(pieces);
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::internal);
      CHECK(std::string(e.what()).find("test: the output arrived garbled") == 0);
      return true;
    }
    return false;
  };
  CHECK(refused({"raw output\n"}));                   // ' ' in a base64 line
  CHECK(refused({std::string("YQ\0=\n", 5)}));      // a NUL
  CHECK(refused({"YQ==YQ=a\n"}));                    // data after '='
  CHECK(refused({"Y===\n"}));                        // '=' too early
  CHECK(refused({"YWJ"}));                            // ends inside a group
  CHECK(refused({" 0\n"}));                          // a hex line ends inside a byte
  CHECK(refused({" 0g\n"}));
  CHECK(refused({"YW\n 41\n"}));                     // hex inside a base64 group
}

TEST_CASE("shell quoting survives every byte a shell treats specially") {
  const std::string nasty = "it's $HOME `id` \"q\" \\ ; | & * ? \n newline ' ''";
  os::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "printf %s " + sdk::shell_quote(nasty)};
  auto p = os::capture_process(spec, 10);
  CHECK(p.exit_code == 0);
  CHECK(p.out == nasty);
}

TEST_CASE("the wrapper runs argv with exec semantics in the folder, with the env file, its output encoded") {
  const std::string dir = std::filesystem::temp_directory_path() / "corral-daytona-unit";
  std::filesystem::create_directories(dir + "/sub dir");
  const std::string env_path = dir + "/env-file";
  std::ofstream(dir + "/keep") << "not the env file";
  {
    std::ofstream env(env_path);
    // d and e are the wrapper's own variable names: forwarding them must change nothing.
    env << env_file_content({{"GREETING", "it's \"hi\" $HOME"}, {"EMPTY", ""}, {"d", "/"}, {"e", dir + "/keep"}});
  }
  WrappedCommand c{{"sh", "-c", "pwd; printf '%s|%s' \"$GREETING\" \"${EMPTY-unset}\"; echo oops >&2; exit 7"},
                   dir + "/sub dir", env_path};
  Wrapped w = run_wrapped(c);
  CHECK(w.exit_code == 7);
  CHECK(w.out == dir + "/sub dir\nit's \"hi\" $HOME|");
  CHECK(w.err == "oops\n");
  CHECK_FALSE(std::filesystem::exists(env_path));  // sourced, then deleted
  CHECK(std::filesystem::exists(dir + "/keep"));
  // A shell builtin is not a program: exec semantics give 127, with the shell's complaint.
  w = run_wrapped({{"exit", "3"}, dir, ""});
  CHECK(w.exit_code == 127);
  CHECK(w.out.empty());
  CHECK(w.err.find("exit") != std::string::npos);
  // A missing folder fails like a missing program.
  w = run_wrapped({{"true"}, dir + "/nope", ""});
  CHECK(w.exit_code == 127);
  CHECK(w.err.find("nope") != std::string::npos);
  // A signal's status comes back as a shell reports it; no output is no encoded text.
  w = run_wrapped({{"sh", "-c", "kill -9 $$"}, dir, ""});
  CHECK(w.exit_code == 137);
  CHECK(w.raw_out.empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("the wrapper's encoding carries every byte value: base64, and od where base64 is missing") {
  const std::string dir = std::filesystem::temp_directory_path() / "corral-daytona-unit-bytes";
  std::filesystem::create_directories(dir);
  const std::string blob = every_byte(200 * 1024);  // several dd chunks
  std::ofstream(dir + "/blob.bin", std::ios::binary) << blob;
  WrappedCommand c{{"sh", "-c", "cat blob.bin; cat blob.bin >&2; printf 'no newline'"}, dir, ""};
  Wrapped w = run_wrapped(c);
  CHECK(w.exit_code == 0);
  CHECK(w.raw_out.find('\0') == std::string::npos);
  CHECK(w.raw_out.find('\x01') == std::string::npos);
  CHECK(w.out == blob + "no newline");
  CHECK(w.err == blob);
  // A PATH with sh, dd, od and cat but no base64.
  const std::string bin = dir + "/bin";
  std::filesystem::create_directories(bin);
  for (const char* tool : {"sh", "dd", "od", "cat"}) {
    const char* found = nullptr;
    for (const char* d : {"/usr/bin/", "/bin/"})
      if (std::filesystem::exists(std::string(d) + tool)) {
        found = d;
        break;
      }
    REQUIRE(found);
    std::filesystem::create_symlink(std::string(found) + tool, bin + "/" + tool);
  }
  w = run_wrapped(c, {"/usr/bin/env", "-i", "PATH=" + bin});
  CHECK(w.exit_code == 0);
  CHECK(w.raw_out.substr(0, 1) == " ");  // od's hex lines
  CHECK(w.out == blob + "no newline");
  CHECK(w.err == blob);
  // Without od either, the command does not run: output would be lost, so say so instead.
  std::filesystem::remove(bin + "/od");
  w = run_wrapped(c, {"/usr/bin/env", "-i", "PATH=" + bin});
  CHECK(w.exit_code == 127);
  CHECK(w.out.empty());
  CHECK(w.err == "corral: the sandbox needs dd and base64 (or od) to pass output through Daytona\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE("input lines are ASCII text the wrapper turns back into every byte value, up to the end line") {
  const std::string dir = std::filesystem::temp_directory_path() / "corral-daytona-unit-input";
  std::filesystem::create_directories(dir);
  // Every byte value, lines that look like the end line or start with printf's syntax.
  const std::string data = every_byte(3 * kInputLineBytes + 17) + "\n.\n-n\n%s%%\\n\\";
  const std::string lines = input_lines(data);
  CHECK(std::all_of(lines.begin(), lines.end(),
                    [](char c) { return c == '\n' || (c >= 0x20 && c < 0x7f); }));  // JSON-safe text
  std::size_t count = 0;
  for (std::size_t at = 0; at < lines.size(); ++count) {
    const std::size_t end = lines.find('\n', at);
    REQUIRE(end != std::string::npos);  // every line ends in a newline
    CHECK(lines[at] == ':');
    CHECK(lines[at + 1] != '-');
    at = end + 1;
  }
  CHECK(count == 4);
  // What follows the end line is never the program's.
  std::ofstream(dir + "/input", std::ios::binary) << lines << kInputEnd << input_lines("after the end\n");
  WrappedCommand c{{"cat"}, dir, "", true};
  os::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", wrapper_text(c)};
  spec.stdin_path = dir + "/input";
  auto p = os::capture_process(spec, 30);
  CHECK(p.exit_code == 0);
  CHECK((decode({p.out}) == data));
  // Without input the program's stdin is empty, whatever the wrapper's is.
  c.input = false;
  spec.argv = {"/bin/sh", "-c", wrapper_text(c)};
  p = os::capture_process(spec, 30);
  CHECK(p.exit_code == 0);
  CHECK(p.out.empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("environment names must be shell names") {
  CHECK_NOTHROW(check_env_name("GOOD_NAME_1"));
  CHECK_NOTHROW(check_env_name("_x"));
  for (const char* bad : {"", "1ABC", "A-B", "A B", "A=B", "$(id)"}) CHECK_THROWS_AS(check_env_name(bad), Error);
}

TEST_CASE("Daytona errors: message lists, auth hints and quota refusals") {
  sdk::http::Response r;
  r.status = 400;
  r.body = R"({"statusCode":400,"error":"Bad Request","message":["cpu must be an integer","memory too big"]})";
  CHECK(error_message(r.body) == "cpu must be an integer; memory too big");
  CHECK(api_error(r, "x").code() == ErrorCode::invalid_argument);

  r.body = R"({"statusCode":400,"error":"Bad Request","message":"Total CPU limit exceeded. Maximum allowed: 10"})";
  CHECK(is_quota_refusal(r));
  Error quota = api_error(r, "Daytona create sandbox");
  CHECK(quota.code() == ErrorCode::quota);
  CHECK(std::string(quota.what()).find("Total CPU limit exceeded") != std::string::npos);

  r.status = 401;
  r.body = R"({"statusCode":401,"message":"Unauthorized"})";
  Error auth = api_error(r, "x");
  CHECK(auth.code() == ErrorCode::auth);
  CHECK(auth.hint().find("DAYTONA_API_KEY") != std::string::npos);
  r.status = 403;
  CHECK(api_error(r, "x").code() == ErrorCode::auth);
  r.status = 429;
  CHECK(api_error(r, "x").code() == ErrorCode::quota);
  r.status = 503;
  CHECK(api_error(r, "x").code() == ErrorCode::unavailable);
}

TEST_CASE("settings: defaults, URL rules, workdir and exclusive snapshot/image") {
  Settings s = Settings::from(sdk::Options(StringMap{{"api-key", "k"}}));
  CHECK(s.api_url == "https://app.daytona.io/api");
  CHECK(s.workdir == "workspace");
  CHECK(s.auto_stop_minutes == 60);
  CHECK(resolve_workdir(s.workdir, "/home/daytona") == "/home/daytona/workspace");
  CHECK(resolve_workdir("/srv/work", "/home/daytona") == "/srv/work");
  CHECK(Settings::from(sdk::Options(StringMap{{"api-url", "http://127.0.0.1:9/api/"}})).api_url == "http://127.0.0.1:9/api");
  CHECK_THROWS_AS(Settings::from(sdk::Options(StringMap{{"api-url", "http://api.example.com/api"}})), Error);
  CHECK_THROWS_AS(Settings::from(sdk::Options(StringMap{{"snapshot", "a"}, {"image", "b"}})), Error);
  CHECK_THROWS_AS(Settings::from(sdk::Options(StringMap{{"auto-stop", "-1"}})), Error);
  CHECK_THROWS_AS(Settings::from(sdk::Options(StringMap{{"cpu", "0x"}})), Error);
  for (const char* bad : {"/", "/etc", "/home/daytona", "../up", "a/../b", "-rf", "a//b", "./x"})
    CHECK_THROWS_AS(validate_workdir(bad), Error);
  for (const char* good : {"workspace", "src/app", "/home/daytona/workspace", "/srv/work"})
    CHECK_NOTHROW(validate_workdir(good));
  CHECK_THROWS_AS(validate_user("../root"), Error);
  CHECK_NOTHROW(validate_user("daytona"));
}

TEST_CASE("settings: the time limits default to 2m, 30s and 10m, and take durations between 1s and 1d") {
  Settings s = Settings::from(sdk::Options(StringMap{}));
  CHECK(s.create_timeout_seconds == 120);
  CHECK(s.request_timeout_seconds == 30);
  CHECK(s.start_timeout_seconds == 600);
  s = Settings::from(sdk::Options(StringMap{{"create-timeout", "5m"}, {"request-timeout", "1"}, {"start-timeout", "1d"}}));
  CHECK(s.create_timeout_seconds == 300);
  CHECK(s.request_timeout_seconds == 1);
  CHECK(s.start_timeout_seconds == 86400);
  struct Bad {
    const char* option;
    const char* value;
    const char* env;
  };
  for (const Bad& b : {Bad{"create-timeout", "0", "CORRAL_DAYTONA_CREATE_TIMEOUT"},
                       Bad{"request-timeout", "1d1s", "CORRAL_DAYTONA_REQUEST_TIMEOUT"},
                       Bad{"start-timeout", "soon", "CORRAL_DAYTONA_START_TIMEOUT"},
                       Bad{"start-timeout", "99999999999999999999d", "CORRAL_DAYTONA_START_TIMEOUT"}}) {
    CAPTURE(b.value);
    try {
      Settings::from(sdk::Options(StringMap{{b.option, b.value}}));
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::invalid_argument);
      CHECK(std::string(e.what()).find(b.option) != std::string::npos);
      CHECK(e.hint().find(std::string("--daytona-") + b.option) != std::string::npos);
      CHECK(e.hint().find(b.env) != std::string::npos);
    }
  }
}
