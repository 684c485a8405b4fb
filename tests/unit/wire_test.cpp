// The wire vocabulary: every message survives a write/read round trip, malformed answers
// are refused, text from anywhere makes valid JSON, and destination options must be
// trusted.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "cli.hpp"
#include "corral/json.hpp"
#include "corral/sdk/sync.hpp"
#include "corral/wire.hpp"
#include "base/printable.hpp"

using namespace corral;
namespace fs = std::filesystem;

TEST_CASE("every primitive's request and result reads back as written") {
  Sandbox sb;
  sb.id = "sb-1";
  sb.state = "running";
  sb.details = {{"k", "v"}};
  sb.labels = wire::owner_labels("lease1", "calm-otter", "0123456789ab");
  sb.secrets = {{"token", "s3cret"}};
  Command c;
  c.argv = {"sh", "-c", "echo \"hi\"\n"};
  c.cwd = "sub";
  c.env = {{"A", "1"}};
  c.timeout_seconds = 90;

  auto exec = wire::read<wire::ExecRequest>(wire::to_json(wire::ExecRequest{sb, c}), "t");
  CHECK(exec.sandbox.secrets.at("token") == "s3cret");  // the wire carries secrets back to the plugin
  CHECK(exec.sandbox.labels.at(wire::kHostLabel) == "0123456789ab");
  CHECK(exec.command.argv == c.argv);
  CHECK(exec.command.cwd == "sub");
  CHECK(exec.command.env == c.env);
  CHECK(exec.command.timeout_seconds == 90);

  UploadRequest up{"/tmp/a.tar.gz", 42, {"gone.txt", "dir/x"}};
  auto upload = wire::read<wire::UploadCall>(wire::to_json(wire::UploadCall{sb, up}), "t");
  CHECK(upload.upload.archive_path == up.archive_path);
  CHECK(upload.upload.size == 42);
  CHECK(upload.upload.removed == up.removed);
  CHECK(upload.upload.tree_root.empty());  // an archive upload lists no tree
  CHECK(upload.upload.tree_files.empty());

  UploadRequest tree{"", 7, {}, "/home/u/repo", {{"src/a.c"}, {"run.sh", true}, {"link", false, true}}};
  const std::string tree_json = wire::to_json(wire::UploadCall{sb, tree});
  CHECK(tree_json.find("\"executable\":false") == std::string::npos);  // defaults are omitted
  auto copied = wire::read<wire::UploadCall>(tree_json, "t");
  CHECK(copied.upload.archive_path.empty());
  CHECK(copied.upload.tree_root == "/home/u/repo");
  REQUIRE(copied.upload.tree_files.size() == 3);
  CHECK(copied.upload.tree_files[0].path == "src/a.c");
  CHECK_FALSE(copied.upload.tree_files[0].executable);
  CHECK(copied.upload.tree_files[1].executable);
  CHECK(copied.upload.tree_files[2].symlink);
  CHECK_FALSE(copied.upload.tree_files[2].executable);
  // A tree without a root, or a file without a path, is refused rather than read as nothing.
  CHECK_THROWS_AS(wire::read<wire::UploadCall>(R"({"sandbox":{"id":"s"},"tree":{"files":[]}})", "t"), Error);
  CHECK_THROWS_AS(wire::read<wire::UploadCall>(R"({"sandbox":{"id":"s"},"tree":{"root":"/r","files":[{}]}})", "t"),
                  Error);
  CHECK_THROWS_AS(wire::read<wire::UploadCall>(R"({"sandbox":{"id":"s"},"tree":{"root":"/r"}})", "t"), Error);

  CreateRequest cr{.lease_id = "lease1", .slug = "calm-otter", .labels = sb.labels, .workspace = "/w"};
  auto create = wire::read<CreateRequest>(wire::to_json(cr), "t");
  CHECK(create.labels == cr.labels);
  CHECK(create.workspace == "/w");
  CHECK_FALSE(create.ephemeral);  // absent, as an older corral sends it: the sandbox may be kept
  CHECK(create.workspace_bytes == 0);
  CreateRequest plain{.lease_id = "lease1",
                      .slug = "calm-otter",
                      .workspace = "/w",
                      .ephemeral = true,
                      .workspace_bytes = 1 << 20};
  auto ephemeral = wire::read<CreateRequest>(wire::to_json(plain), "t");
  CHECK(ephemeral.ephemeral);
  CHECK(ephemeral.workspace_bytes == 1u << 20);
  // An older plugin's reader takes the request as today's: the new members are extra keys.
  auto old_shape = json::parse(wire::to_json(plain), "t");
  CHECK(json::get_string(old_shape, "slug") == "calm-otter");
  CHECK(wire::to_json(cr).find("ephemeral") == std::string::npos);

  CHECK(wire::read<wire::ExtendRequest>(wire::to_json(wire::ExtendRequest{sb, 3600}), "t").seconds == 3600);
  CHECK(wire::read<wire::UrlRequest>(wire::to_json(wire::UrlRequest{sb, 8080}), "t").port == 8080);
  CHECK(wire::read<wire::UrlResult>(wire::to_json(wire::UrlResult{"https://x"}), "t").url == "https://x");
  CHECK(wire::read<ExecResult>(wire::to_json(ExecResult{7}), "t").exit_code == 7);
  auto listed = wire::read<wire::ListResult>(wire::to_json(wire::ListResult{{sb, sb}}), "t");
  REQUIRE(listed.sandboxes.size() == 2);
  CHECK(listed.sandboxes[0].secrets.empty());  // listings never carry secrets
  auto doctor = wire::read<wire::DoctorResult>(wire::to_json(wire::DoctorResult{{{"n", true, "d", "h"}}}), "t");
  REQUIRE(doctor.checks.size() == 1);
  CHECK(doctor.checks[0].ok);
}

