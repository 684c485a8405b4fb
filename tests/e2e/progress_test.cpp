// --progress: the run's phases as JSON lines for front-ends, as a live line on a
// terminal that is gone before the command's first byte, and nothing otherwise.
#include <doctest/doctest.h>

#include <map>
#include <sstream>

#include "cli.hpp"
#include "corral/json.hpp"
#include "corral/os/process.hpp"
#include "progress_events.hpp"

using corral::test::CliEnv;
using corral::test::CliResult;
namespace progress = corral::test::progress;

namespace {

constexpr char kErase[] = "\r\033[K";

// A workspace of about 3 MB that does not compress, so packing and uploading it take steps.
std::uint64_t big_workspace(const CliEnv& env) {
  const std::string data = corral::test::random_bytes(3 << 20);
  env.root().write("work/data.bin", data);
  env.root().write("work/small.txt", "small\n");
  return data.size() + 6;
}

// testbox: a provider that takes the workspace as an archive, so a run packs it first.
void add_testbox(CliEnv& env) {
  env.add_registry("testbox", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so"});
  const std::filesystem::path boxes = env.root().path() / "boxes";
  std::filesystem::create_directories(boxes);
  env.env["TESTBOX_DIR"] = boxes.string();
}

}  // namespace

TEST_CASE("--progress json: one object a line per phase event, in phase order, bytes rising to the total") {
  CliEnv env;
  add_testbox(env);
  const std::uint64_t workspace_bytes = big_workspace(env);
  CliResult r = env.run({"run", "--provider", "testbox", "--progress", "json", "--", "sh", "-c",
                         "echo out; printf 'half' >&2; printf ' line' >&2"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "out\n");
  progress::Run run = progress::parse(r.err);
  // The command's stderr stays whole: the event that came while it was mid-line (the end
  // of exec) waits for that line to end, and corral ends it at exit.
  CHECK(run.other == std::vector<std::string>{"half line"});
  CHECK(run.first("exec", "done") < run.events.size());
  progress::check_upload_run(run);
  CHECK(run.total("pack") == workspace_bytes);
  CHECK_MESSAGE(run.steps("pack") >= 1, "packing 3 MB reports the bytes read on the way");
}

TEST_CASE("--progress json on the local provider: no pack, the upload counts the files copied") {
  CliEnv env;
  const std::uint64_t workspace_bytes = big_workspace(env);
  CliResult r = env.run({"run", "--provider", "local", "--progress", "json", "--", "cat", "small.txt"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out == "small\n");
  progress::Run run = progress::parse(r.err);
  progress::check_well_formed(run);
  CHECK_FALSE(run.has("pack"));  // tree-sync: the plugin copies the files, nothing is packed
  CHECK(run.total("upload") == workspace_bytes);
  CHECK(run.reached_total("upload"));
  CHECK(run.first("upload", "start") > run.first("create", "done"));
  CHECK(run.first("exec", "start") > run.first("upload", "done"));
}

TEST_CASE("without --progress a stderr that is not a terminal gets nothing but the command's own") {
  CliEnv env;
  big_workspace(env);
  CliResult r = env.run({"run", "--provider", "local", "--", "sh", "-c", "echo err >&2"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err == "err\n");
}

TEST_CASE("--progress takes auto, never or json; anything else is a usage error (64)") {
  CliEnv env;
  for (const char* command : {"run", "warmup", "fork"}) {
    std::vector<std::string> args = {command, "--progress", "bogus"};
    if (std::string(command) == "fork") args.insert(args.end(), {"--id", "nothing"});
    if (std::string(command) == "run") args.insert(args.end(), {"--", "true"});
    CliResult r = env.run(args);
    CHECK_MESSAGE(r.exit_code == 64, command);
    CHECK_MESSAGE(r.err.find("--progress bogus") != std::string::npos, r.err);
    CHECK(env.claims().empty());
  }
}

TEST_CASE("on a terminal the live line is drawn, then erased before the command's first output byte") {
  CliEnv env;
  big_workspace(env);
  CliResult r = env.run_on_terminal({"run", "--provider", "local", "--", "sh", "-c", "echo FIRST-OUTPUT >&2"}, 100);
  REQUIRE(r.exit_code == 0);
  const size_t output = r.out.find("FIRST-OUTPUT");
  REQUIRE(output != std::string::npos);
  const std::string before = r.out.substr(0, output);
  CHECK_MESSAGE(before.find("\rcorral: ") != std::string::npos, "no live line was drawn: " << before);
  // The bytes right before the output erase the line: nothing of it is left beside the output.
  REQUIRE(before.size() >= sizeof kErase - 1);
  CHECK(before.substr(before.size() - (sizeof kErase - 1)) == kErase);
  // Every line drawn fits in 99 columns (a full line would wrap on some terminals).
  std::istringstream draws(before);
  for (std::string part; std::getline(draws, part, '\r');)
    if (part.rfind("corral: ", 0) == 0) CHECK(part.substr(0, part.find('\033')).size() <= 99);
  // After the output, nothing is drawn that stays: the run ends on a clean line.
  const std::string after = r.out.substr(output);
  const size_t last_draw = after.rfind("\rcorral: ");
  if (last_draw != std::string::npos) CHECK(after.rfind(kErase) > last_draw);
}

TEST_CASE("--progress never, and a terminal too narrow for a line, draw nothing on a terminal") {
  CliEnv env;
  big_workspace(env);
  SUBCASE("--progress never") {
    CliResult r =
        env.run_on_terminal({"run", "--provider", "local", "--progress", "never", "--", "echo", "hi"}, 100);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "hi\r\n");
  }
  SUBCASE("a terminal of 10 columns") {
    CliResult r = env.run_on_terminal({"run", "--provider", "local", "--", "echo", "hi"}, 10);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("corral: ") == std::string::npos);
    CHECK(r.out.find("hi\r\n") != std::string::npos);
  }
}

TEST_CASE("a closed stderr: the run still works and no progress lands in a file corral opens") {
  CliEnv env;
  big_workspace(env);
  corral::os::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&-", corral::test::corral_binary(),
               "run",     "--provider", "local",      "--progress", "json", "--keep", "--", "echo", "hi"};
  spec.env = env.environment();
  spec.cwd = env.workspace().string();
  corral::os::CapturedProcess p = corral::os::capture_process(spec, 300);
  REQUIRE(p.exit_code == 0);
  CHECK(p.out.find("hi\n") != std::string::npos);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(env.state_dir()))
    if (entry.is_regular_file())
      CHECK_MESSAGE(corral::test::read_file(entry.path()).find("\"phase\"") == std::string::npos, entry.path());
  CHECK(env.run({"stop", "--id", env.only_lease()}).exit_code == 0);
}

TEST_CASE("--progress json with --shards: each shard's phases carry its index, the shared pack none") {
  CliEnv env;
  add_testbox(env);
  big_workspace(env);
  CliResult r = env.run({"run", "--provider", "testbox", "--shards", "2", "--progress", "json", "--", "true"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  progress::Run run = progress::parse(r.err);
  progress::check_well_formed(run);
  CHECK(run.reached_total("pack"));  // packed once, for every shard
  for (int shard = 0; shard < 2; ++shard) {
    INFO("shard ", shard);
    CHECK(run.first("create", "done", shard) < run.first("upload", "start", shard));
    CHECK(run.first("upload", "done", shard) < run.first("exec", "start", shard));
    CHECK(run.reached_total("upload", shard));
    CHECK(run.first("exec", "done", shard) < run.events.size());
  }
}
