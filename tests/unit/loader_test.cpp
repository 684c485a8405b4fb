#include <doctest/doctest.h>
#include <sys/stat.h>

#include "cli.hpp"
#include "hash.hpp"
#include "loader.hpp"

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
  CHECK_FALSE(bool(r.plugin->table().pause));  // not overridden, so not provided
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
