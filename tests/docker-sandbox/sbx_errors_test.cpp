// sbx failures become errors with a cause and a hint that says what to do.
#include <doctest/doctest.h>

#include "sbx_errors.hpp"

using namespace corral::docker_sandbox;
using corral::ErrorCode;

TEST_CASE("sbx errors: known conditions get specific guidance") {
  auto auth = sbx_failed("create", 1, "ERROR: You are not signed in. Run 'sbx login' to sign in.");
  CHECK(auth.code() == ErrorCode::auth);
  CHECK(auth.hint().find("sbx login") != std::string::npos);

  auto virt = sbx_failed("create", 1, "starting VM...\nERROR: hardware virtualization is not available (/dev/kvm)");
  CHECK(virt.code() == ErrorCode::unavailable);
  CHECK(virt.hint().find("/dev/kvm") != std::string::npos);
  CHECK(std::string(virt.what()).find("/dev/kvm") != std::string::npos);  // sbx's own words kept

  CHECK_FALSE(known_condition("total 0\nhello"));
}

TEST_CASE("sbx errors: only failure lines count, never passing checks or neutral mentions") {
  // sbx diagnose with the daemon down: the passing kvm/virtualization lines must not win.
  auto daemon = sbx_failed("diagnose", 1,
                           "\u2713 kvm available\n\u2713 hardware virtualization available\n"
                           "\u2717 sandbox daemon is not running\n1 check(s) failed.\n");
  CHECK(daemon.code() == ErrorCode::unavailable);
  CHECK(std::string(daemon.what()).find("daemon") != std::string::npos);
  CHECK(std::string(daemon.what()).find("virtualization") == std::string::npos);

  // Signed in, virtualization missing: not an auth problem.
  auto virt = known_condition("\u2713 signed in to Docker (sbx login)\n"
                              "\u2717 hardware virtualization is not available (/dev/kvm missing)\n");
  REQUIRE(virt);
  CHECK(virt->code() == ErrorCode::unavailable);

  CHECK_FALSE(known_condition("\u2713 kvm available\n\u2713 signed in (sbx login)\nAll checks passed."));
  CHECK_FALSE(known_condition("see https://docs.docker.com/ai/sandboxes/ about /dev/kvm and sbx login"));
  CHECK(known_condition("Error: 401 Unauthorized")->code() == ErrorCode::auth);
}

TEST_CASE("sbx errors: unknown failures name the command, exit code and sbx's message") {
  auto e = sbx_failed("rm", 3, "progress...\nERROR: disk is full\n\n");
  CHECK(e.code() == ErrorCode::unavailable);
  CHECK(std::string(e.what()) == "`sbx rm` failed (exit 3): ERROR: disk is full");
  CHECK(e.hint().find("sbx diagnose") != std::string::npos);
}

TEST_CASE("sbx errors: missing binary and timeouts") {
  auto missing = sbx_missing("/opt/nowhere/sbx");
  CHECK(missing.code() == ErrorCode::unavailable);
  CHECK(std::string(missing.what()).find("/opt/nowhere/sbx") != std::string::npos);
  CHECK(missing.hint().find("CORRAL_SBX_CLI") != std::string::npos);
  auto slow = sbx_timed_out("create", 90);
  CHECK(slow.code() == ErrorCode::unavailable);  // timeout (124) is the user's command running too long
  CHECK(std::string(slow.what()).find("90s") != std::string::npos);
  CHECK(slow.hint().find("cli-timeout") != std::string::npos);
}

TEST_CASE("sbx errors: gist picks the error line and bounds it") {
  CHECK(gist("a\nError: b\nc\n") == "Error: b");
  CHECK(gist("a\nlast\n") == "last");
  CHECK(gist("").empty());
  CHECK(gist(std::string(1000, 'x')).size() == 300);
}
