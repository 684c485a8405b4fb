#include <doctest/doctest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>

#include "cli.hpp"
#include "corral/errors.hpp"
#include "base/hash.hpp"
#include "plugin_host/registry.hpp"
#include "plugin_host/spec_cache.hpp"

namespace fs = std::filesystem;
using namespace corral;

namespace {
const std::string kDir = CORRAL_TEST_PLUGIN_DIR;

// Points $XDG_CACHE_HOME at a fresh folder for one test, so probes are cached there.
class CacheHome {
 public:
  CacheHome() { ::setenv("XDG_CACHE_HOME", dir_.str().c_str(), 1); }
  ~CacheHome() { ::unsetenv("XDG_CACHE_HOME"); }
  SpecCache cache() const { return SpecCache(dir_.path() / "corral" / "specs"); }

 private:
  test::TempDir dir_;
};

// The inode and mtime of a cache file: a re-probe replaces the file (a new inode).
std::pair<ino_t, std::int64_t> identity(const fs::path& file) {
  struct stat st {};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  return {st.st_ino, std::int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec};
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("relative plugin paths resolve against the registry's folder") {
  CacheHome cache;
  test::TempDir t;
  fs::copy_file(kDir + "/libcorral-testbox.so", t.path() / "libcorral-testbox.so");
  fs::path reg = t.write("providers.yaml", "plugins:\n  - path: libcorral-testbox.so\n");
  Registry r = Registry::load({{reg, "test"}});
  REQUIRE(r.find("testbox"));
  CHECK(r.find("tb") == r.find("testbox"));  // by alias
  CHECK(r.find("testbox")->library == t.path() / "libcorral-testbox.so");
  CHECK(r.find("testbox")->record.empty());  // the default: beside the plugin
  // A verification record named by the entry resolves the same way.
  reg = t.write("providers.yaml", "plugins:\n  - {path: libcorral-testbox.so, record: records/tb.json}\n");
  CHECK(Registry::load({{reg, "test"}}).find("testbox")->record == t.path() / "records" / "tb.json");
}

TEST_CASE("a later registry overrides an earlier one by provider name") {
  CacheHome cache;
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
  CacheHome cache;
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
  CacheHome cache;
  test::TempDir t;
  fs::path reg = t.write("r.yaml", "plugins:\n  - path: " + kDir + "/libcorral-testbox.so\n");
  ::chmod(reg.c_str(), 0666);
  Registry r = Registry::load({{reg, "test"}});
  CHECK_FALSE(r.find("testbox"));
  REQUIRE(r.entries().size() == 1);
  CHECK(r.entries()[0].error->cause == LoadFailure::untrusted_file);
  CHECK(r.entries()[0].error->message.find("world-writable") != std::string::npos);
}

TEST_CASE("a registry file under a world-writable folder is refused, naming the folder") {
  CacheHome cache;
  test::TempDir t;
  fs::path reg = t.write("open/sub/r.yaml", "plugins:\n  - path: " + kDir + "/libcorral-testbox.so\n");
  ::chmod((t.path() / "open/sub").c_str(), 0755);
  ::chmod((t.path() / "open").c_str(), 0777);
  Registry r = Registry::load({{reg, "test"}});
  CHECK_FALSE(r.find("testbox"));
  REQUIRE(r.entries().size() == 1);
  CHECK(r.entries()[0].error->cause == LoadFailure::untrusted_file);
  CHECK(contains(r.entries()[0].error->message, "fix with: chmod go-w " + (t.path() / "open").string()));
}

TEST_CASE("entries carry the probed spec and version; only plugin() loads code, once") {
  CacheHome cache;
  test::TempDir t;
  fs::path reg = t.write("r.yaml", "plugins:\n  - path: " + kDir + "/libcorral-testbox.so\n");
  Registry r = Registry::load({{reg, "test"}});
  const ProviderEntry* e = r.find("tb");
  REQUIRE(e);
  CHECK(e->spec->name == "testbox");
  CHECK(e->plugin_version == "1.0.0");
  CHECK(e->abi_version == CORRAL_ABI_VERSION);
  std::shared_ptr<const Plugin> p = r.plugin(*e);
  REQUIRE(p);
  CHECK(p->spec().name == "testbox");
  CHECK(r.plugin(*e) == p);
  ProviderEntry copy = *e;
  CHECK(r.plugin(copy) == p);
}

TEST_CASE("plugin() verifies again and throws a ConfigError with the reason") {
  CacheHome cache;
  test::TempDir t;
  fs::copy_file(kDir + "/libcorral-testbox.so", t.path() / "libcorral-testbox.so");
  fs::path lib = t.path() / "libcorral-testbox.so";
  fs::path reg = t.write("r.yaml", "plugins:\n  - path: libcorral-testbox.so\n  - path: " + kDir + "/libcorral-raw5.so\n");
  SUBCASE("a broken entry") {
    Registry r = Registry::load({{reg, "test"}});
    const ProviderEntry* b = r.find_broken("raw5");
    REQUIRE(b);
    CHECK_THROWS_AS(r.plugin(*b), ConfigError);
  }
  SUBCASE("a file made writable since it was probed") {
    Registry r = Registry::load({{reg, "test"}});
    REQUIRE(r.find("testbox"));
    ::chmod(lib.c_str(), 0777);
    try {
      r.plugin(*r.find("testbox"));
      FAIL("plugin() loaded a world-writable file");
    } catch (const ConfigError& e) {
      CHECK(contains(e.what(), lib.string() + " is world-writable"));
    }
  }
  SUBCASE("a spec that differs from the probed one") {
    // Stand in for a plugin that describes itself differently in each process: the
    // cached probe says its alias is "tx".
    Registry::load({{reg, "test"}});
    std::optional<CachedProbe> entry = cache.cache().get(fs::canonical(lib));
    REQUIRE(entry);
    REQUIRE(contains(entry->result.spec_json, "\"tb\""));
    entry->result.spec_json.replace(entry->result.spec_json.find("\"tb\""), 4, "\"tx\"");
    REQUIRE(cache.cache().put(fs::canonical(lib), *entry));
    Registry r = Registry::load({{reg, "test"}});
    REQUIRE(r.find("tx"));
    try {
      r.plugin(*r.find("tx"));
      FAIL("plugin() accepted a spec that is not the probed one");
    } catch (const ConfigError& e) {
      CHECK(contains(e.what(), "its provider spec in this process differs from the one its probe reported"));
    }
  }
}

TEST_CASE("a plugin that crashes or hangs while loading is a broken entry with that cause") {
  CacheHome cache;
  ::setenv("CORRAL_PLUGIN_PROBE_TIMEOUT", "0.5", 1);
  test::TempDir t;
  fs::path reg = t.write("r.yaml", "plugins:\n"
                                   "  - path: " + kDir + "/libcorral-raw5.so\n"
                                   "  - path: " + kDir + "/libcorral-raw6.so\n"
                                   "  - path: " + kDir + "/libcorral-raw7.so\n"
                                   "  - path: " + kDir + "/libcorral-testbox.so\n");
  Registry r = Registry::load({{reg, "test"}});
  ::unsetenv("CORRAL_PLUGIN_PROBE_TIMEOUT");
  CHECK(r.names() == std::vector<std::string>{"testbox"});
  REQUIRE(r.find_broken("raw5"));
  CHECK(r.find_broken("raw5")->error->cause == LoadFailure::crashed);
  CHECK(contains(r.find_broken("raw5")->error->message, "crashed while loading (SIGSEGV)"));
  REQUIRE(r.find_broken("raw6"));
  CHECK(r.find_broken("raw6")->error->cause == LoadFailure::crashed);
  REQUIRE(r.find_broken("raw7"));
  CHECK(r.find_broken("raw7")->error->cause == LoadFailure::hung);
  CHECK(contains(r.find_broken("raw7")->error->message, "not tried again until the file changes"));
}

TEST_CASE("a probe is cached by the file's identity, and redone when the file changes") {
  CacheHome cache;
  test::TempDir t;
  fs::copy_file(kDir + "/libcorral-testbox.so", t.path() / "libcorral-testbox.so");
  fs::path lib = t.path() / "libcorral-testbox.so";
  fs::path reg = t.write("r.yaml", "plugins: [libcorral-testbox.so]\n");
  REQUIRE(Registry::load({{reg, "test"}}).find("testbox"));
  const fs::path entry = cache.cache().file_for(fs::canonical(lib));
  REQUIRE(fs::exists(entry));
  CHECK((fs::status(entry).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));
  auto first = identity(entry);

  REQUIRE(Registry::load({{reg, "test"}}).find("testbox"));
  CHECK(identity(entry) == first);  // reused: no probe wrote it again

  fs::last_write_time(lib, fs::last_write_time(lib) + std::chrono::seconds(5));
  REQUIRE(Registry::load({{reg, "test"}}).find("testbox"));
  CHECK(identity(entry) != first);  // re-probed: the entry was replaced

  SUBCASE("a corrupt entry is probed again") {
    std::ofstream(entry, std::ios::trunc) << "{\"format\": 1, \"sta";
    REQUIRE(Registry::load({{reg, "test"}}).find("testbox"));
    CHECK(cache.cache().get(fs::canonical(lib)));
  }
  SUBCASE("an entry others can write is not believed") {
    ::chmod(entry.c_str(), 0666);
    CHECK_FALSE(cache.cache().get(fs::canonical(lib)));
  }
}

TEST_CASE("a pin is checked against the cached checksum without probing again") {
  CacheHome cache;
  test::TempDir t;
  fs::path lib = kDir + "/libcorral-testbox.so";
  const std::string sha = sha256_file(lib);
  fs::path good = t.write("good.yaml", "plugins:\n  - path: " + lib.string() + "\n    sha256: " + sha + "\n");
  fs::path bad = t.write("bad.yaml", "plugins:\n  - path: " + lib.string() + "\n    sha256: " + std::string(64, 'a') + "\n");
  REQUIRE(Registry::load({{good, "test"}}).find("testbox"));
  Registry r = Registry::load({{bad, "test"}});
  CHECK_FALSE(r.find("testbox"));
  REQUIRE(r.find_broken("testbox"));
  CHECK(r.find_broken("testbox")->error->cause == LoadFailure::checksum_mismatch);
  CHECK(contains(r.find_broken("testbox")->error->message, sha));
}

TEST_CASE("registry entries are strict: an unknown key, a bad pin or a limit without isolation refuses the entry") {
  CacheHome cache;
  test::TempDir t;
  const std::string lib = kDir + "/libcorral-testbox.so";
  struct Case {
    std::string entry;
    std::string says;
  };
  for (const Case& c : {Case{"{path: " + lib + ", sha265: 00}", "unknown key 'sha265' (did you mean 'sha256'?)"},
                        Case{"{path: " + lib + ", isolaton: process}", "unknown key 'isolaton' (did you mean 'isolation'?)"},
                        Case{"{path: " + lib + ", call-timeout: 5m}", "call-timeout applies only to a plugin run with"},
                        Case{"{path: " + lib + ", sha256: abc}", "sha256 must be 64 hexadecimal digits"},
                        Case{"{path: " + lib + ", isolation: [process]}", "'isolation' must be a single value"},
                        Case{"{path: " + lib + ", recrod: r.json}", "unknown key 'recrod' (did you mean 'record'?)"}}) {
    CAPTURE(c.entry);
    fs::path reg = t.write("r.yaml", "plugins:\n  - " + c.entry + "\n");
    Registry r = Registry::load({{reg, "test"}});
    CHECK_FALSE(r.find("testbox"));  // never loaded unpinned or in-process by a typo
    REQUIRE(r.entries().size() == 1);
    CHECK(r.entries()[0].error->cause == LoadFailure::bad_registry);
    CHECK_MESSAGE(contains(r.entries()[0].error->message, c.says), r.entries()[0].error->message);
    CHECK(contains(r.entries()[0].error->message, "path, sha256, isolation, call-timeout, cancel-grace, record") ==
          (c.says.find("unknown key") != std::string::npos));
  }
  fs::path extra = t.write("x.yaml", "plugins: []\nplugin: [" + lib + "]\n");
  Registry r = Registry::load({{extra, "test"}});
  REQUIRE(r.entries().size() == 1);
  CHECK(contains(r.entries()[0].error->message, "unknown key 'plugin'"));
  // The same keys, spelled right, load.
  fs::path good = t.write("g.yaml", "plugins:\n  - {path: " + lib + ", isolation: process, call-timeout: 5m}\n");
  CHECK(Registry::load({{good, "test"}}).find("testbox"));
}

TEST_CASE("a registry that is not a regular file is refused, not waited on or read without end") {
  CacheHome cache;
  test::TempDir t;
  fs::path fifo = t.path() / "fifo.yaml";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  fs::path zero = t.path() / "zero.yaml";
  fs::create_symlink("/dev/zero", zero);
  Registry r = Registry::load({{fifo, "test"}, {zero, "test"}});
  REQUIRE(r.entries().size() == 2);
  for (const ProviderEntry& e : r.entries()) CHECK_FALSE(e.ok());
}

TEST_CASE("a broken entry answers to its provider's name; a broken later entry never lets an earlier one run") {
  CacheHome cache;
  test::TempDir t;
  fs::create_directories(t.path() / "a");
  fs::copy_file(kDir + "/libcorral-testbox.so", t.path() / "a/libcorral-testbox.so");
  fs::path first = t.write("a/r.yaml", "plugins: [libcorral-testbox.so]\n");
  // The later registry's testbox is pinned to other bytes: broken before it is even probed.
  fs::path second = t.write("b/r.yaml", "plugins:\n  - path: " + (t.path() / "a/libcorral-testbox.so").string() +
                                            "\n    sha256: " + std::string(64, '0') + "\n");
  Registry r = Registry::load({{first, "system"}, {second, "user"}});
  CHECK_FALSE(r.find("testbox"));
  try {
    r.entry("testbox");
    FAIL("a shadowed provider must not be found");
  } catch (const ConfigError& e) {
    CHECK(contains(e.what(), "could not be loaded"));
    CHECK(contains(e.what(), second.string()));
    CHECK(contains(e.what(), first.string()));
    CHECK(contains(e.what(), "sha256 mismatch"));
  }
  // Alone, the broken entry still answers to "testbox" (from its file name), with its load error.
  Registry alone = Registry::load({{second, "user"}});
  CHECK_THROWS_AS(alone.entry("testbox"), ConfigError);
  CHECK_THROWS_WITH_AS(alone.entry("nosuch"), doctest::Contains("unknown provider 'nosuch'"), Error);
  try {
    alone.entry("nosuch");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::invalid_argument);
  }
}
