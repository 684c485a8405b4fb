// The CLI-level checks every remote provider passes, from one table keyed by provider
// name, credential variable and settings: what the provider refuses is refused before
// any API call (exit 64 with a hint), an API URL over plain http to another host is
// refused, a missing or refused key is exit 77 naming its variable, a redirect to another
// origin is refused without the key following it, and --keep-on-failure keeps only a
// failed run's sandbox. Each check runs `corral --provider NAME` against the provider's
// stand-in, and its fixture checks that the key never shows.
#include <doctest/doctest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "provider_cli.hpp"
#ifdef CORRAL_REMOTE_E2B
#include "e2b/e2b_cli.hpp"
#endif
#ifdef CORRAL_REMOTE_DAYTONA
#include "daytona/daytona_cli.hpp"
#endif

using namespace corral::test;

namespace {

// A setting the provider refuses when it opens, before any API call.
struct BadSetting {
  std::string flag;
  std::string value;
  std::string env;  // the variable the refusal names beside the flag; "": not asserted
};

// A provider's fixture, whatever its stand-in: the user, and what the checks ask of the
// stand-in.
class Remote {
 public:
  virtual ~Remote() = default;
  virtual ProviderCli& user() = 0;
  // Create calls the stand-in had.
  virtual int creates() = 0;
  // Its sandboxes that exist now.
  virtual std::vector<std::string> alive() = 0;
  // From now on it answers 401 to everything.
  virtual void refuse_key() = 0;
  // Starts another stand-in of the provider, with another key, and makes this one answer
  // every control-plane call with a redirect to it; false when its stand-in cannot.
  virtual bool redirect_elsewhere() = 0;
  // Create calls the other stand-in had.
  virtual int creates_elsewhere() = 0;
};

template <class Fixture>
class RemoteOf final : public Remote {
 public:
  ProviderCli& user() override { return fixture_; }
  int creates() override { return fixture_.server.calls("create"); }
  std::vector<std::string> alive() override { return fixture_.alive(); }
  void refuse_key() override {
    fixture_.fault([](auto& f) { f.reject_api_key = true; });
  }
  bool redirect_elsewhere() override {
    if constexpr (requires(Faults f) { f.redirect_to = std::string(); }) {
      elsewhere_ = std::make_unique<StandIn>("other-key");
      fixture_.fault([&](auto& f) { f.redirect_to = elsewhere_->api_url(); });
      return true;
    }
    return false;
  }
  int creates_elsewhere() override { return elsewhere_ ? elsewhere_->calls("create") : 0; }

 private:
  using StandIn = decltype(Fixture::server);
  using Faults = decltype(StandIn::state_type::faults);

