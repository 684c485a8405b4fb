// The SDK's kit for remote providers (corral/sdk/remote): the words of the shared errors,
// the status table a provider words its failed answers with, doctor's two checks, the
// settings checks, the owner labels and their exact filter, the sweep of a failed
// create's strays, paged lists, command hooks and step failures.
// A provider written only for these tests stands in for E2B and Daytona.
#include <doctest/doctest.h>

#include "corral/sdk/remote/text_command.hpp"

#include <algorithm>
#include <map>

#include "corral/sdk/remote/command_hooks.hpp"
#include "corral/sdk/remote/doctor.hpp"
#include "corral/sdk/remote/error_table.hpp"
#include "corral/sdk/remote/errors.hpp"
#include "corral/sdk/remote/ownership.hpp"
#include "corral/sdk/remote/paged_list.hpp"
#include "corral/sdk/remote/settings.hpp"
#include "corral/sdk/remote/step_failure.hpp"
#include "corral/sdk/remote/strays.hpp"
#include "corral/wire.hpp"

using namespace corral;
namespace remote = corral::sdk::remote;

namespace {

ProviderSpec acme_spec() {
  ProviderSpec spec;
  spec.name = "acme";
  spec.options = {OptionSpec{.name = "api-key", .env = {"ACME_API_KEY"}, .secret = true},
                  OptionSpec{.name = "api-url", .type = "url", .env = {"ACME_API_URL"}, .trusted = true},
                  OptionSpec{.name = "workdir", .env = {"CORRAL_ACME_WORKDIR"}},
                  OptionSpec{.name = "user", .env = {"CORRAL_ACME_USER"}},
                  OptionSpec{.name = "create-timeout", .type = "duration", .env = {"CORRAL_ACME_CREATE_TIMEOUT"}}};
  return spec;
}

Error acme_error(const sdk::http::Response& response, const std::string& what) {
  return Error(ErrorCode::quota, what + ": acme says no (" + std::to_string(response.status) + ")");
}

const remote::Identity& acme() {
  static const remote::Identity identity{"Acme", sdk::SettingNames(acme_spec()), "https://acme.example/keys",
                                         "Acme deletes idle sandboxes", &acme_error};
  return identity;
}

// The host's services, recording what a plugin told the user.
class RecordingHost {
 public:
  RecordingHost() {
    table_.struct_size = sizeof(corral_host_v1);
    table_.result = [](void*, const char*, size_t) {};
    table_.error = [](void*, int, const char*, const char*) {};
    table_.emit = [](void* call, int stream, const char* data, size_t len) {
      (stream == CORRAL_STDOUT ? self(call).out : self(call).err).append(data, len);
    };
    table_.cancelled = [](void* call) -> int { return self(call).cancel ? 1 : 0; };
    table_.log = [](void* call, int level, const char* message) {
      if (level == CORRAL_LOG_WARN) self(call).warnings.emplace_back(message);
    };
    table_.progress = [](void*, const char*) {};
  }
  sdk::Host host() { return sdk::Host(&table_, this); }

  std::string out, err;
  std::vector<std::string> warnings;
  bool cancel = false;

 private:
  static RecordingHost& self(void* call) { return *static_cast<RecordingHost*>(call); }
  corral_host_v1 table_{};
};

// A provider whose control plane is a map; its list may fail, and its filter is as loose
// as a real one can be: it ignores the labels altogether.
class MapProvider : public sdk::Provider {
 public:
  Sandbox create(const CreateRequest&, const sdk::Host&) override { throw Error(ErrorCode::internal, "unused"); }
  std::vector<Sandbox> list(const StringMap& labels, const sdk::Host&) override {
    asked.push_back(labels);
    if (list_fails) throw Error(ErrorCode::auth, "Acme list sandboxes: HTTP 401", "check ACME_API_KEY");
    return remote::list_owned(
        labels, [this](const StringMap&) { return sandboxes; }, [](const Sandbox& s) { return s; });
  }
  void destroy(const Sandbox& sandbox, const sdk::Host&) override { destroyed.push_back(sandbox.id); }
  ExecResult exec(const Sandbox&, const Command&, const sdk::Host&) override { return {}; }

