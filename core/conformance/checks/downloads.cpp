// Checks of run-downloads: a failed command's files come back, links out refused, the bound held.
#include "conformance/checks/checks.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/printable.hpp"

namespace corral::conformance {

namespace {

void downloads(CheckContext& cx) {
  const fs::path dir = cx.kit.download_dir();
  std::error_code ec;
  fs::remove_all(dir, ec);
  Observed o = cx.kit.run({.shell = "mkdir -p out && echo '<report/>' > out/r.xml && cp blob.bin out/ && "
                                  "ln -s /etc/passwd out/escape && exit 4",
                         .downloads = {"out/*.xml", "out/blob.bin", "out/escape", "absent/*"}});
  o.expect_exit(4);
  const SessionHandle& h = o.handle();
  if (!h.downloads) fail("the handle has no downloads after a run with --download");
  const DownloadSummary& d = *h.downloads;
  if (d.error) fail(fmt::format("the download failed: {}", printable(d.error->what())));
  if (read_text(dir / "out/r.xml") != "<report/>\n") fail("out/r.xml did not come back intact");
  if (read_text(dir / "out/blob.bin") != blob_bytes()) fail("the binary file did not come back byte for byte");
  if (fs::exists(fs::symlink_status(dir / "out/escape")) || d.refused.empty())
    fail("a link pointing out of the download folder was written instead of refused");
  if (d.missing != std::vector<std::string>{"absent/*"})
    fail(fmt::format("the pattern that matched nothing was not reported as missing (missing: {})",
                     fmt::join(d.missing, ", ")));
  cx.kit.expect_cleaned_up(o);

  Observed bounded = cx.kit.run({.shell = "true", .downloads = {"blob.bin"}, .max_download = 4096});
  bounded.expect_exit(0);
  if (!bounded.handle().downloads || !bounded.handle().downloads->error)
    fail("a download past --max-download was not stopped");
  if (fs::exists(dir / "blob.bin")) fail("a download past --max-download was unpacked");
  cx.kit.expect_cleaned_up(bounded);
}

}  // namespace

std::vector<CheckDef> downloads_checks() {
  using F = Feature;
  return {
      {"downloads", "--download brings back a failed command's files byte for byte, refuses a link out, holds the bound",
       {F::run_downloads}, {}, &downloads},
  };
}

}  // namespace corral::conformance
