// The env file keeps forwarded values out of argv: private, exact, and always removed.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>

#include "cli.hpp"
#include "env_file.hpp"

using namespace corral::docker_sandbox;

TEST_CASE("env file: private, exact content, removed at scope end") {
  std::string path;
  {
    EnvFile f({{"B", "two words"}, {"A", "x=y"}, {"EMPTY", ""}});
    path = f.path();
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    CHECK(corral::test::read_file(path) == "A=x=y\nB=two words\nEMPTY=\n");
  }
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("env file: removed when the scope is left by an exception") {
  std::string path;
  try {
    EnvFile f(corral::StringMap{{"A", "1"}});
    path = f.path();
    throw std::runtime_error("boom");
  } catch (const std::runtime_error&) {
  }
  REQUIRE(!path.empty());
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("env file: refuses what docker's format cannot carry") {
  CHECK_THROWS_AS(env_file_text({{"A", "line1\nline2"}}), corral::Error);
  CHECK_THROWS_AS(env_file_text({{"A B", "1"}}), corral::Error);
  CHECK_THROWS_AS(env_file_text({{"#A", "1"}}), corral::Error);
  CHECK_THROWS_AS(env_file_text({{"", "1"}}), corral::Error);
  try {
    env_file_text({{"TOKEN", "secret-value\n"}});
  } catch (const corral::Error& e) {
    CHECK(e.code() == corral::ErrorCode::invalid_argument);
    CHECK(std::string(e.what()).find("secret-value") == std::string::npos);  // names, never values
  }
}