  Fixture fixture_;
  std::unique_ptr<StandIn> elsewhere_;
};

// One row of the table.
struct RemoteProvider {
  std::string name;        // --provider NAME
  std::string key_env;     // the variable that holds the API key
  std::string url_env;     // the variable that holds the API URL
  std::string plain_http;  // an API URL over plain http to a host that is not this machine
  std::vector<BadSetting> refused;
  bool redirects;  // whether its stand-in can answer with a redirect to another origin
  std::function<std::unique_ptr<Remote>()> start;
};

std::vector<RemoteProvider> providers() {
  std::vector<RemoteProvider> rows;
#ifdef CORRAL_REMOTE_E2B
  rows.push_back({"e2b",
                  "E2B_API_KEY",
                  "E2B_API_URL",
                  "http://api.example.com",
                  {{"--e2b-workdir", "relative/path", ""},
                   {"--e2b-workdir", "/", ""},
                   {"--e2b-workdir", "/etc", ""},
                   {"--e2b-workdir", "/home/user", ""},
                   {"--e2b-user", "../root", ""},
                   {"--e2b-user", "a/b", ""},
                   {"--e2b-create-timeout", "0", "CORRAL_E2B_CREATE_TIMEOUT"},
                   {"--e2b-create-timeout", "2d", "CORRAL_E2B_CREATE_TIMEOUT"},
                   {"--e2b-request-timeout", "0", "CORRAL_E2B_REQUEST_TIMEOUT"},
                   {"--e2b-stall-timeout", "2s", "CORRAL_E2B_STALL_TIMEOUT"}},
                  true,
                  [] { return std::make_unique<RemoteOf<E2bCli>>(); }});
#endif
#ifdef CORRAL_REMOTE_DAYTONA
  rows.push_back({"daytona",
                  "DAYTONA_API_KEY",
                  "DAYTONA_API_URL",
                  "http://api.example.com/api",
                  {{"--daytona-workdir", "../up", ""},
                   {"--daytona-workdir", "/", ""},
                   {"--daytona-workdir", "/home/daytona", ""},
                   {"--daytona-user", "a/b", ""},
                   {"--daytona-auto-stop", "99999999", ""},
                   {"--daytona-create-timeout", "0", "CORRAL_DAYTONA_CREATE_TIMEOUT"},
                   {"--daytona-request-timeout", "2d", "CORRAL_DAYTONA_REQUEST_TIMEOUT"},
                   {"--daytona-start-timeout", "0s", "CORRAL_DAYTONA_START_TIMEOUT"}},
                  false,
                  [] { return std::make_unique<RemoteOf<DaytonaCli>>(); }});
#endif
  return rows;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("settings a remote provider refuses are exit 64 with a hint naming them, before any API call") {
  for (const RemoteProvider& p : providers()) {
    auto remote = p.start();
    for (const BadSetting& bad : p.refused) {
      CliResult r = remote->user().run_script("true", {bad.flag, bad.value});
      INFO(p.name, ": ", bad.flag, " ", bad.value, ": ", r.err);
      CHECK(r.exit_code == 64);
      CHECK(has(r.err, "hint:"));
      if (!bad.env.empty()) CHECK((has(r.err, bad.flag) && has(r.err, bad.env)));
    }
    INFO(p.name);
    CHECK(remote->creates() == 0);
    CHECK(remote->alive().empty());
  }
}

TEST_CASE("an API URL over plain http to another host is refused before any API call") {
  for (const RemoteProvider& p : providers()) {
    auto remote = p.start();
    remote->user().cli.env[p.url_env] = p.plain_http;
    CliResult r = remote->user().run_script("true");
    INFO(p.name, ": ", r.err);
    CHECK(r.exit_code == 64);
    CHECK(has(r.err, "plain http"));
    CHECK(remote->creates() == 0);
    CHECK(remote->alive().empty());
  }
}

TEST_CASE("no API key at all is exit 77 naming its variable, and nothing is sent") {
  for (const RemoteProvider& p : providers()) {
    auto remote = p.start();
    remote->user().cli.env[p.key_env] = "";
    CliResult r = remote->user().run_script("true");
    INFO(p.name, ": ", r.err);
    CHECK(r.exit_code == 77);
    CHECK(has(r.err, p.key_env + " is not set"));
    CHECK(remote->creates() == 0);
    CHECK(remote->alive().empty());
  }
}

TEST_CASE("a key the API refuses (401) is exit 77 saying to check its variable") {
  for (const RemoteProvider& p : providers()) {
    auto remote = p.start();
    remote->refuse_key();
    CliResult r = remote->user().run_script("true");
    INFO(p.name, ": ", r.err);
    CHECK(r.exit_code == 77);
    CHECK(has(r.err, "check " + p.key_env));
    CHECK(remote->alive().empty());
  }
}

TEST_CASE("a redirect to another origin is refused; the key does not follow") {
  for (const RemoteProvider& p : providers()) {
    auto remote = p.start();
    REQUIRE(remote->redirect_elsewhere() == p.redirects);
    if (!p.redirects) continue;
    CliResult r = remote->user().run_script("true");
    INFO(p.name, ": ", r.err);
    CHECK(r.exit_code == 64);
    CHECK(has(r.err, "refused a redirect"));
    CHECK(remote->creates_elsewhere() == 0);
    CHECK(remote->alive().empty());
  }
}

TEST_CASE("--keep-on-failure keeps only a failed run's sandbox") {
  for (const RemoteProvider& p : providers()) {
    INFO(p.name);
    auto remote = p.start();
    ProviderCli& t = remote->user();
    CHECK(t.run_script("true", {"--keep-on-failure"}).exit_code == 0);
    CHECK(corral::json::get_bool(t.handle(), "kept") == false);
    CHECK(remote->alive().empty());
    CHECK(t.run_script("exit 2", {"--keep-on-failure"}).exit_code == 2);
    auto h = t.handle();
    CHECK(corral::json::get_bool(h, "kept"));
    CHECK(remote->alive() == std::vector<std::string>{corral::json::get_string(h, "sandboxId")});
    CHECK(t.run({"stop", "--id", corral::json::get_string(h, "leaseId")}).exit_code == 0);
    CHECK(remote->alive().empty());
  }
}