  std::vector<Sandbox> sandboxes;
  bool list_fails = false;
  std::vector<StringMap> asked;
  std::vector<std::string> destroyed;
};

Sandbox sandbox(const std::string& id, StringMap labels) {
  Sandbox s;
  s.id = id;
  s.labels = std::move(labels);
  return s;
}

sdk::http::Response answer(long status) {
  sdk::http::Response r;
  r.status = status;
  return r;
}

}  // namespace

TEST_CASE("the shared errors say the same for every provider, in its own names") {
  const Error key = remote::missing_api_key(acme());
  CHECK(key.code() == ErrorCode::auth);
  CHECK(std::string(key.what()) == "ACME_API_KEY is not set");
  CHECK(key.hint() == "export ACME_API_KEY with a key from https://acme.example/keys");
  const Error gone = remote::sandbox_gone(acme(), "sb-1");
  CHECK(gone.code() == ErrorCode::not_found);
  CHECK(std::string(gone.what()) == "Acme sandbox sb-1 no longer exists");
  CHECK(gone.hint() == "Acme deletes idle sandboxes");
  const Error late = remote::command_timed_out(acme(), 300, "sb-1");
  CHECK(late.code() == ErrorCode::timeout);
  CHECK(std::string(late.what()) == "the command did not finish within 5m; it was stopped in Acme sandbox sb-1");
}

TEST_CASE("an answer about one sandbox: 2xx passes, 404 is gone, anything else is the provider's error") {
  CHECK_NOTHROW(remote::expect_sandbox(acme(), answer(200), "get sb-1", "sb-1"));
  CHECK_THROWS_WITH_AS(remote::expect_sandbox(acme(), answer(404), "get sb-1", "sb-1"),
                       "Acme sandbox sb-1 no longer exists", Error);
  CHECK_THROWS_WITH_AS(remote::expect_sandbox(acme(), answer(500), "get sb-1", "sb-1"),
                       "get sb-1: acme says no (500)", Error);
  CHECK(remote::deleted(acme(), answer(204), "delete sb-1"));
  CHECK_FALSE(remote::deleted(acme(), answer(404), "delete sb-1"));
  CHECK_THROWS_WITH_AS(remote::deleted(acme(), answer(409), "delete sb-1"), "delete sb-1: acme says no (409)", Error);
  // A provider that gives no reading of its own gets the SDK's.
  remote::Identity plain{"Plain", sdk::SettingNames(acme_spec()), "", "", nullptr};
  try {
    remote::deleted(plain, answer(503), "delete sb-1");
    FAIL("a 503 passed");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::unavailable);
  }
}

TEST_CASE("doctor: a missing key is one failed check; a set key is tried against the control plane") {
  RecordingHost rec;
  MapProvider provider;
  provider.sandboxes = {sandbox("a", {{wire::kOwnerLabel, wire::kOwnerValue}}), sandbox("foreign", {})};
  const remote::ControlPlane plane{"Acme API", "https://api.acme.example"};

  auto checks = remote::doctor_checks(acme(), "", plane, provider, rec.host());
  REQUIRE(checks.size() == 1);
  CHECK(checks[0].name == "Acme API key");
  CHECK_FALSE(checks[0].ok);
  CHECK(checks[0].detail == "ACME_API_KEY is not set");
  CHECK(checks[0].hint == "export ACME_API_KEY with a key from https://acme.example/keys");
  CHECK(provider.asked.empty());

  checks = remote::doctor_checks(acme(), "secret", plane, provider, rec.host());
  REQUIRE(checks.size() == 2);
  CHECK(checks[0].ok);
  CHECK(checks[0].detail == "ACME_API_KEY is set");
  CHECK(checks[1].name == "Acme API");
  CHECK(checks[1].ok);
  CHECK(checks[1].detail == "https://api.acme.example accepts the key; 1 corral sandbox(es)");

  provider.list_fails = true;
  checks = remote::doctor_checks(acme(), "secret", plane, provider, rec.host());
  REQUIRE(checks.size() == 2);
  CHECK_FALSE(checks[1].ok);
  CHECK(checks[1].detail == "Acme list sandboxes: HTTP 401");
  CHECK(checks[1].hint == "check ACME_API_KEY");
}

