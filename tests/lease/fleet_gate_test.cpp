// The fleet gate in-process: the user's limits held across threads (each taking its seat
// as a process would, through the lease's lock and claim), seats that come back when
// their holder is gone, waits that say why and end on Ctrl-C or --timeout, and a
// provider's "not now" heard by every create, with the create asked again after it.
#include <doctest/doctest.h>

#include <ctime>
#include <fstream>
#include <thread>

#include "lease/fleet_gate.hpp"
#include "lease_kit.hpp"

using corral::test::LeaseKit;
using corral::test::RecordingUi;
using namespace corral;
using std::chrono::milliseconds;

namespace {

// A gate in the kit's state folder whose every provider has `limits`.
FleetGate gate_of(LeaseKit& kit, ProviderLimits limits) {
  return FleetGate(FleetGate::standard_dir(kit.claims), kit.claims, [limits](const std::string&) { return limits; });
}

// A lease id that is not yet a claim, locked as Lease::create locks one before admission.
struct Pending {
  Pending(LeaseKit& kit, std::string lease_id) : id(std::move(lease_id)), lock(kit.claims.lock(id)) {}
  std::string id;
  LeaseLock lock;
};

// A GateWait that records what it was told and stops when `stop` is set.
struct Watched {
  std::vector<GateWaitStatus> told;
  std::atomic<int> heard{0};  // told's size, for another thread to poll
  std::atomic<bool> stop{false};
  GateWait wait() {
    GateWait w;
    w.waiting = [this](const GateWaitStatus& s) {
      told.push_back(s);
      ++heard;
    };
    w.cancelled = [this] { return stop.load(); };
    return w;
  }
};

}  // namespace

TEST_CASE("fleet gate: at most the limit of live sandboxes across threads; the others wait, saying so, then all run") {
  LeaseKit kit;
  FleetGate gate = gate_of(kit, {.sandboxes = 2});
  kit.ctx.fleet = &gate;
  std::atomic<int> most_live{0};
  kit.cloud.on_exec([&](const Command&, const sdk::Host&) {
    const int live = static_cast<int>(kit.cloud.boxes().size());
    int seen = most_live.load();
    while (live > seen && !most_live.compare_exchange_weak(seen, live)) {
    }
    std::this_thread::sleep_for(milliseconds(150));
    return 0;
  });
  constexpr int kRuns = 5;
  std::vector<std::unique_ptr<RecordingUi>> uis;
  std::vector<LeaseContext> contexts;
  for (int i = 0; i < kRuns; ++i) {
    uis.push_back(std::make_unique<RecordingUi>());
    contexts.push_back(LeaseContext{kit.claims, kit.providers, *uis.back(), &gate});
  }
  std::vector<int> codes(kRuns, -1);
  std::vector<std::thread> threads;
  for (int i = 0; i < kRuns; ++i)
    threads.emplace_back([&, i] { codes[i] = run(contexts[i], kit.request()).exit_code; });
  for (std::thread& t : threads) t.join();
  for (int code : codes) CHECK(code == 0);
  CHECK(most_live.load() >= 1);
  CHECK(most_live.load() <= 2);
  CHECK(kit.cloud.count("create") == kRuns);
  int waited = 0;
  for (const auto& ui : uis) waited += ui->said("waiting for a testbox slot: 2 of 2 in use") ? 1 : 0;
  CHECK(waited >= 1);
  CHECK(kit.cloud.boxes().empty());
  CHECK(gate.in_use("testbox") == 0);
}

