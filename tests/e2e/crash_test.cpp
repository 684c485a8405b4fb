// A plugin that crashes or hangs while loading breaks nothing else: commands that need no
// provider never look at it, listings show it broken, and other providers still run.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>

#include "cli.hpp"
#include "corral/json.hpp"
#include "plugin_host/spec_cache.hpp"

namespace fs = std::filesystem;
using corral::test::CliEnv;

namespace {

const std::string kDir = CORRAL_TEST_PLUGIN_DIR;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A user with three plugins that take down whoever loads them: a constructor that
// segfaults (raw5), an entry point that segfaults (raw6) and one that never returns (raw7).
struct CrashingPlugins {
  CrashingPlugins() {
    env.env["CORRAL_PLUGIN_PROBE_TIMEOUT"] = "1";
    env.add_registry("crashing", {kDir + "/libcorral-raw5.so", kDir + "/libcorral-raw6.so", kDir + "/libcorral-raw7.so"});
  }
  fs::path cache_dir() const { return env.root().path() / "home/.cache/corral/specs"; }
  CliEnv env;
};

// The inode and mtime of a file: rewriting a cache entry (temp file + rename) changes both.
std::pair<ino_t, std::int64_t> identity(const fs::path& file) {
  struct stat st {};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  return {st.st_ino, std::int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec};
}

}  // namespace

TEST_CASE("version and --help load and probe no plugin, even a crashing one") {
  CrashingPlugins user;
  auto version = user.env.run({"version"});
  CHECK(version.exit_code == 0);
  CHECK(contains(version.out, "corral "));
  auto help = user.env.run({"--help"});
  CHECK(help.exit_code == 0);
  CHECK(contains(help.out, "run"));
  CHECK_FALSE(fs::exists(user.cache_dir()));  // nothing was probed
}

TEST_CASE("version works with a registry that is not even YAML") {
  CliEnv env;
  env.root().write("config/corral/providers.d/broken.yaml", "plugins: [unclosed\n");
  auto version = env.run({"version"});
  CHECK(version.exit_code == 0);
  CHECK(version.err.empty());
}

TEST_CASE("run on local works with crashing and hanging plugins registered") {
  CrashingPlugins user;
  auto start = std::chrono::steady_clock::now();
  auto first = user.env.run({"run", "--", "true"});
  CHECK_MESSAGE(first.exit_code == 0, first.err);
  auto probed = std::chrono::steady_clock::now() - start;
  CHECK(probed >= std::chrono::seconds(1));  // the hanging one was waited for, once

  start = std::chrono::steady_clock::now();
  auto again = user.env.run({"run", "--", "echo", "fine"});
  CHECK_MESSAGE(again.exit_code == 0, again.err);
  CHECK(again.out == "fine\n");
  CHECK(std::chrono::steady_clock::now() - start < probed);  // cached: the hang is not waited for again
}

TEST_CASE("providers lists crashing and hanging plugins as broken, with the cause") {
  CrashingPlugins user;
  auto list = user.env.run({"providers"});
  CHECK_MESSAGE(list.exit_code == 0, list.err);
  CHECK(contains(list.out, "local"));
  CHECK(contains(list.out, "libcorral-raw5.so [crashed]: plugin " + kDir + "/libcorral-raw5.so: crashed while loading (SIGSEGV)"));
  CHECK(contains(list.out, "libcorral-raw6.so [crashed]:"));
  CHECK(contains(list.out, "libcorral-raw7.so [hung]:"));
  CHECK(contains(list.out, "still loading after 1 s"));

  auto json = user.env.run({"providers", "--json"});
  REQUIRE(json.exit_code == 0);
  auto doc = corral::json::parse(json.out, "providers");
  std::map<std::string, std::string> causes;
  for (auto& p : doc.GetArray())
    if (!p["ok"].GetBool()) causes[p["name"].GetString()] = p["error"]["cause"].GetString();
  CHECK(causes["libcorral-raw5.so"] == "crashed");
  CHECK(causes["libcorral-raw6.so"] == "crashed");
  CHECK(causes["libcorral-raw7.so"] == "hung");

  auto use = user.env.run({"run", "--provider", "raw5", "--", "true"});
  CHECK(use.exit_code == 78);
  CHECK(contains(use.err, "crashed while loading (SIGSEGV)"));
}

TEST_CASE("a plugin's probe is reused until its file changes") {
  CliEnv env;
  fs::path lib = env.root().path() / "plugins/libcorral-testbox.so";
  fs::create_directories(lib.parent_path());
  fs::copy_file(kDir + "/libcorral-testbox.so", lib);
  env.add_registry("mine", {lib.string()});
  const corral::SpecCache cache(env.root().path() / "home/.cache/corral/specs");
  const fs::path entry = cache.file_for(fs::canonical(lib));

  REQUIRE(env.run({"providers"}).exit_code == 0);
  REQUIRE(fs::exists(entry));
  auto probed = identity(entry);
  auto second = env.run({"providers"});
  CHECK(contains(second.out, "testbox"));
  CHECK(identity(entry) == probed);  // no probe ran: the entry was not rewritten

  fs::last_write_time(lib, fs::last_write_time(lib) + std::chrono::seconds(5));
  auto changed = env.run({"providers"});
  CHECK(contains(changed.out, "testbox"));
  CHECK(identity(entry) != probed);

  std::ofstream(entry, std::ios::trunc) << "not json";
  auto corrupt = env.run({"providers"});
  CHECK(contains(corrupt.out, "testbox"));
  CHECK(cache.get(fs::canonical(lib)));  // probed again and stored whole
}
