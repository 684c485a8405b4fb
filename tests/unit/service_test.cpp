// The service layer's own rules, without a provider: what a front end's spec turns into
// (the run's request with its defaults resolved), what it refuses, and the JSON forms the
// service owns (the refill's request read back as it was written, the stop modes).
#include <doctest/doctest.h>

#include <cstdlib>

#include "cli.hpp"
#include "corral/errors.hpp"
#include "service/leases.hpp"
#include "service/refill.hpp"
#include "service/run_spec.hpp"

using namespace corral;
using corral::test::TempDir;

namespace {

// A Ui that says nothing and is never cancelled.
struct QuietUi : Ui {
  void out(std::string_view) override {}
  void err(std::string_view) override {}
  void info(const std::string&) override {}
  void note(const std::string&) override {}
  void warn(const std::string&) override {}
  void progress(const std::string&) override {}
  bool cancelled() override { return false; }
};

// A Session whose state folder is a temporary one, with `user_yaml` as the user's config.
struct ServiceKit {
  explicit ServiceKit(const std::string& user_yaml = "") {
    ::setenv("XDG_STATE_HOME", (root.path() / "state").c_str(), 1);
    std::optional<ConfigFile> user;
    if (!user_yaml.empty()) user = ConfigFile{root.path() / "config.yaml", YAML::Load(user_yaml)};
    session.emplace(Config::from(user, std::nullopt));
  }
  ~ServiceKit() { ::unsetenv("XDG_STATE_HOME"); }

  TempDir root;
  std::optional<service::Session> session;
  QuietUi ui;
};

// A run spec of `make test` in `cwd`.
service::RunSpec make_test(const std::filesystem::path& cwd) {
  service::RunSpec spec;
  spec.sandbox.cwd = cwd;
  spec.argv = {"make", "test"};
  return spec;
}

// The message of what `call` throws, which must be invalid-argument.
template <typename Call>
std::string refusal(Call call) {
  try {
    call();
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::invalid_argument);
    return e.what();
  }
  FAIL("not refused");
  return "";
}

}  // namespace

TEST_CASE("a run spec becomes the run's request with sizes, durations and defaults resolved") {
  ServiceKit kit("idle: pause\n");
  service::RunSpec spec = make_test(kit.root.path());
  spec.timeout = "1m30s";
  spec.sandbox.max_workspace = "2M";
  spec.sandbox.network = "none";
  spec.downloads = {"reports/*.xml"};
  spec.max_download = "1K";
  const RunRequest r = service::run_request(*kit.session, kit.ui, spec);
  CHECK(r.command.argv == std::vector<std::string>{"make", "test"});
  CHECK(r.command.timeout_seconds == 90);
  CHECK(r.max_workspace == 2u << 20);
  CHECK(r.downloads.max_bytes == 1024u);
  REQUIRE(r.network);
  CHECK(to_string(*r.network) == "none");
  CHECK(r.cwd == kit.root.path());
  SUBCASE("the idle action comes from the config unless given, and only a given one is marked so") {
    CHECK(r.idle == "pause");
    CHECK_FALSE(r.idle_given);
    spec.sandbox.idle = "stop";
    const RunRequest given = service::run_request(*kit.session, kit.ui, spec);
    CHECK(given.idle == "stop");
    CHECK(given.idle_given);
  }
  SUBCASE("no refill without corral's own executable to start") { CHECK_FALSE(r.refill); }
}

TEST_CASE("a run spec that cannot be run is refused, naming what is wrong") {
  ServiceKit kit;
  service::RunSpec spec = make_test(kit.root.path());
  SUBCASE("no command") {
    spec.argv.clear();
    CHECK(refusal([&] { service::run_request(*kit.session, kit.ui, spec); }).find("no command") != std::string::npos);
  }
  SUBCASE("a shell string and argv both") {
    spec.shell = "make";
    CHECK(refusal([&] { service::run_request(*kit.session, kit.ui, spec); }).find("not both") != std::string::npos);
  }
  SUBCASE("fan-out options without a fan-out") {
    spec.fanout.fail_fast = true;
    CHECK(refusal([&] { service::run_request(*kit.session, kit.ui, spec); }).find("only apply to a fan-out") !=
          std::string::npos);
  }
  SUBCASE("a download folder without a download, and a download bound of 0") {
    spec.download_dir = "out";
    CHECK(refusal([&] { service::run_request(*kit.session, kit.ui, spec); }).find("without --download") !=
          std::string::npos);
    spec.downloads = {"x"};
    spec.max_download = "0";
    CHECK(refusal([&] { service::run_request(*kit.session, kit.ui, spec); }).find("above 0") != std::string::npos);
  }
  SUBCASE("a size or duration that is none") {
    spec.sandbox.max_workspace = "big";
    CHECK_THROWS_AS(service::run_request(*kit.session, kit.ui, spec), Error);
    spec.sandbox.max_workspace = "1M";
    spec.timeout = "soon";
    CHECK_THROWS_AS(service::run_request(*kit.session, kit.ui, spec), Error);
  }
}

TEST_CASE("a refill's request is read back as it was written, without other providers' flags") {
  PoolRefill refill;
  refill.pool.provider = "testbox";
  refill.pool.choice.option_flags = {{"testbox.tier", "extra large"}, {"e2b.template", "base"}};
  refill.pool.network = parse_network_policy("allow:pypi.org");
  refill.pool.root = "/work/tree";
  refill.size = 3;
  refill.ttl_seconds = 600;
  refill.max_workspace = 5u << 20;
  const FillRequest back = service::fill_request_from_json(service::refill_to_json(refill));
  CHECK(back.choice.provider == "testbox");
  CHECK(back.choice.option_flags == StringMap{{"testbox.tier", "extra large"}});
  REQUIRE(back.network);
  CHECK(to_string(*back.network) == "allow:pypi.org");
  CHECK(back.cwd == "/work/tree");
  CHECK(back.size == 3);
  CHECK(back.ttl_seconds == 600);
  CHECK(back.max_workspace == 5u << 20);
  CHECK_THROWS_AS(service::fill_request_from_json("[1]"), Error);
  CHECK_THROWS_AS(service::fill_request_from_json(R"({"size":1})"), Error);
}

TEST_CASE("stop takes one of a lease, all, or orphans; none means the only lease there is") {
  ServiceKit kit;
  try {
    service::stop(*kit.session, kit.ui, {});
    FAIL("a stop of the only lease, with none here, stopped something");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::not_found);
    CHECK(std::string(e.what()) == "corral stop: there is no kept lease here to act on");
  }
  CHECK(refusal([&] { service::stop(*kit.session, kit.ui, {.lease = "x", .all = true}); }).find("takes one of") !=
        std::string::npos);
  CHECK(refusal([&] { service::stop(*kit.session, kit.ui, {.all = true, .all_hosts = true}); })
            .find("goes with --orphans") != std::string::npos);
  SUBCASE("all, with no lease here, stops nothing") {
    CHECK(service::stop(*kit.session, kit.ui, {.all = true}).empty());
  }
}