TEST_CASE("an argv that is not UTF-8 reaches the plugin byte for byte; an SDK from before still finds argv") {
  Sandbox sb;
  sb.id = "sb-1";
  Command c;
  c.argv = {"printf", "%s", std::string("\xff\xfe name\x80"), "caf\xc3\xa9", ""};
  const std::string text = wire::to_json(wire::ExecRequest{sb, c});
  CHECK(json::is_valid_utf8(text));
  CHECK(wire::read<wire::ExecRequest>(text, "t").command.argv == c.argv);
  // Read as an SDK without argvHex reads it: U+FFFD in place of each bad byte, no failure.
  const json::Document doc = json::parse(text, "t");
  const std::vector<std::string> plain = json::get_strings(doc["command"], "argv");
  REQUIRE(plain.size() == c.argv.size());
  CHECK(plain[2] == "\xef\xbf\xbd\xef\xbf\xbd name\xef\xbf\xbd");
  // Valid text needs no copy.
  c.argv = {"echo", "caf\xc3\xa9"};
  CHECK(wire::to_json(wire::ExecRequest{sb, c}).find("argvHex") == std::string::npos);
  // A malformed copy is refused, never run.
  CHECK_THROWS_AS(wire::read<wire::ExecRequest>(
                      R"({"sandbox":{"id":"x"},"command":{"argv":["a"],"argvHex":["zz"],"cwd":"","env":{},"timeoutSeconds":0}})",
                      "t"),
                  Error);
}

TEST_CASE("a command's secrets cross the plugin ABI whole; a command without any sends none, and one missing a part is refused") {
  Sandbox sb;
  sb.id = "sb-1";
  Command c;
  c.argv = {"true"};
  CHECK(wire::to_json(wire::ExecRequest{sb, c}).find("secrets") == std::string::npos);  // as before
  Secret s;
  s.name = "API_KEY";
  s.hosts = {"api.example.com", "*.example.org"};
  s.placeholder = "sk-Zz9Yy8Xx7Ww6";
  s.value = "sk-Aa1Bb2Cc3Dd4";
  s.header = "X-Api-Key";
  s.format = "{}";
  c.secrets = {s};
  const Command back = wire::read<wire::ExecRequest>(wire::to_json(wire::ExecRequest{sb, c}), "t").command;
  REQUIRE(back.secrets.size() == 1);
  CHECK(back.secrets[0].name == "API_KEY");
  CHECK(back.secrets[0].hosts == s.hosts);
  CHECK(back.secrets[0].placeholder == s.placeholder);
  CHECK(back.secrets[0].value == s.value);
  CHECK(back.secrets[0].header == "X-Api-Key");
  CHECK(back.secrets[0].format == "{}");
  CHECK_THROWS_AS(wire::read<wire::ExecRequest>(
                      R"({"sandbox":{"id":"x"},"command":{"argv":["a"],"cwd":"","env":{},"timeoutSeconds":0,)"
                      R"("secrets":[{"name":"K","hosts":["a.com"],"placeholder":"p"}]}})",
                      "t"),
                  Error);
}

TEST_CASE("a command's stdin and terminal cross the plugin ABI only when asked for; --stop-timeout never does") {
  Sandbox sb;
  sb.id = "sb-1";
  Command c;
  c.argv = {"cat"};
  c.stop_timeout_ms = 1500;
  const std::string plain = wire::to_json(wire::ExecRequest{sb, c});
  CHECK(plain.find("stdin") == std::string::npos);  // a plugin from before sees what it always saw
  CHECK(plain.find("tty") == std::string::npos);
  CHECK(plain.find("1500") == std::string::npos);
  c.forward_stdin = true;
  c.tty = true;
  const std::string both = wire::to_json(wire::ExecRequest{sb, c});
  CHECK(both.find(R"("stdin":true)") != std::string::npos);
  CHECK(both.find(R"("tty":true)") != std::string::npos);
  const Command back = wire::read<wire::ExecRequest>(both, "t").command;
  CHECK(back.forward_stdin);
  CHECK(back.tty);
  CHECK_THROWS_AS(wire::read<wire::ExecRequest>(
                      R"({"sandbox":{"id":"x"},"command":{"argv":["a"],"cwd":"","env":{},"timeoutSeconds":0,"stdin":"yes"}})",
                      "t"),
                  Error);
}