TEST_CASE("fleet gate: a seat counts while its lease is held, kept, paused or pooled, and comes back when it is not") {
  LeaseKit kit;
  FleetGate gate = gate_of(kit, {.sandboxes = 3});
  Watched w;
  std::optional<Pending> a(std::in_place, kit, "aaaaaaaaaaaa");
  gate.admit("testbox", {a->id}, w.wait());
  CHECK(gate.in_use("testbox") == 1);
  CHECK(gate.in_use("other") == 0);

  SUBCASE("its holder gone, before any claim was written (a corral killed while creating)") {
    a.reset();
    CHECK(gate.in_use("testbox") == 0);
  }
  SUBCASE("kept, paused, or pooled until later: counted with nobody holding it; an expired pool's is not") {
    Claim c;
    c.lease_id = a->id;
    c.slug = "calm-otter";
    c.provider = "testbox";
    c.sandbox_id = "sb-1";
    c.created_at = "2026-12-07T00:00:00Z";
    c.kept = true;
    kit.claims.write(c);
    a.reset();
    CHECK(gate.in_use("testbox") == 1);
    c.kept = false;
    c.paused = true;
    kit.claims.write(c);
    CHECK(gate.in_use("testbox") == 1);
    c.paused = false;
    const std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));
    c.pool = PoolTag{"key", 2, now, now + 3600};
    kit.claims.write(c);
    CHECK(gate.in_use("testbox") == 1);
    c.pool->expires_at = now - 1;
    kit.claims.write(c);
    CHECK(gate.in_use("testbox") == 0);
  }
  SUBCASE("a seat that no longer counts is swept at the next admission") {
    a.reset();
    Pending b(kit, "bbbbbbbbbbbb");
    gate.admit("testbox", {b.id}, w.wait());
    const auto seats = FleetGate::standard_dir(kit.claims) / "testbox" / "seats";
    CHECK_FALSE(std::filesystem::exists(seats / "aaaaaaaaaaaa"));
    CHECK(std::filesystem::exists(seats / "bbbbbbbbbbbb"));
  }
  CHECK(w.told.empty());
}

TEST_CASE("fleet gate: a full gate waits until a holder lets go, and a wait ends on Ctrl-C or at the deadline") {
  LeaseKit kit;
  FleetGate gate = gate_of(kit, {.sandboxes = 1});
  Watched w;
  std::optional<Pending> holder(std::in_place, kit, "aaaaaaaaaaaa");
  gate.admit("testbox", {holder->id}, w.wait());
  Pending next(kit, "bbbbbbbbbbbb");

  SUBCASE("let go: admitted") {
    std::thread release([&] {
      while (w.heard.load() == 0) std::this_thread::sleep_for(milliseconds(5));
      holder.reset();
    });
    gate.admit("testbox", {next.id}, w.wait());
    release.join();
    REQUIRE(w.told.size() >= 1);
    CHECK(w.told.front().reason == GateWaitStatus::Reason::limit);
    CHECK(w.told.front().in_use == 1);
    CHECK(w.told.front().limit == 1);
  }
  SUBCASE("Ctrl-C") {
    w.stop = true;
    try {
      gate.admit("testbox", {next.id}, w.wait());
      FAIL("admitted past the limit");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::cancelled);
      CHECK(std::string(e.what()).find("stopped waiting for a testbox slot") != std::string::npos);
    }
  }
  SUBCASE("--timeout") {
    GateWait wait = w.wait();
    wait.deadline = std::chrono::steady_clock::now() + milliseconds(100);
    try {
      gate.admit("testbox", {next.id}, wait);
      FAIL("admitted past the limit");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::timeout);
      CHECK(std::string(e.what()).find("--timeout ran out while waiting for a testbox slot (1 of 1 in use)") !=
            std::string::npos);
    }
  }
  SUBCASE("more at once than the limit ever allows: refused at once") {
    Pending third(kit, "cccccccccccc");
    holder.reset();
    try {
      gate.admit("testbox", {next.id, third.id}, w.wait());
      FAIL("admitted past the limit");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::quota);
      CHECK(std::string(e.what()).find("2 new testbox sandboxes were asked for at once, and your limit is 1") !=
            std::string::npos);
    }
    CHECK(w.told.empty());
  }
}

