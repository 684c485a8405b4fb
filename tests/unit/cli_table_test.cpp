// The command table and the parser built from it: everything --help, a man page or shell
// completion needs is reachable without running a command.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "command.hpp"
#include "command_line.hpp"

using namespace corral::cli;

namespace {

// The CLI11 subcommand of table row `c`.
const CLI::App* app_of(const CLI::App& root, const Command& c) {
  const CLI::App* parent = c.parent.empty() ? &root : root.get_subcommand(std::string(c.parent));
  return parent->get_subcommand(std::string(c.name));
}

size_t count_subcommands(const CLI::App& app) {
  size_t n = 0;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    n += 1 + count_subcommands(*sub);
  return n;
}

}  // namespace

TEST_CASE("every command of the table is on the command line with its summary, and every option has help") {
  CommandLine line;
  const CLI::App& root = line.app();
  CHECK(count_subcommands(root) == command_table().size());
  for (const Command* c : command_table()) {
    CAPTURE(c->name);
    const CLI::App* app = app_of(root, *c);
    CHECK(!c->summary.empty());
    CHECK(app->get_description() == c->summary);
    // Its details first, then what its exit status says (the run's command's own, or 0).
    const std::string footer = app->get_footer();
    CHECK(footer.rfind(std::string(c->details), 0) == 0);
    const std::string status = c->exit_status.empty() ? "0 when it succeeded" : std::string(c->exit_status);
    CHECK(footer.find("Exit status: " + status + "; corral's own failures use") != std::string::npos);
    for (const CLI::Option* o : app->get_options()) {
      CAPTURE(o->get_name());
      CHECK(!o->get_description().empty());
    }
  }
  CHECK(app_of(root, *find_command("run"))->get_option("command")->get_positional());
}

TEST_CASE("corral's own flags, which provider option flags never take, are every long option of every command") {
  CommandLine line;
  const std::vector<std::string> reserved = line.reserved_flags();
  auto has = [&](const std::string& name) { return std::find(reserved.begin(), reserved.end(), name) != reserved.end(); };
  // Each flag corral had when this list was kept by hand; the dashed ones are those a
  // provider named like their first word could otherwise take.
  for (const char* flag : {"provider", "id", "keep", "keep-on-failure", "lease-output", "env", "timeout",
                           "max-workspace", "shell", "download", "download-dir", "max-download", "json", "verbose",
                           "help", "port", "by", "all", "orphans", "remote", "feature", "kind", "all-hosts", "network",
                           "shards", "fail-fast", "max-parallel", "shard-output", "only", "check-timeout",
                           "network-target"}) {
    CAPTURE(flag);
    CHECK(has(flag));
  }
  // Nested commands' options too (docs matrix --format).
  CHECK(has("format"));
  CHECK(has("dir"));
}

TEST_CASE("provider options go to the commands that open a provider; only version and completion need no settings") {
  std::set<std::string> taking, bare;
  for (const Command* c : command_table()) {
    if (c->provider_options) taking.emplace(c->name);
    if (!c->needs_settings) bare.emplace(c->name);
  }
  CHECK(taking ==
        std::set<std::string>{"run", "warmup", "list", "status", "stop", "url", "extend", "pause", "resume", "fork",
                              "fill", "doctor", "conformance", "mcp", "shell"});
  CHECK(bare == std::set<std::string>{"version", "completion", "__complete"});
  REQUIRE(find_command("describe") == nullptr);  // a child is found under its parent only
  REQUIRE(find_command("providers") != nullptr);
}