TEST_CASE("an exec result's egress report crosses the plugin ABI whole, and a malformed one is refused") {
  ExecResult r{0};
  r.egress = EgressReport{{{"pypi.org", 443, 3, ""}}, {{"example.net", 80, 1, "not in the allow list"}}};
  const std::string text = wire::to_json(r);
  CHECK(text == R"({"exitCode":0,"egress":{"allowed":[{"host":"pypi.org","port":443,"count":3}],)"
                R"("refused":[{"host":"example.net","port":80,"count":1,"reason":"not in the allow list"}]}})");
  const ExecResult back = wire::read<ExecResult>(text, "t");
  REQUIRE(back.egress);
  REQUIRE(back.egress->allowed.size() == 1);
  CHECK(back.egress->allowed[0].host == "pypi.org");
  CHECK(back.egress->allowed[0].count == 3);
  REQUIRE(back.egress->refused.size() == 1);
  CHECK(back.egress->refused[0].reason == "not in the allow list");
  CHECK_FALSE(wire::read<ExecResult>(R"({"exitCode":0})", "t").egress);  // a plugin from before
  CHECK_THROWS_AS(wire::read<ExecResult>(R"({"exitCode":0,"egress":{"allowed":{}}})", "t"), Error);
  CHECK_THROWS_AS(wire::read<ExecResult>(R"({"exitCode":0,"egress":{"allowed":[{"host":1}]}})", "t"), Error);
}

TEST_CASE("an answer without an exit code is never read as success") {
  CHECK_THROWS_AS(wire::read<ExecResult>("{}", "t"), Error);
  CHECK_THROWS_AS(wire::read<ExecResult>(R"({"exitCode":"0"})", "t"), Error);
  CHECK_THROWS_AS(wire::read<wire::ListResult>(R"({"sandboxes":{}})", "t"), Error);
  CHECK_THROWS_AS(wire::read<wire::ExecRequest>(R"({"sandbox":{"id":"x"}})", "t"), Error);
}

TEST_CASE("labels match only when every filter pair is there") {
  StringMap labels = wire::owner_labels("l", "s", "h");
  CHECK(wire::labels_match(labels, {}));
  CHECK(wire::labels_match(labels, {{wire::kOwnerLabel, wire::kOwnerValue}, {wire::kLeaseLabel, "l"}}));
  CHECK_FALSE(wire::labels_match(labels, {{wire::kLeaseLabel, "other"}}));
  CHECK_FALSE(wire::labels_match(labels, {{"missing", "x"}}));
}

TEST_CASE("any bytes make valid JSON") {
  Sandbox sb;
  sb.id = std::string("id\x00\x1b[2J\xff\xc0\xafz", 10);
  sb.labels = {{std::string("k\xfe", 2), std::string("\xed\xa0\x80v", 4)}};  // a surrogate
  std::string text = json::to_json(sb, false);
  Sandbox back = wire::read<Sandbox>(text, "t");  // throws when invalid
  CHECK(back.id.substr(0, 3) == std::string("id\x00", 3));
  CHECK(back.id.find("\xef\xbf\xbd") != std::string::npos);
  CHECK(back.labels.begin()->second.find("\xed") == std::string::npos);
  CHECK(back.labels.begin()->second.back() == 'v');
}

TEST_CASE("control bytes in long strings are escaped (RapidJSON's SSE2 writer would not)") {
  std::string text;
  for (int i = 0; i < 64; ++i) text += static_cast<char>(i % 32);
  text += std::string(40, '\x1b') + "end";
  Sandbox sb;
  sb.id = text;
  std::string json_text = json::to_json(sb, false);
  for (char c : json_text) CHECK(static_cast<unsigned char>(c) >= 0x20);
  CHECK(wire::read<Sandbox>(json_text, "t").id == text);
}

