#include <doctest/doctest.h>
#include <sys/stat.h>

#include "cli.hpp"
#include "registry.hpp"

namespace fs = std::filesystem;
using namespace corral;

namespace {
const std::string kDir = CORRAL_TEST_PLUGIN_DIR;
}

TEST_CASE("relative plugin paths resolve against the registry's folder") {
  test::TempDir t;
  fs::copy_file(kDir + "/libcorral-testbox.so", t.path() / "libcorral-testbox.so");
  fs::path reg = t.write("providers.yaml", "plugins:\n  - path: libcorral-testbox.so\n");
  Registry r = Registry::load({{reg, "test"}});
  REQUIRE(r.find("testbox"));
  CHECK(r.find("tb") == r.find("testbox"));  // by alias
  CHECK(r.find("testbox")->library == t.path() / "libcorral-testbox.so");
}

TEST_CASE("a later registry overrides an earlier one by provider name") {
  test::TempDir t;
  fs::create_directories(t.path() / "a");
  fs::create_directories(t.path() / "b");
  fs::copy_file(kDir + "/libcorral-testbox.so", t.path() / "a/libcorral-testbox.so");
  fs::copy_file(kDir + "/libcorral-testbox.so", t.path() / "b/libcorral-testbox.so");
  fs::path first = t.write("a/r.yaml", "plugins: [libcorral-testbox.so]\n");
  fs::path second = t.write("b/r.yaml", "plugins:\n  - path: libcorral-testbox.so\n");
  Registry r = Registry::load({{first, "system"}, {second, "user"}});
  const ProviderEntry* e = r.find("testbox");
  REQUIRE(e);
  CHECK(e->source.origin == "user");
  CHECK(e->overridden == std::vector<std::string>{first.string()});
  CHECK(r.names() == std::vector<std::string>{"testbox"});
}

TEST_CASE("broken entries are kept with their errors and never hide good ones") {
  test::TempDir t;
  fs::path reg = t.write("r.yaml", "plugins:\n"
                                   "  - path: " + kDir + "/libcorral-raw2.so\n"
                                   "  - path: " + kDir + "/libcorral-testbox.so\n"
                                   "  - path: missing.so\n"
                                   "  - sha256: abc\n");
  fs::path bad_yaml = t.write("bad.yaml", "plugins: [unclosed\n");
  fs::path wrong_shape = t.write("shape.yaml", "providers: []\n");
  Registry r = Registry::load({{reg, "test"}, {bad_yaml, "test"}, {wrong_shape, "test"}});
  CHECK(r.find("testbox"));
  int broken = 0;
  for (const auto& e : r.entries()) broken += e.ok() ? 0 : 1;
  CHECK(broken == 5);
  const ProviderEntry* abi = r.find_broken("raw2");
  REQUIRE(abi);
  CHECK(abi->error->cause == LoadFailure::abi_mismatch);
}

TEST_CASE("a writable registry file is refused whole") {
  test::TempDir t;
  fs::path reg = t.write("r.yaml", "plugins:\n  - path: " + kDir + "/libcorral-testbox.so\n");
  ::chmod(reg.c_str(), 0666);
  Registry r = Registry::load({{reg, "test"}});
  CHECK_FALSE(r.find("testbox"));
  REQUIRE(r.entries().size() == 1);
  CHECK(r.entries()[0].error->cause == LoadFailure::untrusted_file);
  CHECK(r.entries()[0].error->message.find("world-writable") != std::string::npos);
}

TEST_CASE("default sources follow the documented order") {
  test::TempDir t;
  fs::path etc = t.path() / "etc";
  fs::path cfg = t.path() / "cfg";
  t.write("etc/providers.d/20-b.yaml", "plugins: []\n");
  t.write("etc/providers.d/10-a.yaml", "plugins: []\n");
  t.write("cfg/corral/providers.d/x.yml", "plugins: []\n");
  fs::path extra = t.write("extra.yaml", "plugins: []\n");
  ::setenv("CORRAL_ETC_DIR", etc.c_str(), 1);
  ::setenv("XDG_CONFIG_HOME", cfg.c_str(), 1);
  ::setenv("CORRAL_REGISTRY", extra.c_str(), 1);
  auto sources = Registry::default_sources();
  ::unsetenv("CORRAL_ETC_DIR");
  ::unsetenv("XDG_CONFIG_HOME");
  ::unsetenv("CORRAL_REGISTRY");
  std::vector<std::string> origins, names;
  for (const auto& s : sources) {
    if (s.origin == "shipped") continue;
    origins.push_back(s.origin);
    names.push_back(s.file.filename().string());
  }
  CHECK(origins == std::vector<std::string>{"system", "system", "user", "CORRAL_REGISTRY"});
  CHECK(names == std::vector<std::string>{"10-a.yaml", "20-b.yaml", "x.yml", "extra.yaml"});
}
