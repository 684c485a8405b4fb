#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include "cli.hpp"
#include "corral/json.hpp"
#include "plugin_host/elf_exports.hpp"
#include "base/hash.hpp"
#include "plugin_host/loader.hpp"
#include "plugin_host/plugin_probe.hpp"
#include "corral/os/trusted_path.hpp"

namespace fs = std::filesystem;
using namespace corral;

namespace {

fs::path plugin(const std::string& name) { return fs::path(CORRAL_TEST_PLUGIN_DIR) / ("libcorral-" + name + ".so"); }

// A private copy, so permission changes do not touch the build tree.
fs::path copy_of(const test::TempDir& t, const std::string& name) {
  fs::path p = t.path() / ("libcorral-" + name + ".so");
  fs::copy_file(plugin(name), p);
  ::chmod(p.c_str(), 0755);
  return p;
}

// A copy of the testbox plugin at `relative` under `t`, its folders made 0755.
fs::path placed(const test::TempDir& t, const std::string& relative) {
  fs::path p = t.path() / relative;
  fs::create_directories(p.parent_path());
  for (fs::path d = p.parent_path(); d != t.path(); d = d.parent_path()) ::chmod(d.c_str(), 0755);
  fs::copy_file(plugin("testbox"), p);
  ::chmod(p.c_str(), 0755);
  return p;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

LoadError failure(const fs::path& p, LoadOptions o = {}) {
  LoadResult r = load_plugin(p, o);
  REQUIRE_FALSE(r.plugin);
  REQUIRE(r.error);
  return *r.error;
}

}  // namespace

TEST_CASE("a well-formed SDK plugin loads with its spec and primitives") {
  LoadResult r = load_plugin(plugin("testbox"), {});
  REQUIRE_MESSAGE(r.plugin, (r.error ? r.error->message : ""));
  CHECK(r.plugin->spec().name == "testbox");
  CHECK(r.plugin->version() == "1.0.0");
  CHECK(bool(r.plugin->table().url));
  CHECK(bool(r.plugin->table().fork));
  LoadResult mount = load_plugin(plugin("mountbox"), {});
  REQUIRE_MESSAGE(mount.plugin, (mount.error ? mount.error->message : ""));
  CHECK_FALSE(bool(mount.plugin->table().pause));  // not overridden, so not provided
  CHECK_FALSE(bool(mount.plugin->table().fork));
}

TEST_CASE("a plain C plugin built against the ABI header loads too") {
  LoadResult r = load_plugin(plugin("raw0"), {});
  REQUIRE_MESSAGE(r.plugin, (r.error ? r.error->message : ""));
  CHECK(r.plugin->spec().name == "raw");
}

TEST_CASE("each defect is refused with its own cause and a message naming the file") {
  test::TempDir t;
  SUBCASE("missing file") {
    LoadError e = failure(t.path() / "libnope.so");
    CHECK(e.cause == LoadFailure::missing_file);
    CHECK(e.message.find("libnope.so") != std::string::npos);
  }
  SUBCASE("not a shared library") {
    fs::path p = t.write("libtext.so", "this is text");
    LoadError e = failure(p);
    CHECK(e.cause == LoadFailure::not_a_library);
  }
  SUBCASE("no entry point") {
    LoadError e = failure(plugin("raw1"));
    CHECK(e.cause == LoadFailure::missing_entry_point);
    CHECK(e.message.find("corral_plugin_entry_v1") != std::string::npos);
  }
  SUBCASE("wrong ABI version") {
    LoadError e = failure(plugin("raw2"));
    CHECK(e.cause == LoadFailure::abi_mismatch);
    CHECK(e.message.find("version 999") != std::string::npos);
    CHECK(e.message.find("speaks version 1") != std::string::npos);
  }
  SUBCASE("feature advertised without its primitive") {
    LoadError e = failure(plugin("raw3"));
    CHECK(e.cause == LoadFailure::missing_primitive);
    CHECK(e.message.find("'url-bridge'") != std::string::npos);
    CHECK(e.message.find("'url'") != std::string::npos);
  }
  SUBCASE("unknown feature in the spec") {
    LoadError e = failure(plugin("raw4"));
    CHECK(e.cause == LoadFailure::bad_spec);
    CHECK(e.message.find("teleport") != std::string::npos);
  }
  SUBCASE("group- or world-writable file") {
    fs::path p = copy_of(t, "testbox");
    ::chmod(p.c_str(), 0775);
    LoadError e = failure(p);
    CHECK(e.cause == LoadFailure::untrusted_file);
    CHECK(e.message.find("group-writable") != std::string::npos);
    CHECK(contains(e.message, "chmod go-w " + p.string()));
    ::chmod(p.c_str(), 0757);
    CHECK(failure(p).message.find("world-writable") != std::string::npos);
    ::chmod(p.c_str(), 0755);
    CHECK(load_plugin(p, {}).plugin);
  }
  SUBCASE("sha256 pin") {
    fs::path p = copy_of(t, "testbox");
    LoadError e = failure(p, {std::string(64, '0'), true});
    CHECK(e.cause == LoadFailure::checksum_mismatch);
    CHECK(e.message.find(sha256_file(p)) != std::string::npos);
    CHECK(load_plugin(p, {sha256_file(p), true}).plugin);
  }
}

TEST_CASE("trust covers the whole path to the resolved file and every link on the way") {
  test::TempDir t;
  SUBCASE("a link into a world-writable folder is refused, naming that folder") {
    fs::path real = placed(t, "open/libcorral-testbox.so");
    ::chmod((t.path() / "open").c_str(), 0777);
    fs::path link = t.path() / "libcorral-link.so";
    fs::create_symlink(real, link);
    LoadError e = failure(link);
    CHECK(e.cause == LoadFailure::untrusted_file);
    CHECK(contains(e.message, (t.path() / "open").string() + " is world-writable"));
    CHECK(contains(e.message, "chmod go-w " + (t.path() / "open").string()));
    ::chmod((t.path() / "open").c_str(), 0755);
    LoadResult fine = load_plugin(link, {});
    CHECK_MESSAGE(fine.plugin, (fine.error ? fine.error->message : ""));
  }
  SUBCASE("a file under world-writable/sub/ is refused") {
    fs::path p = placed(t, "open/sub/libcorral-testbox.so");
    ::chmod((t.path() / "open").c_str(), 0777);
    LoadError e = failure(p);
    CHECK(e.cause == LoadFailure::untrusted_file);
    CHECK(contains(e.message, (t.path() / "open").string() + " is world-writable"));
  }
  SUBCASE("a group-writable ancestor is refused too") {
    fs::path p = placed(t, "team/sub/libcorral-testbox.so");
    ::chmod((t.path() / "team").c_str(), 0775);
    CHECK(contains(failure(p).message, (t.path() / "team").string() + " is group-writable"));
  }
  SUBCASE("a sticky world-writable folder, like /tmp, is fine further up but not as the file's own folder") {
    fs::path deep = placed(t, "sticky/sub/libcorral-testbox.so");
    fs::path direct = placed(t, "sticky/libcorral-testbox.so");
    ::chmod((t.path() / "sticky").c_str(), 01777);
    LoadResult ok = load_plugin(deep, {});
    CHECK_MESSAGE(ok.plugin, (ok.error ? ok.error->message : ""));
    LoadError e = failure(direct);
    CHECK(e.cause == LoadFailure::untrusted_file);
    CHECK(contains(e.message, (t.path() / "sticky").string() + " is world-writable and directly holds"));
  }
  SUBCASE("a link kept in a world-writable folder is refused even when its target is fine") {
    fs::path real = placed(t, "safe/libcorral-testbox.so");
    fs::create_directories(t.path() / "open");
    ::chmod((t.path() / "open").c_str(), 0777);
    fs::path link = t.path() / "open/libcorral-link.so";
    fs::create_symlink(real, link);
    CHECK(contains(failure(link).message, (t.path() / "open").string() + " is world-writable"));
  }
  SUBCASE("a relative link resolves against its own folder, through '..'") {
    placed(t, "safe/lib/libcorral-testbox.so");
    fs::create_directories(t.path() / "safe/bin");
    fs::create_symlink("../lib/libcorral-testbox.so", t.path() / "safe/bin/libcorral-link.so");
    os::TrustCheck check = os::check_trusted_path(t.path() / "safe/bin/libcorral-link.so");
    REQUIRE_FALSE(check.distrust);
    CHECK(check.resolved == fs::canonical(t.path() / "safe/lib/libcorral-testbox.so"));
  }
  SUBCASE("a link loop is refused rather than followed for ever") {
    fs::create_symlink(t.path() / "b.so", t.path() / "a.so");
    fs::create_symlink(t.path() / "a.so", t.path() / "b.so");
    os::TrustCheck check = os::check_trusted_path(t.path() / "a.so");
    REQUIRE(check.distrust);
    CHECK(contains(check.distrust->problem, "too many levels of symbolic links"));
  }
}

TEST_CASE("a file, folder or link owned by another user is refused with a chown hint") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: giving files away needs root (CI runs as root)");
    return;
  }
  test::TempDir t;
  constexpr uid_t kNobody = 65534;
  SUBCASE("the file") {
    fs::path p = placed(t, "libcorral-testbox.so");
    REQUIRE(::chown(p.c_str(), kNobody, kNobody) == 0);
    LoadError e = failure(p);
    CHECK(e.cause == LoadFailure::untrusted_file);
    CHECK(contains(e.message, p.string() + " is owned by uid 65534, neither root nor you"));
    CHECK(contains(e.message, "fix with: chown root " + p.string()));
  }
  SUBCASE("a folder on its path") {
    fs::path p = placed(t, "theirs/sub/libcorral-testbox.so");
    REQUIRE(::chown((t.path() / "theirs").c_str(), kNobody, kNobody) == 0);
    LoadError e = failure(p);
    CHECK(contains(e.message, (t.path() / "theirs").string() + " is owned by uid 65534"));
    CHECK(contains(e.message, "chown root " + (t.path() / "theirs").string()));
  }
  SUBCASE("a link on the way") {
    fs::path real = placed(t, "safe/libcorral-testbox.so");
    fs::path link = t.path() / "libcorral-link.so";
    fs::create_symlink(real, link);
    REQUIRE(::lchown(link.c_str(), kNobody, kNobody) == 0);
    LoadError e = failure(link);
    CHECK(contains(e.message, link.string() + " is owned by uid 65534"));
    CHECK(contains(e.message, "chown -h root " + link.string()));  // not the link's target
  }
}

