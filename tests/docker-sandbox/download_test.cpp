// The docker-sandbox plugin's download primitive through its C ABI (as corral loads it)
// against the stand-in sbx: the archive packed by `sbx exec`, copied out with `sbx cp`
// and streamed into the bounded local file, both temporary copies removed.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "corral/wire.hpp"
#include "download_bytes.hpp"
#include "plugin_harness.hpp"
#include "standin_fixture.hpp"

namespace fs = std::filesystem;
using namespace corral;
using namespace corral::test;

namespace {

struct Fixture {
  sbx_test::StandIn sbx;
  TempDir work;
  TempDir tmp;  // the plugin's TMPDIR: its private copy must not outlive a call
  std::string ws = fs::canonical(work.path()).string();
  std::unique_ptr<PluginHarness> plugin;

  Fixture() {
    ::setenv("SBX_STANDIN_STATE", sbx.state().c_str(), 1);
    ::setenv("TMPDIR", tmp.str().c_str(), 1);
    plugin = std::make_unique<PluginHarness>(CORRAL_SBX_PLUGIN, std::map<std::string, std::string>{
                                                                    {"cli", sbx_test::standin_path()},
                                                                    {"cli-timeout", "30s"}});
  }
  ~Fixture() {
    ::unsetenv("SBX_STANDIN_STATE");
    ::unsetenv("TMPDIR");
  }
  const corral_plugin_v1& d() const { return plugin->descriptor(); }
  Sandbox create() {
    CreateRequest r{.lease_id = "lease-1",
                    .slug = "dl",
                    .labels = {{"corral-owner", "corral"}, {"corral-lease", "lease-1"}},
                    .workspace = ws};
    PluginCall c = plugin->call(d().create, wire::to_json(r));
    INFO(c.message);
    REQUIRE(c.ok);
    return wire::read<Sandbox>(c.result, "sandbox");
  }
  PluginCall download(const Sandbox& sb, const std::string& cwd, std::vector<std::string> patterns,
                      const std::string& archive, std::uint64_t max_bytes = 1 << 30,
                      std::function<bool()> cancelled = {}) {
    return plugin->call(d().download,
                        wire::to_json(wire::DownloadCall{sb, {cwd, std::move(patterns), archive, max_bytes}}),
                        std::move(cancelled));
  }
  // The sandbox paths `sbx cp` copied from.
  std::vector<std::string> copied() const {
    std::vector<std::string> out;
    for (const auto& c : sbx.calls_of("cp")) out.push_back(c.at(2).substr(c.at(2).find(':') + 1));
    return out;
  }
  // The plugin's private copies left in its TMPDIR.
  int local_leftovers() const {
    int n = 0;
    for (const auto& e : fs::directory_iterator(tmp.path()))
      if (e.path().filename().string().rfind("corral-sbx-download-", 0) == 0) ++n;
    return n;
  }
};

}  // namespace

TEST_CASE_FIXTURE(Fixture, "sbx download brings the matching files back byte-exact; both temporary copies go") {
  const std::string data = binary_bytes(300000);
  work.write("sub/data.bin", data);
  work.write("sub/reports/a.xml", "<ok/>\n");
  work.write("sub/skip.txt", "no\n");
  Sandbox sb = create();
  TempDir out;
  const std::string local = (out.path() / "out.tar.gz").string();
  PluginCall c = download(sb, "sub", {"data.bin", "reports", "*.log"}, local);
  INFO(c.message);
  REQUIRE(c.ok);
  DownloadResult r = wire::read<DownloadResult>(c.result, "download result");
  CHECK(r.size == fs::file_size(local));
  CHECK(r.missing == std::vector<std::string>{"*.log"});
  TempDir unpacked;
  unpack(local, unpacked);
  CHECK(read_file(unpacked.path() / "data.bin") == data);
  CHECK(read_file(unpacked.path() / "reports/a.xml") == "<ok/>\n");
  CHECK_FALSE(fs::exists(unpacked.path() / "skip.txt"));
  REQUIRE(copied().size() == 1);
  CHECK(copied()[0].rfind("/tmp/corral-download-", 0) == 0);
  CHECK_FALSE(fs::exists(copied()[0]));  // the stand-in's sandboxes share this machine's files
  CHECK(local_leftovers() == 0);
  plugin->call(d().destroy, wire::to_json(wire::SandboxRequest{sb}));
}

TEST_CASE_FIXTURE(Fixture, "sbx download of patterns that match nothing copies nothing") {
  work.write("README", "hi\n");
  Sandbox sb = create();
  TempDir out;
  const std::string local = (out.path() / "out.tar.gz").string();
  PluginCall c = download(sb, "", {"*.xml", "no/such"}, local);
  INFO(c.message);
  REQUIRE(c.ok);
  DownloadResult r = wire::read<DownloadResult>(c.result, "download result");
  CHECK(r.size == 0);
  CHECK(r.missing == std::vector<std::string>{"*.xml", "no/such"});
  CHECK(sbx.calls_of("cp").empty());
  CHECK_FALSE(fs::exists(local));
  plugin->call(d().destroy, wire::to_json(wire::SandboxRequest{sb}));
}

