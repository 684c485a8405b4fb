// `sbx ls --json` has no documented schema: the parser must accept every plausible shape
// and refuse garbage with guidance instead of guessing.
#include <doctest/doctest.h>

#include "corral/types.hpp"
#include "sbx_list.hpp"

using namespace corral::docker_sandbox;

TEST_CASE("ls parser: a top-level array of objects") {
  auto e = parse_ls_json(R"([{"name":"a","agent":"shell","status":"running","workspace":"/w/a"},
                              {"name":"b","status":"stopped","workspaces":["/w/b:ro","/docs"]}])");
  REQUIRE(e.size() == 2);
  CHECK(e[0].name == "a");
  CHECK(e[0].agent == "shell");
  CHECK(e[0].status == "running");
  CHECK(e[0].workspace == "/w/a");
  CHECK(e[1].status == "stopped");
  CHECK(e[1].workspace == "/w/b");  // first workspace, mount mode stripped
}

TEST_CASE("ls parser: an object holding the array") {
  auto e = parse_ls_json(R"({"sandboxes":[{"name":"a","status":"running"}],"count":1})");
  REQUIRE(e.size() == 1);
  CHECK(e[0].name == "a");
  auto items = parse_ls_json(R"({"meta":{"v":1},"items":[{"name":"x"},{"name":"y"}]})");
  REQUIRE(items.size() == 2);
  CHECK(items[1].name == "y");
  auto other = parse_ls_json(R"({"vmList":[{"name":"z"}]})");  // an unknown key holding the list
  REQUIRE(other.size() == 1);
  CHECK(other[0].name == "z");
}

TEST_CASE("ls parser: field-name variants") {
  auto e = parse_ls_json(R"([
    {"Name":"go-style","Status":"Running","Agent":"shell","Workspace":"/w/1"},
    {"sandbox_name":"snake","state":"STOPPED","mounts":[{"source":"/w/2","target":"/w/2"}]},
    {"sandboxName":"camel","State":"running","workingDirectory":"/w/3"},
    {"ID":"only-id"}
  ])");
  REQUIRE(e.size() == 4);
  CHECK(e[0].name == "go-style");
  CHECK(e[0].status == "running");  // lower-cased
  CHECK(e[0].workspace == "/w/1");
  CHECK(e[1].name == "snake");
  CHECK(e[1].status == "stopped");
  CHECK(e[1].workspace == "/w/2");
  CHECK(e[2].name == "camel");
  CHECK(e[2].workspace == "/w/3");
  CHECK(e[3].name == "only-id");
}

TEST_CASE("ls parser: name preferred over id, nameless entries skipped, names keyed objects") {
  auto e = parse_ls_json(R"([{"id":"abc123","name":"human"},{"status":"running"},"bare-name"])");
  REQUIRE(e.size() == 2);
  CHECK(e[0].name == "human");
  CHECK(e[1].name == "bare-name");
  auto keyed = parse_ls_json(R"({"box-1":{"status":"running"},"box-2":{"status":"stopped"}})");
  REQUIRE(keyed.size() == 2);
  CHECK(keyed[0].name == "box-1");
  CHECK(keyed[1].status == "stopped");
}

TEST_CASE("ls parser: empty output means no sandboxes") {
  CHECK(parse_ls_json("").empty());
  CHECK(parse_ls_json("  \n").empty());
  CHECK(parse_ls_json("null").empty());
  CHECK(parse_ls_json("[]").empty());
  CHECK(parse_ls_json("{}").empty());
  CHECK(parse_ls_json(R"({"sandboxes":[]})").empty());
}

TEST_CASE("ls parser: garbage is refused with guidance") {
  for (const char* text : {"SANDBOX  AGENT  STATUS\nx shell running", "{\"sandboxes\":", "42", "\"text\"",
                           "{\"count\":3}"}) {
    CAPTURE(text);
    try {
      parse_ls_json(text);
      FAIL("accepted garbage");
    } catch (const corral::Error& e) {
      CHECK(e.code() == corral::ErrorCode::unavailable);
      CHECK(std::string(e.what()).find("sbx ls --json") != std::string::npos);
      CHECK(!e.hint().empty());
    }
  }
}

TEST_CASE("ls parser: find_entry") {
  auto e = parse_ls_json(R"([{"name":"a"},{"name":"b","status":"running"}])");
  REQUIRE(find_entry(e, "b"));
  CHECK(find_entry(e, "b")->status == "running");
  CHECK_FALSE(find_entry(e, "c"));
}