TEST_CASE("a probe reports a plugin's spec, version and ABI from a child process") {
  ProbeResult r = probe_plugin(plugin("testbox"), std::chrono::seconds(10));
  REQUIRE_MESSAGE(r.ok(), (r.error ? r.error->message : ""));
  CHECK(json::spec_from_json(r.spec_json).name == "testbox");
  CHECK(r.plugin_version == "1.0.0");
  CHECK(r.abi_version == CORRAL_ABI_VERSION);
}

TEST_CASE("a probe carries a load failure back with its cause and message") {
  ProbeResult r = probe_plugin(plugin("raw2"), std::chrono::seconds(10));
  REQUIRE(r.error);
  CHECK(r.error->cause == LoadFailure::abi_mismatch);
  CHECK(contains(r.error->message, "version 999"));
}

TEST_CASE("a plugin that crashes or hangs while loading costs a probe child, not this process") {
  SUBCASE("its ELF constructor segfaults") {
    ProbeResult r = probe_plugin(plugin("raw5"), std::chrono::seconds(10));
    REQUIRE(r.error);
    CHECK(r.error->cause == LoadFailure::crashed);
    CHECK(contains(r.error->message, "libcorral-raw5.so: crashed while loading (SIGSEGV)"));
  }
  SUBCASE("its entry point segfaults") {
    ProbeResult r = probe_plugin(plugin("raw6"), std::chrono::seconds(10));
    REQUIRE(r.error);
    CHECK(r.error->cause == LoadFailure::crashed);
    CHECK(contains(r.error->message, "crashed while loading (SIGSEGV)"));
  }
  SUBCASE("its entry point never returns: killed at the deadline") {
    auto start = std::chrono::steady_clock::now();
    ProbeResult r = probe_plugin(plugin("raw7"), std::chrono::milliseconds(300));
    auto took = std::chrono::steady_clock::now() - start;
    REQUIRE(r.error);
    CHECK(r.error->cause == LoadFailure::hung);
    CHECK(contains(r.error->message, "still loading after 0.3 s"));
    CHECK(took >= std::chrono::milliseconds(300));
    CHECK(took < std::chrono::seconds(5));
  }
}