TEST_CASE_FIXTURE(Fixture, "sbx download stops at the size bound, and the copies are still removed") {
  work.write("big.bin", binary_bytes(2 << 20));
  Sandbox sb = create();
  TempDir out;
  const std::string local = (out.path() / "out.tar.gz").string();
  PluginCall c = download(sb, "", {"big.bin"}, local, 256 * 1024);
  CHECK_FALSE(c.ok);
  CHECK(c.code == CORRAL_ERR_INVALID_ARGUMENT);
  CHECK(c.message.find("--max-download") != std::string::npos);
  CHECK(fs::file_size(local) <= 256 * 1024);
  REQUIRE(copied().size() == 1);
  CHECK_FALSE(fs::exists(copied()[0]));
  CHECK(local_leftovers() == 0);
  plugin->call(d().destroy, wire::to_json(wire::SandboxRequest{sb}));
}

TEST_CASE_FIXTURE(Fixture, "Ctrl-C during an sbx download stops it and removes the copies") {
  work.write("big.bin", binary_bytes(4 << 20));
  Sandbox sb = create();
  TempDir out;
  const std::string local = (out.path() / "out.tar.gz").string();
  // Ctrl-C once the archive is being copied out.
  PluginCall c = download(sb, "", {"big.bin"}, local, 1 << 30, [&] { return !sbx.calls_of("cp").empty(); });
  CHECK_FALSE(c.ok);
  CHECK(c.code == CORRAL_ERR_CANCELLED);
  REQUIRE(copied().size() == 1);
  CHECK_FALSE(fs::exists(copied()[0]));
  CHECK(local_leftovers() == 0);
  plugin->call(d().destroy, wire::to_json(wire::SandboxRequest{sb}));
}

TEST_CASE_FIXTURE(Fixture, "sbx download from a vanished sandbox or folder is not-found") {
  work.write("README", "hi\n");
  Sandbox sb = create();
  TempDir out;
  const std::string local = (out.path() / "out.tar.gz").string();
  PluginCall folder = download(sb, "gone", {"x"}, local);
  CHECK(folder.code == CORRAL_ERR_NOT_FOUND);
  CHECK(folder.message.find("folder") != std::string::npos);
  REQUIRE(sbx.run({"rm", "-f", sb.id}).exit_code == 0);
  PluginCall c = download(sb, "", {"README"}, local);
  CHECK_FALSE(c.ok);
  CHECK(c.code == CORRAL_ERR_NOT_FOUND);
  CHECK(c.message.find(sb.id) != std::string::npos);
  CHECK(sbx.calls_of("cp").empty());
}

TEST_CASE_FIXTURE(Fixture, "Ctrl-C while tar packs in the sandbox stops tar there, not only sbx exec") {
  // A 64 GiB hole: tar reads it and gzip squeezes it for minutes, so it is still packing.
  std::ofstream(work.path() / "huge.bin").close();
  fs::resize_file(work.path() / "huge.bin", std::uintmax_t{64} << 30);
  Sandbox sb = create();
  TempDir out;
  int packer = 0;  // the pack script's pid: it ends by exec'ing tar
  auto packing = [&] {
    if (packer == 0 && !sbx.exec_pids(sb.id).empty()) packer = sbx.exec_pids(sb.id)[0];
    return packer != 0;
  };
  PluginCall c = download(sb, "", {"huge.bin"}, (out.path() / "out.tar.gz").string(), 1 << 30, packing);
  CHECK_FALSE(c.ok);
  CHECK(c.code == CORRAL_ERR_CANCELLED);
  REQUIRE(packer != 0);
  CHECK(sbx_test::process_ends(packer));
  CHECK(sbx.calls_of("stop").size() == 1);
  CHECK(sbx.calls_of("cp").empty());
  // The partial archive is still removed (the last exec starts the stopped sandbox again).
  std::string script = sbx.calls_of("exec").at(0).back();
  std::string archive = script.substr(2, script.find('\n') - 2);  // a=/tmp/...
  REQUIRE(archive.rfind("/tmp/corral-download-", 0) == 0);
  CHECK_FALSE(fs::exists(archive));
  CHECK(local_leftovers() == 0);
  plugin->call(d().destroy, wire::to_json(wire::SandboxRequest{sb}));
}

TEST_CASE_FIXTURE(Fixture, "sbx download never reaches above the command's folder, whatever glob can match '..'") {
  // The stand-in's sandboxes see this machine's files, as a real one sees its mounted tree:
  // the parent of the command's folder holds what must not come back.
  work.write("secret.txt", "above the command's folder\n");
  work.write("sub/.hidden", "h\n");
  work.write("sub/report.xml", "<ok/>\n");
  Sandbox sb = create();
  for (const char* glob : {".[.]/secret.txt", ".[.]", ".?", ".*", "[.][.]/secret.txt"}) {
    const std::string pattern = glob;
    CAPTURE(pattern);
    TempDir out;
    const std::string local = (out.path() / "out.tar.gz").string();
    PluginCall c = download(sb, "sub", {pattern, "report.xml"}, local);
    INFO(c.message);
    REQUIRE(c.ok);
    TempDir unpacked;
    unpack(local, unpacked);
    CHECK(read_file(unpacked.path() / "report.xml") == "<ok/>\n");
    for (const auto& e : fs::recursive_directory_iterator(unpacked.path())) {
      CAPTURE(e.path());
      CHECK(e.path().filename() != "secret.txt");
      CHECK(e.path().filename() != "sub");  // the command's folder itself, seen from above
    }
  }
  plugin->call(d().destroy, wire::to_json(wire::SandboxRequest{sb}));
}
