// Checks of destroy: a sandbox already gone counts as destroyed.
#include "conformance/checks/checks.hpp"

#include <fmt/format.h>

#include "base/printable.hpp"
#include "corral/wire.hpp"

namespace corral::conformance {

namespace {

void destroy_twice(CheckContext& cx) {
  const std::string lease = random_hex(6);
  Sandbox sandbox = cx.kit.with_session([&](ProviderSession& session) {
    Sandbox made =
        session.create({.lease_id = lease,
                        .slug = "conformance-" + lease,
                        .labels = wire::owner_labels(lease, "conformance-" + lease, cx.kit.claims().host_id()),
                        .workspace = cx.fixture.root().string()});
    cx.kit.made_outside_a_run(lease, made.id);
    session.destroy(made);
    return made;
  });
  // A fresh session, as the next corral's cleanup would be.
  std::string second = cx.kit.with_session([&](ProviderSession& session) -> std::string {
    try {
      session.destroy(sandbox);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::not_found) return printable(e.what());
    }
    return "";
  });
  if (!second.empty())
    fail(fmt::format("destroying sandbox {} once more failed: {}; a sandbox that is already gone must count as "
                     "destroyed (or be not-found), as cleanup may meet one the provider removed",
                     printable(sandbox.id), second));
  if (std::string left = cx.kit.still_there(sandbox.id); !left.empty()) fail(left + " after it was destroyed");
}

void get_not_found(CheckContext& cx) {
  // A sandbox of the provider's own making, whose id's shape the kit copies.
  std::string sample;
  for (const Kit::Made& m : cx.kit.made())
    if (!m.sandbox_id.empty()) sample = m.sandbox_id;
  if (sample.empty()) {
    Observed o = cx.kit.run({.shell = "true"});
    o.expect_exit(0);
    sample = o.handle().sandbox_id;
  }
  if (std::string why = cx.kit.get_answers_unknown(sample); !why.empty())
    fail(why + ": corral then cannot tell a sandbox that is gone from one still there (stop, status and the "
               "kit's own nothing-left ask get); the kit asks list instead where it can");
}

}  // namespace

std::vector<CheckDef> destroy_checks() {
  return {
      {"destroy-twice", "destroying a sandbox that is already gone is harmless", {}, {}, &destroy_twice},
      {"get-not-found", "get of a sandbox that does not exist says not-found", {Feature::run_session}, {},
       &get_not_found},
  };
}

}  // namespace corral::conformance
