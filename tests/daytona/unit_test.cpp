// The Daytona plugin's pure parts: the log demultiplexer, the end-marker filter, the
// command wrapper (run through a real local sh), error mapping, settings and retry delays.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "corral/sdk/process.hpp"
#include "api.hpp"
#include "end_marker.hpp"
#include "errors.hpp"
#include "log_demux.hpp"
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

TEST_CASE("the end marker is stripped only at the end, and only when complete") {
  const std::string marker = new_end_marker();
  CHECK(marker.front() == '\x1f');
  CHECK(marker != new_end_marker());
  auto run = [&](const std::vector<std::string>& pieces, bool& complete) {
    std::string got;
    EndMarkerFilter f(marker, [&](std::string_view d) { got.append(d); });
    for (const auto& p : pieces) f.feed(p);
    complete = f.finish();
    return got;
  };
  bool complete = false;
  CHECK(run({"abc" + marker + "\n"}, complete) == "abc");  // a last line without newline
  CHECK(complete);
  CHECK(run({"abc\n", marker + "\n"}, complete) == "abc\n");
  CHECK(complete);
  // Split anywhere, including inside the marker.
  const std::string all = "line 1\nline 2" + marker + "\n";
  for (size_t cut = 0; cut <= all.size(); ++cut) {
    REQUIRE(run({all.substr(0, cut), all.substr(cut)}, complete) == "line 1\nline 2");
    REQUIRE(complete);
  }
  // Output is held back only while it could still be the marker.
  std::string live;
  EndMarkerFilter f(marker, [&](std::string_view d) { live.append(d); });
  f.feed("first\n");
  CHECK(live == "first\n");
  // A stream cut before its marker keeps everything.
  CHECK(run({"partial" + marker.substr(0, 5)}, complete) == "partial" + marker.substr(0, 5));
  CHECK_FALSE(complete);
}

TEST_CASE("shell quoting survives every byte a shell treats specially") {
  const std::string nasty = "it's $HOME `id` \"q\" \\ ; | & * ? \n newline ' ''";
  sdk::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "printf %s " + shell_quote(nasty)};
  auto p = sdk::capture_process(spec, 10);
  CHECK(p.exit_code == 0);
  CHECK(p.out == nasty);
}

TEST_CASE("the wrapper runs argv with exec semantics in the folder, with the env file, and ends with the marker") {
  const std::string dir = std::filesystem::temp_directory_path() / "corral-daytona-unit";
  std::filesystem::create_directories(dir + "/sub dir");
  const std::string env_path = dir + "/env-file";
  {
    std::ofstream env(env_path);
    env << env_file_content({{"GREETING", "it's \"hi\" $HOME"}, {"EMPTY", ""}});
  }
  WrappedCommand c{{"sh", "-c", "pwd; printf '%s|%s' \"$GREETING\" \"${EMPTY-unset}\"; echo oops >&2; exit 7"},
                   dir + "/sub dir", env_path, "\x1f" "corral-end-test\x1f"};
  sdk::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", wrapper_text(c)};
  auto p = sdk::capture_process(spec, 10);
  CHECK(p.exit_code == 7);
  CHECK(p.out == dir + "/sub dir\nit's \"hi\" $HOME|\x1f" "corral-end-test\x1f\n");
  CHECK(p.err == "oops\n\x1f" "corral-end-test\x1f\n");
  CHECK_FALSE(std::filesystem::exists(env_path));  // sourced, then deleted
  // A shell builtin is not a program: exec semantics give 127, and the marker still comes.
  WrappedCommand builtin{{"exit", "3"}, dir, "", "\x1f" "m\x1f"};
  spec.argv = {"/bin/sh", "-c", wrapper_text(builtin)};
  p = sdk::capture_process(spec, 10);
  CHECK(p.exit_code == 127);
  CHECK(p.out == "\x1f" "m\x1f\n");
  // A missing folder fails like a missing program.
  WrappedCommand missing{{"true"}, dir + "/nope", "", "\x1f" "m\x1f"};
  spec.argv = {"/bin/sh", "-c", wrapper_text(missing)};
  p = sdk::capture_process(spec, 10);
  CHECK(p.exit_code == 127);
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

TEST_CASE("429 retries wait for Retry-After when small, else back off, never above 10 s") {
  sdk::http::Response r;
  r.status = 429;
  CHECK(retry_delay_seconds(r, 0) == doctest::Approx(0.5));
  CHECK(retry_delay_seconds(r, 2) == doctest::Approx(2.0));
  CHECK(retry_delay_seconds(r, 8) == doctest::Approx(10.0));
  r.headers["retry-after"] = "3";
  CHECK(retry_delay_seconds(r, 0) == doctest::Approx(3.0));
  r.headers["retry-after"] = "3600";
  CHECK(retry_delay_seconds(r, 0) == doctest::Approx(0.5));
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