TEST_CASE("settings: URLs lose trailing slashes and must be safe; workdir, user and time limits name their setting") {
  const sdk::Options options(StringMap{{"api-url", "http://127.0.0.1:8/api//"}, {"create-timeout", "2d"}});
  CHECK(remote::url_option(options, acme(), "api-url", "https://x.example") == "http://127.0.0.1:8/api");
  CHECK(remote::url_option(sdk::Options{}, acme(), "api-url", "https://x.example/") == "https://x.example");
  CHECK_THROWS_AS(remote::url_option(sdk::Options(StringMap{{"api-url", "http://api.acme.example"}}), acme(),
                                     "api-url", ""),
                  Error);
  CHECK(remote::without_trailing_slash("/") == "/");

  CHECK_NOTHROW(remote::check_workdir(acme(), "/home/acme/work", false, "/home/acme/work"));
  CHECK_NOTHROW(remote::check_workdir(acme(), "work", true, "'work'"));
  for (const char* bad : {"work", "/", "/etc", "/home/acme", "/a/../b"}) {
    CAPTURE(bad);
    try {
      remote::check_workdir(acme(), bad, false, "/home/acme/work");
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::invalid_argument);
      CHECK(std::string(e.what()).rfind("Acme workdir '" + std::string(bad) + "' ", 0) == 0);
      CHECK(e.hint() == "set --acme-workdir (or CORRAL_ACME_WORKDIR) to a dedicated absolute folder such as "
                        "/home/acme/work; every sync unpacks the workspace over it");
    }
  }

  for (const char* good : {"user", "_svc", "a.b-c_1", "root"}) CHECK_NOTHROW(remote::check_user(acme(), good, "'x'"));
  for (const char* bad : {"", "Root", "a/b", "a..b", "1abc", "abcdefghijklmnopqrstuvwxyz0123456"}) {
    CAPTURE(bad);
    try {
      remote::check_user(acme(), bad, "'user' or 'root'");
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(std::string(e.what()) == "Acme user '" + std::string(bad) + "' is not a user name");
      CHECK(e.hint() == "set --acme-user (or CORRAL_ACME_USER) to a plain user name such as 'user' or 'root'");
    }
  }

  CHECK(remote::time_limit(sdk::Options{}, acme(), "create-timeout", 120) == 120);
  try {
    remote::time_limit(options, acme(), "create-timeout", 120);
    FAIL("two days accepted");
  } catch (const Error& e) {
    CHECK(e.hint().find("--acme-create-timeout or CORRAL_ACME_CREATE_TIMEOUT") != std::string::npos);
  }
  CHECK_THROWS_AS(remote::time_limit(sdk::Options(StringMap{{"create-timeout", "2s"}}), acme(), "create-timeout", 120, 3),
                  Error);
}

TEST_CASE("owner labels: create adds the marks whatever it was given; list keeps exact matches only") {
  CreateRequest request;
  request.lease_id = "L1";
  request.slug = "calm-otter";
  request.labels = {{wire::kHostLabel, "H"}, {wire::kOwnerLabel, "someone-else"}, {"team", "x"}};
  const StringMap labels = remote::creation_labels(request);
  CHECK(labels == StringMap{{wire::kOwnerLabel, wire::kOwnerValue},
                            {wire::kLeaseLabel, "L1"},
                            {wire::kSlugLabel, "calm-otter"},
                            {wire::kHostLabel, "H"},
                            {"team", "x"}});
  CHECK(remote::creation_labels(CreateRequest{}) == StringMap{{wire::kOwnerLabel, wire::kOwnerValue}});
  CHECK(remote::owned_filter({{wire::kHostLabel, "H"}}) ==
        StringMap{{wire::kOwnerLabel, wire::kOwnerValue}, {wire::kHostLabel, "H"}});

  RecordingHost rec;
  MapProvider provider;
  provider.sandboxes = {sandbox("mine", {{wire::kOwnerLabel, wire::kOwnerValue}, {wire::kHostLabel, "H"}}),
                        sandbox("other-host", {{wire::kOwnerLabel, wire::kOwnerValue}, {wire::kHostLabel, "H2"}}),
                        sandbox("prefix", {{wire::kOwnerLabel, wire::kOwnerValue}, {wire::kHostLabel, "H "}}),
                        sandbox("not-corral", {{wire::kHostLabel, "H"}})};
  const auto found = provider.list({{wire::kHostLabel, "H"}}, rec.host());
  REQUIRE(found.size() == 1);
  CHECK(found[0].id == "mine");
}

