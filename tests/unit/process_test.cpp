#include <doctest/doctest.h>

#include <chrono>

#include "corral/sdk/process.hpp"
#include "corral/types.hpp"

using namespace corral::sdk;

TEST_CASE("a process's stdout and stderr arrive separately and completely") {
  std::string out, err;
  auto o = run_process({{"sh", "-c", "head -c 300000 /dev/zero | tr '\\0' a; echo oops >&2; exit 7"}},
                       [&](std::string_view d) { out.append(d); }, [&](std::string_view d) { err.append(d); });
  CHECK(o.exit_code == 7);
  CHECK(out == std::string(300000, 'a'));
  CHECK(err == "oops\n");
}

TEST_CASE("cancelling stops the whole process group promptly") {
  auto start = std::chrono::steady_clock::now();
  int polls = 0;
  auto o = run_process({{"sh", "-c", "sleep 30 & sleep 30; wait"}}, {}, {}, [&] { return ++polls > 3; });
  CHECK(o.cancelled);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("a timeout stops the process and says so") {
  auto o = run_process({{"sleep", "30"}}, {}, {}, {}, 1);
  CHECK(o.timed_out);
  CHECK(o.exit_code == 128 + 15);
}

TEST_CASE("a missing program is a not-found error, not a crash") {
  CHECK_THROWS_AS(run_process({{"no-such-program-corral"}}, {}, {}), corral::Error);
  CHECK(find_program("sh").find("/sh") != std::string::npos);
  CHECK(find_program("no-such-program-corral").empty());
}