TEST_CASE("a crash is named by its signal even when this process handles that signal") {
  // As a sanitizer runtime does: its handler ends the process with status 1 instead.
  struct sigaction exits {}, previous {};
  exits.sa_handler = [](int) { ::_exit(1); };
  sigemptyset(&exits.sa_mask);
  REQUIRE(::sigaction(SIGSEGV, &exits, &previous) == 0);
  ProbeResult r = probe_plugin(plugin("raw5"), std::chrono::seconds(10));
  ::sigaction(SIGSEGV, &previous, nullptr);
  REQUIRE(r.error);
  CHECK(r.error->cause == LoadFailure::crashed);
  CHECK(contains(r.error->message, "libcorral-raw5.so: crashed while loading (SIGSEGV)"));
}

TEST_CASE("the probe deadline comes from CORRAL_PLUGIN_PROBE_TIMEOUT, else 10 s") {
  ::setenv("CORRAL_PLUGIN_PROBE_TIMEOUT", "1.5", 1);
  CHECK(probe_deadline() == std::chrono::milliseconds(1500));
  ::setenv("CORRAL_PLUGIN_PROBE_TIMEOUT", "soon", 1);
  CHECK(probe_deadline() == std::chrono::seconds(10));
  ::unsetenv("CORRAL_PLUGIN_PROBE_TIMEOUT");
  CHECK(probe_deadline() == std::chrono::seconds(10));
}