TEST_CASE("a create cut short sweeps its lease's strays; a clear refusal sweeps nothing; a failed sweep warns") {
  RecordingHost rec;
  MapProvider provider;
  provider.sandboxes = {sandbox("stray", {{wire::kOwnerLabel, wire::kOwnerValue}, {wire::kLeaseLabel, "L1"}}),
                        sandbox("other", {{wire::kOwnerLabel, wire::kOwnerValue}, {wire::kLeaseLabel, "L2"}})};
  CreateRequest request;
  request.lease_id = "L1";
  const auto cut = [] () -> int { throw Error(ErrorCode::unavailable, "Acme create sandbox: timed out"); };
  CHECK_THROWS_WITH_AS(remote::create_or_sweep(acme(), provider, request, rec.host(), cut),
                       "Acme create sandbox: timed out", Error);
  CHECK(provider.destroyed == std::vector<std::string>{"stray"});
  CHECK(rec.warnings.empty());

  provider.destroyed.clear();
  const auto refused = [] () -> int { throw Error(ErrorCode::quota, "Acme create sandbox: over the limit"); };
  CHECK_THROWS_AS(remote::create_or_sweep(acme(), provider, request, rec.host(), refused), Error);
  CHECK(provider.destroyed.empty());
  CHECK(remote::create_or_sweep(acme(), provider, request, rec.host(), [] { return 7; }) == 7);
  // Without a lease there is no label to find a stray by.
  CHECK_THROWS_AS(remote::create_or_sweep(acme(), provider, CreateRequest{}, rec.host(), cut), Error);
  CHECK(provider.destroyed.empty());

  provider.list_fails = true;
  CHECK_THROWS_AS(remote::create_or_sweep(acme(), provider, request, rec.host(), cut), Error);
  REQUIRE(rec.warnings.size() == 1);
  CHECK(rec.warnings[0] ==
        "Acme may have created a sandbox for lease L1 that corral could not remove (Acme list sandboxes: HTTP 401); "
        "check with `corral list --remote --provider acme` and remove it with "
        "`corral stop --orphans --provider acme`");
}

TEST_CASE("a paged list follows its tokens to the end, stops at a repeated one, and is bounded") {
  std::vector<std::string> seen;
  remote::for_each_page("list", [&](const std::string& token) {
    seen.push_back(token);
    return token.empty() ? std::string("p2") : token == "p2" ? "p3" : "";
  });
  CHECK(seen == std::vector<std::string>{"", "p2", "p3"});
  seen.clear();
  remote::for_each_page("list", [&](const std::string& token) {
    seen.push_back(token);
    return std::string("same");
  });
  CHECK(seen == std::vector<std::string>{"", "same"});
  int pages = 0;
  CHECK_THROWS_WITH_AS(remote::for_each_page("Acme list sandboxes",
                                             [&](const std::string&) { return "p" + std::to_string(++pages); }),
                       "Acme list sandboxes: the list did not end after 1000 pages", Error);
  CHECK(pages == remote::kMaxPages);
}

TEST_CASE("hooks: the user's command reaches the user; a step's stdout is dropped and its stderr kept") {
  RecordingHost rec;
  sdk::Host host = rec.host();
  sdk::CommandDeadline deadline(host, 0);
  const remote::CommandHooks command = remote::command_hooks(host, deadline);
  command.on_stdout("out");
  command.on_stderr("err");
  command.warn("may still run");
  CHECK(rec.out == "out");
  CHECK(rec.err == "err");
  CHECK(rec.warnings == std::vector<std::string>{"may still run"});
  CHECK_FALSE(command.stop());
  rec.cancel = true;
  CHECK(command.stop());

  rec = RecordingHost();
  host = rec.host();
  remote::StepErrors errors;
  const remote::CommandHooks step = remote::step_hooks(host, errors.sink());
  step.on_stdout("noise");
  step.on_stderr("tar: cannot open\n");
  CHECK(rec.out.empty());
  CHECK(errors.text() == "tar: cannot open");
  CHECK_FALSE(step.stop());
  rec.cancel = true;
  CHECK(step.stop());
}

