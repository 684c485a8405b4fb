// The fleet in-process: lease states, stop --all and stop --orphans over real claims and
// the fake provider's sandboxes; and the claims' rules for lease ids and slugs.
#include <doctest/doctest.h>

#include <set>

#include "corral/wire.hpp"
#include "lease/fleet.hpp"
#include "lease_kit.hpp"

using corral::test::LeaseKit;
using namespace corral;

namespace {

// A lease whose sandbox could not be destroyed at the end of its run: never kept, so abandoned.
SessionHandle abandoned_lease(LeaseKit& kit) {
  kit.cloud.fail("destroy", Error(ErrorCode::unavailable, "the fake is down"));
  RunResult r = run(kit.ctx, kit.request());
  kit.cloud.at("destroy", {});
  REQUIRE(r.handle);
  return *r.handle;
}

// A claim file that is not JSON, but names a sandbox and its provider readably.
void corrupt_claim(LeaseKit& kit, const std::string& lease_id, const std::string& sandbox_id) {
  kit.root.write("state/corral/leases/" + lease_id + ".json",
                 R"({"leaseId":")" + lease_id + R"(","provider":"testbox","sandboxId":")" + sandbox_id + R"(",)");
}

// The corral labels of a sandbox made from host `host` for lease `lease`.
StringMap labels(const std::string& lease, const std::string& host) {
  StringMap l{{wire::kOwnerLabel, wire::kOwnerValue}};
  if (!lease.empty()) l[wire::kLeaseLabel] = lease;
  if (!host.empty()) l[wire::kHostLabel] = host;
  return l;
}

}  // namespace