TEST_CASE("text for the terminal has no raw control characters") {
  CHECK(printable("a\x1b[31mb") == "a\\x1b[31mb");
  CHECK(printable("x\xc2\x9b" "1m") == "x\\u009b1m");
  CHECK(printable("line\nnext", true) == "line\nnext");
  CHECK(printable("line\nnext") == "line\\x0anext");
  CHECK(printable("caf\xc3\xa9") == "caf\xc3\xa9");  // ordinary UTF-8 untouched
  // Characters that reorder or break a line: a file name "evil\u202Etxt.exe" must not
  // show as "evilexe.txt".
  CHECK(printable("evil\xe2\x80\xaetxt.exe") == "evil\\u202etxt.exe");
  CHECK(printable("a\xe2\x81\xa6" "b\xe2\x81\xa9" "c\xe2\x80\x8f\xd8\x9c") == "a\\u2066b\\u2069c\\u200f\\u061c");
  CHECK(printable("one\xe2\x80\xa8two") == "one\\u2028two");
  // Their neighbours are ordinary punctuation: an en dash, a bullet, a per-mille sign.
  CHECK(printable("\xe2\x80\x93\xe2\x80\xa2\xe2\x80\xb0") == "\xe2\x80\x93\xe2\x80\xa2\xe2\x80\xb0");
  CHECK(printable("cut\xe2\x80") == "cut\xe2\x80");  // a sequence cut short is left as it is
}

TEST_CASE("a spec whose endpoint, file or program option is not trusted is refused") {
  const std::string base =
      R"({"name":"p","kind":"delegated-run","features":[],"docs":{},"options":[{"name":"api-url","type":"TYPE"TRUST}]})";
  auto spec = [&](const std::string& type, const std::string& trust) {
    std::string s = base;
    s.replace(s.find("TYPE"), 4, type);
    s.replace(s.find("TRUST"), 5, trust);
    return s;
  };
  for (const char* type : {"url", "host", "path", "program"}) {
    CAPTURE(type);
    try {
      json::spec_from_json(spec(type, ""));
      FAIL("an untrusted destination option loaded");
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find("api-url") != std::string::npos);
      CHECK(std::string(e.what()).find("trusted") != std::string::npos);
    }
    CHECK(json::spec_from_json(spec(type, R"(,"trusted":true)")).options.at(0).trusted);
  }
  CHECK_NOTHROW(json::spec_from_json(spec("string", "")));
  CHECK_THROWS_AS(json::spec_from_json(spec("uri", R"(,"trusted":true)")), Error);
}

TEST_CASE("removing deleted files never follows a link out of the workspace") {
  test::TempDir dir;
  fs::path ws = dir.path() / "ws";
  fs::path outside = dir.path() / "outside";
  dir.write("outside/victim.txt", "keep me");
  dir.write("ws/a/b/gone.txt", "x");
  dir.write("ws/a/stays.txt", "y");
  dir.write("ws/top.txt", "z");
  fs::create_directory_symlink(outside, ws / "link");

  sdk::remove_paths_under(ws, {"a/b/gone.txt", "top.txt", "link/victim.txt", "never/was.txt"});
  CHECK_FALSE(fs::exists(ws / "a/b/gone.txt"));
  CHECK_FALSE(fs::exists(ws / "a/b"));       // emptied folder removed
  CHECK(fs::exists(ws / "a/stays.txt"));     // non-empty folder kept
  CHECK_FALSE(fs::exists(ws / "top.txt"));
  CHECK(fs::exists(outside / "victim.txt"));  // not through the sandbox's symlink
  CHECK_THROWS_AS(sdk::remove_paths_under(ws, {"../outside/victim.txt"}), Error);
  CHECK_THROWS_AS(sdk::remove_paths_under(ws, {"/etc/passwd"}), Error);
  CHECK(fs::exists(outside / "victim.txt"));
}

TEST_CASE("removal batches stay under the argument limit and keep every path") {
  std::vector<std::string> paths;
  for (int i = 0; i < 5000; ++i) paths.push_back("dir/file-" + std::to_string(i) + ".txt");
  auto batches = sdk::removal_batches(paths, 4096);
  CHECK(batches.size() > 1);
  size_t total = 0;
  for (const auto& b : batches) {
    size_t bytes = 0;
    for (const auto& p : b) bytes += p.size() + 1;
    CHECK(bytes <= 4096);
    total += b.size();
  }
  CHECK(total == paths.size());
  CHECK(sdk::removal_batches({}).empty());
}

TEST_CASE("a spec with a misspelt field is refused, naming the field") {
  const std::string good = R"({"name":"p","kind":"delegated-run","features":[],"docs":{"bestFit":"x"},)"
                           R"("options":[{"name":"o","help":"h"}]})";
  CHECK_NOTHROW(json::spec_from_json(good));
  for (auto [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"\"features\"", "\"featurez\""}, {"\"bestFit\"", "\"bestfit\""}, {"\"help\"", "\"hepl\""}}) {
    std::string bad = good;
    bad.replace(bad.find(from), from.size(), to);
    CAPTURE(bad);
    try {
      json::spec_from_json(bad);
      FAIL("a misspelt field loaded");
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find(to.substr(1, to.size() - 2)) != std::string::npos);
    }
  }
}