TEST_CASE("a failed step says where, with its exit status and the start of its stderr") {
  remote::StepErrors errors;
  errors.add(std::string(3000, 'a'));
  errors.add(std::string(3000, 'b') + "\n \n");
  CHECK(errors.text().size() == remote::StepErrors::kKept);
  const Error e = remote::step_failed(acme(), "unpacking the workspace into /w", "sb-1", 2, errors, "see --acme-workdir");
  CHECK(e.code() == ErrorCode::unavailable);
  CHECK(std::string(e.what()).rfind("unpacking the workspace into /w in Acme sandbox sb-1 failed (exit 2): aaa", 0) == 0);
  CHECK(e.hint() == "see --acme-workdir");
  errors.clear();
  errors.add("\n");
  CHECK(std::string(remote::step_failed(acme(), "removing files", "sb-1", 1, errors).what()) ==
        "removing files in Acme sandbox sb-1 failed (exit 1)");
}

TEST_CASE("a command a provider's API carries as text is refused when a part of it is not UTF-8, naming the part") {
  Command c;
  c.argv = {"echo", "fine", "caf\xc3\xa9"};
  CHECK_NOTHROW(sdk::remote::require_text_command(c, "E2B"));
  c.argv.push_back("bad\xff");
  try {
    sdk::remote::require_text_command(c, "E2B");
    FAIL("a byte JSON cannot carry went through");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::invalid_argument);
    CHECK(std::string(e.what()).find("E2B carries a command as text, and argument 4 is not valid UTF-8") == 0);
    CHECK(std::string(e.what()).find("('bad") != std::string::npos);
  }
  c.argv = {"true"};
  c.env = {{"KEY", "\xc3"}};
  CHECK_THROWS_WITH_AS(sdk::remote::require_text_command(c, "Daytona"), doctest::Contains("variable KEY"), Error);
}

namespace {

// True for an answer whose body says it is over a limit, as Daytona's 400 does.
bool over_limit(const sdk::http::Response& response) { return response.body.find("limit") != std::string::npos; }

// The words of a provider whose errors come as a list: its first entry.
std::string first_entry(std::string_view body) { return std::string(body.substr(0, body.find(';'))); }

}  // namespace

TEST_CASE("a status table: the first row that covers a status gives its hint and code; 429 is the rate limit") {
  const remote::ErrorTable table{.rate_limit = "Acme's rate limit",
                                 .rate_limit_advice = "ask Acme",
                                 .rate_limit_noise = "Throttled",
                                 .rows = {{400, 403, "stop what you do not need", &over_limit, ErrorCode::quota},
                                          {401, 401, "check ACME_API_KEY"},
                                          {500, remote::kLastStatus, "retry in a moment"}},
                                 .explanation = &first_entry};
  auto failed = [](long status, std::string body) {
    sdk::http::Response r = answer(status);
    r.body = std::move(body);
    return r;
  };
  Error auth = remote::table_error(table, failed(401, "bad key; really"), "Acme get sb-1");
  CHECK(auth.code() == ErrorCode::auth);
  CHECK(std::string(auth.what()) == "Acme get sb-1: HTTP 401: bad key");
  CHECK(auth.hint() == "check ACME_API_KEY");
  // A row that does not apply passes the status on to the next that covers it, or none.
  Error quota = remote::table_error(table, failed(400, "cpu limit exceeded"), "x");
  CHECK(quota.code() == ErrorCode::quota);
  CHECK(quota.hint() == "stop what you do not need");
  Error plain = remote::table_error(table, failed(400, "cpu must be a number"), "x");
  CHECK(plain.code() == ErrorCode::invalid_argument);
  CHECK(plain.hint().empty());
  CHECK(remote::table_error(table, failed(503, ""), "x").hint() == "retry in a moment");
  CHECK(std::string(remote::table_error(table, failed(503, ""), "x").what()) == "x: HTTP 503");
  // 429: the provider's limit, its advice after corral's own, and no explanation that only
  // names what refused.
  Error limited = remote::table_error(table, failed(429, "Throttled: too many"), "Acme create sandbox");
  CHECK(limited.code() == ErrorCode::quota);
  CHECK(std::string(limited.what()).find("Acme create sandbox: Acme's rate limit was reached (HTTP 429)") == 0);
  CHECK(limited.hint().find("; ask Acme") != std::string::npos);
  Error said = remote::table_error(table, failed(429, "slow down; please"), "x");
  CHECK(std::string(said.what()).find("(HTTP 429: slow down)") != std::string::npos);
}