TEST_CASE("one rule for lease ids: empty, hidden and path-like ids name no file") {
  for (const char* bad : {"", ".", "..", ".hidden", "a/b", "../leases/x", "a\\b", "/etc/passwd"}) {
    CAPTURE(bad);
    CHECK_FALSE(valid_lease_id(bad));
  }
  for (const char* good : {"0a1b2c3d4e5f", "calm-otter", "a.b"}) CHECK(valid_lease_id(good));

  LeaseKit kit;
  for (const char* bad : {"", "..", "a/b"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(kit.claims.read(bad), Error);
    CHECK_THROWS_AS(kit.claims.lock(bad), Error);
    CHECK_THROWS_AS(kit.claims.resolve(bad), Error);
    CHECK_THROWS_AS(stop_lease(kit.ctx, bad, {}), Error);
  }
  CHECK(kit.cloud.calls().empty());
}

TEST_CASE("slugs held at once are all distinct, even past the word pairs there are, and shared by copies") {
  LeaseKit kit;
  const ClaimStore copy = kit.claims;  // the same folder: the same creations under way
  std::vector<SlugHold> held;
  std::set<std::string> slugs;
  for (int i = 0; i < 2500; ++i) {  // 48 adjectives x 48 nouns = 2304 pairs
    held.push_back((i % 2 ? copy : kit.claims).hold_new_slug());
    slugs.insert(held.back().slug());
  }
  CHECK(slugs.size() == 2500);
}

TEST_CASE("list_leases: kept, abandoned, in use while a corral holds it, and corrupt") {
  LeaseKit kit;
  const SessionHandle kept = kit.kept_lease();
  const SessionHandle abandoned = abandoned_lease(kit);
  corrupt_claim(kit, "0000000000ff", "fake-99");
  std::map<std::string, LeaseState> states;
  for (const LeaseRow& row : list_leases(kit.claims)) states[row.file.lease_id] = row.state;
  CHECK(states == std::map<std::string, LeaseState>{{kept.lease_id, LeaseState::kept},
                                                    {abandoned.lease_id, LeaseState::abandoned},
                                                    {"0000000000ff", LeaseState::corrupt}});
  LeaseLock held = kit.claims.lock(kept.lease_id);  // as a run of it would
  for (const LeaseRow& row : list_leases(kit.claims))
    if (row.file.lease_id == kept.lease_id) CHECK(row.state == LeaseState::in_use);
}

TEST_CASE("stop_all stops every lease, and removes a corrupt claim after destroying the sandbox it names") {
  LeaseKit kit;
  const SessionHandle a = kit.kept_lease();
  const SessionHandle b = kit.kept_lease();
  const std::string stray = kit.cloud.add(labels("0000000000ff", kit.claims.host_id()));
  corrupt_claim(kit, "0000000000ff", stray);
  std::vector<StopOutcome> outcomes = stop_all(kit.ctx);
  REQUIRE(outcomes.size() == 3);
  for (const StopOutcome& o : outcomes) CHECK_MESSAGE(!o.error, o.what);
  CHECK(kit.cloud.boxes().empty());
  CHECK(kit.leases().empty());
  CHECK(kit.claim_folder().empty());
  CHECK(a.slug != b.slug);
}

TEST_CASE("stop_orphans: abandoned leases and this host's unclaimed sandboxes go; claimed, in-use and foreign stay") {
  LeaseKit kit;
  const std::string host = kit.claims.host_id();
  const SessionHandle kept = kit.kept_lease();
  const SessionHandle abandoned = abandoned_lease(kit);
  const std::string orphan = kit.cloud.add(labels("00000000000a", host));
  const std::string foreign = kit.cloud.add(labels("00000000000b", "another-host"));
  // testbox's options name no other machine: every sandbox it lists is this host's.
  const std::string unlabelled = kit.cloud.add(labels("", ""));
  // A lease being created right now holds its lock before its claim exists.
  const std::string creating = kit.cloud.add(labels("00000000000c", host));
  LeaseLock creating_lock = kit.claims.lock("00000000000c");

  std::map<std::string, RemoteOwner> owners;
  auto session = kit.providers.open("testbox", {}, kit.ui);
  for (const RemoteRow& row : list_remote(kit.ctx, *session)) owners[row.sandbox.id] = row.owner;
  CHECK(owners == std::map<std::string, RemoteOwner>{{kept.sandbox_id, RemoteOwner::claimed},
                                                     {abandoned.sandbox_id, RemoteOwner::claimed},
                                                     {orphan, RemoteOwner::orphan},
                                                     {foreign, RemoteOwner::other_host},
                                                     {unlabelled, RemoteOwner::orphan},
                                                     {creating, RemoteOwner::in_use}});

  ProviderChoice choice;
  choice.provider = "testbox";
  std::vector<StopOutcome> outcomes = stop_orphans(kit.ctx, choice, {});
  for (const StopOutcome& o : outcomes) CHECK_MESSAGE(!o.error, o.what);
  std::map<std::string, test::FakeCloud::Box> left = kit.cloud.boxes();
  CHECK(left.size() == 3);
  CHECK(left.count(kept.sandbox_id) == 1);
  CHECK(left.count(foreign) == 1);
  CHECK(left.count(creating) == 1);
  REQUIRE(kit.leases().size() == 1);
  CHECK(kit.leases()[0].lease_id == kept.lease_id);

  OrphanScope everyone;
  everyone.all_hosts = true;
  stop_orphans(kit.ctx, choice, everyone);
  CHECK(kit.cloud.boxes().count(foreign) == 0);
  CHECK(kit.cloud.boxes().count(kept.sandbox_id) == 1);
}

TEST_CASE("a provider's sandboxes are all this host's only when none of its options names another machine") {
  LeaseKit kit;
  CHECK(lists_only_this_host(*kit.registry.find("testbox")->spec));
  CHECK(lists_only_this_host(*kit.registry.find("mountbox")->spec));
  ProviderSpec cloud = *kit.registry.find("testbox")->spec;
  cloud.docs.location = "local";  // what the docs say changes nothing
  OptionSpec endpoint;
  endpoint.name = "api-url";
  endpoint.type = "url";
  cloud.options.push_back(endpoint);
  CHECK_FALSE(lists_only_this_host(cloud));
  cloud.options.back().type = "host";
  CHECK_FALSE(lists_only_this_host(cloud));
  cloud.options.back().type = "path";  // a folder here
  CHECK(lists_only_this_host(cloud));
}