TEST_CASE("every load failure cause reads back from its name") {
  for (int i = 0; i <= static_cast<int>(LoadFailure::hung); ++i) {
    auto cause = static_cast<LoadFailure>(i);
    CHECK(parse_load_failure(to_string(cause)) == cause);
  }
  CHECK_FALSE(parse_load_failure("exploded"));
}

TEST_CASE("exported symbols are read from the dynamic symbol table, without loading the file") {
  // raw7 imports pause(), which made Boost.DLL 1.74's library_info misname its symbols.
  CHECK(elf_exports(plugin("raw7"), CORRAL_PLUGIN_ENTRY_SYMBOL));
  CHECK(elf_exports(plugin("testbox"), CORRAL_PLUGIN_ENTRY_SYMBOL));
  CHECK(elf_exports(plugin("raw1"), "some_other_symbol"));
  CHECK_FALSE(elf_exports(plugin("raw1"), CORRAL_PLUGIN_ENTRY_SYMBOL));
  CHECK_FALSE(elf_exports(plugin("raw0"), "raw_open"));  // static: not exported
  CHECK_FALSE(elf_exports(plugin("raw7"), "pause"));      // imported, not defined
  test::TempDir t;
  CHECK_THROWS_WITH(elf_exports(t.write("text.so", "#!/bin/sh\n"), "x"), "not an ELF file");
  std::string truncated = test::read_file(plugin("raw0")).substr(0, 200);
  CHECK_THROWS(elf_exports(t.write("cut.so", truncated), CORRAL_PLUGIN_ENTRY_SYMBOL));
}
