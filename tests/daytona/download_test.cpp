// The daytona plugin's download primitive through its C ABI (as corral loads it) against
// the stand-in Daytona: the archive comes back byte-exact over GET /files/download, what
// matched nothing is reported, the size bound holds, and nothing is left in the sandbox.
#include <doctest/doctest.h>

#include <filesystem>

#include "cli.hpp"
#include "corral/json.hpp"
#include "corral/wire.hpp"
#include "download_bytes.hpp"
#include "plugin_fixture.hpp"

using namespace corral;
using namespace corral::test;
namespace fs = std::filesystem;

namespace {

PluginCall download(DaytonaPlugin& fx, const Sandbox& sb, const std::string& cwd, std::vector<std::string> patterns,
                    const std::string& archive, std::uint64_t max_bytes = 1 << 30) {
  return fx.plugin->call(fx.d().download,
                         wire::to_json(wire::DownloadCall{sb, {cwd, std::move(patterns), archive, max_bytes}}));
}

// Download archives left in the sandbox's home folder.
int leftover_archives(DaytonaPlugin& fx, const Sandbox& sb) {
  fs::path home = fx.server.with([&](auto& st) { return daytona::standin::State::home_of(st.sandboxes.at(sb.id)); });
  int n = 0;
  for (const auto& e : fs::recursive_directory_iterator(home))
    if (e.path().filename().string().find("corral-download") != std::string::npos) ++n;
  return n;
}

}  // namespace

TEST_CASE("daytona download brings the matching files back byte-exact and deletes the sandbox's archive") {
  DaytonaPlugin fx;
  const std::string data = binary_bytes(300000);
  Sandbox sb = ready(fx, {{"sub/data.bin", data}, {"sub/reports/a.xml", "<ok/>\n"}, {"sub/skip.txt", "no\n"}});
  TempDir tmp;
  const std::string local = (tmp.path() / "out.tar.gz").string();
  PluginCall c = download(fx, sb, "sub", {"data.bin", "reports", "*.log"}, local);
  INFO(c.message);
  REQUIRE(c.ok);
  DownloadResult r = wire::read<DownloadResult>(c.result, "download result");
  CHECK(r.size == fs::file_size(local));
  CHECK(r.missing == std::vector<std::string>{"*.log"});
  TempDir out;
  unpack(local, out);
  CHECK(read_file(out.path() / "data.bin") == data);
  CHECK(read_file(out.path() / "reports/a.xml") == "<ok/>\n");
  CHECK_FALSE(fs::exists(out.path() / "skip.txt"));
  CHECK(fx.toolbox_calls("GET files/download") == 1);
  CHECK(leftover_archives(fx, sb) == 0);
  CHECK(c.message.find(fx.server.api_key()) == std::string::npos);
  fx.plugin->call(fx.d().destroy, wire::to_json(wire::SandboxRequest{sb}));
}

TEST_CASE("daytona download of patterns that match nothing fetches nothing") {
  DaytonaPlugin fx;
  Sandbox sb = ready(fx, {{"README", "hi\n"}});
  TempDir tmp;
  const std::string local = (tmp.path() / "out.tar.gz").string();
  PluginCall c = download(fx, sb, "", {"*.xml", "no/such"}, local);
  INFO(c.message);
  REQUIRE(c.ok);
  DownloadResult r = wire::read<DownloadResult>(c.result, "download result");
  CHECK(r.size == 0);
  CHECK(r.missing == std::vector<std::string>{"*.xml", "no/such"});
  CHECK(fx.toolbox_calls("GET files/download") == 0);
  CHECK_FALSE(fs::exists(local));
  CHECK(leftover_archives(fx, sb) == 0);
  fx.plugin->call(fx.d().destroy, wire::to_json(wire::SandboxRequest{sb}));
}

TEST_CASE("daytona download stops at the size bound and still deletes the sandbox's archive") {
  DaytonaPlugin fx;
  Sandbox sb = ready(fx, {{"big.bin", binary_bytes(2 << 20)}});
  TempDir tmp;
  const std::string local = (tmp.path() / "out.tar.gz").string();
  PluginCall c = download(fx, sb, "", {"big.bin"}, local, 256 * 1024);
  CHECK_FALSE(c.ok);
  CHECK(c.code == CORRAL_ERR_INVALID_ARGUMENT);
  CHECK(c.message.find("--max-download") != std::string::npos);
  CHECK(fs::file_size(local) <= 256 * 1024);
  CHECK(leftover_archives(fx, sb) == 0);
  fx.plugin->call(fx.d().destroy, wire::to_json(wire::SandboxRequest{sb}));
}

TEST_CASE("daytona download from a vanished sandbox or folder is not-found") {
  DaytonaPlugin fx;
  Sandbox sb = ready(fx, {{"README", "hi\n"}});
  TempDir tmp;
  const std::string local = (tmp.path() / "out.tar.gz").string();
  PluginCall folder = download(fx, sb, "gone", {"x"}, local);
  CHECK(folder.code == CORRAL_ERR_NOT_FOUND);
  CHECK(folder.message.find("folder") != std::string::npos);
  fx.server.with([&](auto& st) {
    st.remove(sb.id);
    return 0;
  });
  PluginCall c = download(fx, sb, "", {"README"}, local);
  CHECK_FALSE(c.ok);
  CHECK(c.code == CORRAL_ERR_NOT_FOUND);
  CHECK(fx.toolbox_calls("GET files/download") == 0);
}