TEST_CASE("fleet gate: creates per minute are counted across admissions") {
  LeaseKit kit;
  FleetGate gate = gate_of(kit, {.creates_per_minute = 2});
  Watched w;
  Pending a(kit, "aaaaaaaaaaaa"), b(kit, "bbbbbbbbbbbb"), c(kit, "cccccccccccc");
  gate.admit("testbox", {a.id}, w.wait());
  gate.admit("testbox", {b.id}, w.wait());
  CHECK(w.told.empty());
  GateWait wait = w.wait();
  wait.deadline = std::chrono::steady_clock::now() + milliseconds(150);
  CHECK_THROWS_AS(gate.admit("testbox", {c.id}, wait), Error);
  REQUIRE_FALSE(w.told.empty());
  CHECK(w.told.front().reason == GateWaitStatus::Reason::rate);
  CHECK(w.told.front().left > milliseconds(50'000));  // the first create leaves the window in about a minute
  CHECK(w.told.front().left <= milliseconds(60'000));
}

TEST_CASE("fleet gate: a provider's 'not now' holds every admission to it, and only to it, until it passes") {
  LeaseKit kit;
  FleetGate gate = gate_of(kit, {});
  gate.back_off("testbox", milliseconds(300), "HTTP 429: slow down");
  gate.back_off("testbox", milliseconds(1), "a shorter ask never shortens the wait");
  Watched w;
  Pending a(kit, "aaaaaaaaaaaa");
  gate.admit("other", {a.id}, w.wait());
  CHECK(w.told.empty());
  gate.admit("testbox", {a.id}, w.wait());
  REQUIRE_FALSE(w.told.empty());
  CHECK(w.told.front().reason == GateWaitStatus::Reason::backoff);
  CHECK(w.told.front().why == "HTTP 429: slow down");
  CHECK(w.told.front().left > milliseconds(100));
}

TEST_CASE("a create the provider answers 'not now' is asked again once every corral waited; without a gate it fails") {
  LeaseKit kit;
  int refused = 0;
  milliseconds asked(200);  // the provider's Retry-After; 0: it names none, and corral backs off 1, 2, 4 ... s
  kit.cloud.at("create", [&](const sdk::Host&) {
    if (refused++ > 0) return;
    Error e(ErrorCode::quota, "testbox: rate limit (HTTP 429)");
    e.set_retry_after(asked);
    throw e;
  });
  SUBCASE("with the gate: waits, asks again, runs") {
    FleetGate gate = gate_of(kit, {});
    kit.ctx.fleet = &gate;
    RunResult r = run(kit.ctx, kit.request());
    CHECK_MESSAGE(!r.error, (r.error ? r.error->what() : ""));
    CHECK(r.exit_code == 0);
    CHECK(kit.cloud.count("create") == 2);
    CHECK(kit.ui.said("waiting for testbox: it asked corral to wait (rate limit)"));
  }
  SUBCASE("under a limit of one: asked again in the seat it already holds") {
    FleetGate gate = gate_of(kit, {.sandboxes = 1});
    kit.ctx.fleet = &gate;
    RunRequest request = kit.request();
    request.command.timeout_seconds = 10;  // a seat counted twice would wait this out, then fail
    RunResult r = run(kit.ctx, request);
    CHECK(r.exit_code == 0);
    CHECK(kit.cloud.count("create") == 2);
    CHECK_FALSE(kit.ui.said("waiting for a testbox slot"));
  }
  SUBCASE("without one: the provider's error, once") {
    try {
      run(kit.ctx, kit.request());
      FAIL("the create was refused, yet the run went on");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::quota);
    }
    CHECK(kit.cloud.count("create") == 1);
  }
  SUBCASE("past --timeout: the provider's error, saying how often corral asked") {
    FleetGate gate = gate_of(kit, {});
    kit.ctx.fleet = &gate;
    refused = -1000;  // every create is refused
    asked = milliseconds(0);
    RunRequest request = kit.request();
    request.command.timeout_seconds = 2;
    try {
      run(kit.ctx, request);
      FAIL("every create was refused, yet the run went on");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::quota);
      CHECK_MESSAGE(std::string(e.what()).find("corral waited and asked again 1 time") != std::string::npos,
                    std::string(e.what()));
      CHECK(std::string(e.what()).find("until --timeout ran out") != std::string::npos);
    }
    CHECK(kit.cloud.count("create") == 2);
  }
  CHECK(kit.leases().empty());
}

TEST_CASE("usage log: a line per ended sandbox, torn and foreign lines skipped and counted, moved aside past its bound") {
  LeaseKit kit;
  const std::filesystem::path file = kit.root.path() / "usage.log";
  UsageLog log(file, 600);
  UsageRecord r{"testbox", "aaaaaaaaaaaa", "calm-otter", "sb-1", 1000, 1060, false, true};
  log.append(r);
  CHECK(parse_usage_line(usage_line(r).substr(0, usage_line(r).size() - 1))->seconds() == 60);
  // A crash mid-line, then garbage, then a line that is JSON but no record.
  {
    std::ofstream out(file, std::ios::app);
    out << R"({"provider":"testbox","lease":"b","start":5,"en)";
  }
  r.lease_id = "cccccccccccc";
  log.append(r);  // starts on a line of its own: the torn one does not swallow it
  {
    std::ofstream out(file, std::ios::app);
    out << "not json\n" << R"({"provider":"testbox","start":9,"end":3})" << "\n";
  }
  UsageLog::Contents got = log.read();
  REQUIRE(got.records.size() == 2);
  CHECK(got.records[0].lease_id == "aaaaaaaaaaaa");
  CHECK(got.records[1].lease_id == "cccccccccccc");
  CHECK(got.records[1].kept);
  CHECK(got.skipped == 3);
  // Past 600 bytes the file is moved aside, once: the two hold every line.
  for (int i = 0; i < 6; ++i) log.append(r);
  CHECK(std::filesystem::exists(file.string() + ".1"));
  CHECK(std::filesystem::file_size(file) < 600);
  for (int i = 0; i < 20; ++i) log.append(r);
  CHECK(std::filesystem::file_size(file.string() + ".1") < 1200);  // bounded, the oldest lines gone
  CHECK(log.read().records.size() >= 4);
  CHECK_FALSE(parse_utc_time("2026-12-07 04:41:40"));
  CHECK(parse_utc_time("2026-12-07T00:00:00Z") == 1796601600);
}

TEST_CASE("a run's end is recorded in the usage log; a daily budget used up refuses the next create, saying when it resets") {
  LeaseKit kit;
  ProviderLimits limits;
  FleetGate gate = gate_of(kit, limits);
  kit.ctx.fleet = &gate;
  RunResult r = run(kit.ctx, kit.request());
  REQUIRE(r.exit_code == 0);
  UsageLog::Contents log = gate.usage().read();
  REQUIRE(log.records.size() == 1);
  CHECK(log.records[0].provider == "testbox");
  CHECK(log.records[0].lease_id == r.handle->lease_id);
  CHECK_FALSE(log.records[0].kept);

  // A sandbox alive all of today so far (and yesterday, which does not count), and a
  // budget of a third of a second a day.
  const std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));
  const std::int64_t today = now - now % 86400;
  gate.usage().append({"testbox", "dddddddddddd", "", "sb-9", today - 86400, now, false, false});
  FleetGate budgeted = gate_of(kit, {.sandbox_hours_per_day = 0.0001});
  kit.ctx.fleet = &budgeted;
  try {
    run(kit.ctx, kit.request());
    FAIL("the budget is used up, yet the run went on");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::quota);
    CHECK_MESSAGE(std::string(e.what()).find("the testbox budget of 0.0001 sandbox-hours a day is used up") !=
                      std::string::npos,
                  e.what());
    CHECK(std::string(e.what()).find("it resets at 00:00 UTC, in ") != std::string::npos);
  }
  CHECK(kit.cloud.count("create") == 1);
  CHECK(kit.leases().empty());
  // Another provider's time is its own.
  FleetGate other = gate_of(kit, {.sandbox_hours_per_day = 0.0001});
  CHECK(other.used_since("mountbox", today) == 0);
  CHECK(other.used_since("testbox", today) >= now - today);
}
