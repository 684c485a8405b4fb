// The parts every provider's `download` primitive shares: the script that packs the
// matching files inside the sandbox, the reading of its report, and the local archive
// file that holds the size bound while the bytes stream in.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "corral/types.hpp"

namespace corral::sdk {

// The exit status of download_script when no pattern matched anything (no archive made).
inline constexpr int kDownloadNothingMatched = 3;
// Its exit status when the folder is missing: none that tar or a shell would give.
inline constexpr int kDownloadNoFolder = 97;

// A POSIX sh script that, inside the sandbox, goes to `folder` (absolute, or relative to
// the shell's start), expands each of `patterns` there as a shell glob (skipping any match
// with a ".." part, such as '.[.]' or '.*' give in most shells), and writes a
// gzip-compressed tar of the matches (folders whole, symlinks as links) to `archive`
// ("-" = stdout; absolute, or relative to the shell's start like `folder`). Each pattern
// that matched nothing is reported on stderr; the script exits kDownloadNothingMatched
// when none matched, kDownloadNoFolder when `folder` is missing. Names reach GNU tar as
// they are (--no-unquote: a backslash in a name is a backslash).
std::string download_script(std::string_view folder, const std::vector<std::string>& patterns,
                            std::string_view archive);

// A fresh name for the archive a download leaves in the sandbox until it is fetched:
// corral-download-<16 random hex digits>.tar.gz, so concurrent downloads never collide.
std::string download_archive_name();

struct DownloadReport {
  bool nothing_matched = false;
  std::vector<std::string> missing;  // patterns that matched nothing
};
// What download_script's exit status and stderr say. Throws corral::Error (unavailable)
// quoting the script's own messages when it failed.
DownloadReport read_download_report(int exit_code, std::string_view stderr_text);

// The local archive a download primitive writes: created (mode 0600) at
// request.archive_path, refusing to grow past request.max_bytes.
class DownloadFile {
 public:
  explicit DownloadFile(const DownloadRequest& request);
  ~DownloadFile();
  DownloadFile(const DownloadFile&) = delete;
  DownloadFile& operator=(const DownloadFile&) = delete;
  // Appends `data`; throws invalid-argument, naming the bound, once the archive would pass
  // max_bytes, and corral::Error on a write failure (a full disk).
  void write(std::string_view data);
  // Bytes written so far.
  std::uint64_t size() const { return size_; }
  // Flushes and closes; throws on failure. The result of a primitive that wrote `size()`.
  DownloadResult finish(std::vector<std::string> missing);

 private:
  std::string path_;
  std::uint64_t max_bytes_;
  std::uint64_t size_ = 0;
  int fd_ = -1;
};

// How a provider that fetches files with its own file API takes part in a download: it
// runs the packing script in the sandbox, streams the archive the script left there, and
// removes that archive.
struct RemoteArchive {
  // Runs `script` in the sandbox (its stdout is nothing) with its stderr passed to
  // `on_stderr`; returns its exit status. Throws not-found when the sandbox is gone.
  std::function<int(const std::string& script, const std::function<void(std::string_view)>& on_stderr)> pack;
  // Streams the archive's bytes to `sink` as they arrive; stops with cancelled on Ctrl-C.
  std::function<void(const std::function<void(std::string_view)>& sink)> fetch;
  // Removes the archive from the sandbox. Never throws: it warns, the sandbox's end removes it.
  std::function<void()> remove;
};

// The download primitive for such a provider: packs download_script(folder, patterns,
// archive) with `remote.pack`, fetches the archive into a DownloadFile at
// request.archive_path, and removes the sandbox's copy on every path but a vanished
// sandbox. Nothing matched: returns size 0 without fetching.
DownloadResult download_through_archive(const DownloadRequest& request, std::string_view folder,
                                        std::string_view archive, const RemoteArchive& remote);

// How a provider that runs a command and reads its output takes part in a download: the
// packing script writes the archive to stdout, straight into the bounded local file.
struct StreamedScript {
  int exit_code = 0;
  bool cancelled = false;  // `stop` said so and the script was stopped
};
using OutputSink = std::function<void(std::string_view)>;
// Runs `script` in the sandbox with its stdout to `on_stdout` and stderr to `on_stderr`,
// stopping it as soon as `stop()` returns true.
using ScriptRunner = std::function<StreamedScript(const std::string& script, const OutputSink& on_stdout,
                                                  const OutputSink& on_stderr, const std::function<bool()>& stop)>;

// The download primitive for such a provider: runs download_script(folder, patterns, "-")
// with `run`, writing its stdout into a DownloadFile at request.archive_path. Stops the
// script once the bound is passed (rethrowing that error) or `cancelled()` (throwing
// cancelled). Nothing matched: returns size 0.
DownloadResult download_through_stdout(const DownloadRequest& request, std::string_view folder,
                                       const ScriptRunner& run, const std::function<bool()>& cancelled);

}  // namespace corral::sdk
