#include "corral/sdk/download.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "corral/errors.hpp"
#include "corral/os/fd_write.hpp"
#include "corral/os/random.hpp"
#include "corral/sdk/shell.hpp"
#include "corral/sdk/sizes.hpp"

namespace corral::sdk {
namespace {

constexpr std::string_view kMissingPrefix = "corral-missing: ";

// A sink that keeps the first 64 KiB of the packing script's stderr in `kept`: its report
// is one line per missing pattern, and a hostile sandbox must not grow it without end.
OutputSink keep_bounded(std::string& kept) {
  return [&kept](std::string_view d) {
    constexpr size_t kKeptStderr = 65536;
    if (kept.size() < kKeptStderr) kept.append(d.substr(0, kKeptStderr - kept.size()));
  };
}

}  // namespace

std::string download_script(std::string_view folder, const std::vector<std::string>& patterns,
                            std::string_view archive) {
  std::string list;
  for (const std::string& p : patterns) list += " " + shell_quote(p);
  // IFS='' keeps an expanded pattern one word while the glob still expands; "./" in front
  // keeps a match that starts with '-' from being read as an option by tar. A match with a
  // ".." part is skipped: globs such as '.[.]', '.?' or '.*' expand to ".." in most shells,
  // and nothing above the folder may come back, whatever the host checked. A relative
  // archive is made absolute before the cd, so it names a place from where the shell
  // started, like the folder does, however the folder is reached (symlinks included).
  return "a=" + shell_quote(archive) +
         "\n"
         "case \"$a\" in -|/*) ;; *) a=\"$PWD/$a\" ;; esac\n"
         "cd -- " + shell_quote(folder) +
         " || exit " + std::to_string(kDownloadNoFolder) + "\n"
         "IFS=''\n"
         "set --\n"
         "for p in" + list + "; do\n"
         "  m=0\n"
         "  for f in ./$p; do\n"
         "    case \"/$f/\" in */../*) continue ;; esac\n"
         "    if [ -e \"$f\" ] || [ -L \"$f\" ]; then set -- \"$@\" \"$f\"; m=1; fi\n"
         "  done\n"
         "  [ \"$m\" = 1 ] || printf '" + std::string(kMissingPrefix) + "%s\\n' \"$p\" >&2\n"
         "done\n"
         "[ \"$#\" -gt 0 ] || exit " + std::to_string(kDownloadNothingMatched) + "\n"
         // GNU tar reads "\\" and "\\n" in the names it is given as escapes unless told not to;
         // other tars take names as they are, and know no such option.
         "q=\n"
         "case \"$(tar --version 2>/dev/null)\" in *GNU*) q=--no-unquote ;; esac\n"
         "exec tar -czf \"$a\" $q \"$@\"\n";
}

std::string download_archive_name() { return os::random_tag("corral-download-") + ".tar.gz"; }

DownloadReport read_download_report(int exit_code, std::string_view stderr_text) {
  DownloadReport report;
  std::string other;
  size_t start = 0;
  while (start < stderr_text.size()) {
    size_t end = stderr_text.find('\n', start);
    if (end == std::string_view::npos) end = stderr_text.size();
    std::string_view line = stderr_text.substr(start, end - start);
    if (line.rfind(kMissingPrefix, 0) == 0) report.missing.emplace_back(line.substr(kMissingPrefix.size()));
    else if (!line.empty()) other += (other.empty() ? "" : "; ") + std::string(line.substr(0, 500));
    start = end + 1;
  }
  if (exit_code == kDownloadNothingMatched) {
    report.nothing_matched = true;
    return report;
  }
  if (exit_code == kDownloadNoFolder)
    throw Error(ErrorCode::not_found, "the command's folder no longer exists in the sandbox, so nothing was downloaded");
  if (exit_code != 0)
    throw Error(ErrorCode::unavailable,
                "packing the downloads in the sandbox failed (exit " + std::to_string(exit_code) + ")" +
                    (other.empty() ? "" : ": " + other.substr(0, 2000)),
                "the sandbox needs tar and gzip on its PATH");
  return report;
}

DownloadFile::DownloadFile(const DownloadRequest& request)
    : path_(request.archive_path), max_bytes_(request.max_bytes) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd_ < 0)
    throw Error(ErrorCode::internal, "cannot write the download archive " + path_ + ": " + std::strerror(errno));
}

DownloadFile::~DownloadFile() {
  if (fd_ >= 0) ::close(fd_);
}

void DownloadFile::write(std::string_view data) {
  if (size_ + data.size() > max_bytes_)
    throw Error(ErrorCode::invalid_argument,
                "the downloaded files pass the size bound of " + format_size(max_bytes_) + " (--max-download)",
                "download fewer files, or raise the bound with --max-download");
  if (!os::write_all(fd_, data)) {
    const int err = errno;
    throw Error(os::write_error_code(err),
                "cannot write the download archive " + path_ + ": " + std::strerror(err));
  }
  size_ += data.size();
}

DownloadResult DownloadFile::finish(std::vector<std::string> missing) {
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0)
    throw Error(ErrorCode::internal, "cannot write the download archive " + path_ + ": " + std::strerror(errno));
  return {size_, std::move(missing)};
}

DownloadResult download_through_archive(const DownloadRequest& request, std::string_view folder,
                                        std::string_view archive, const RemoteArchive& remote) {
  std::string errors;
  DownloadReport report;
  try {
    const int code = remote.pack(download_script(folder, request.patterns, archive), keep_bounded(errors));
    report = read_download_report(code, errors);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::not_found) remote.remove();  // tar may have written part of it
    throw;
  }
  if (report.nothing_matched) return {0, std::move(report.missing)};
  try {
    DownloadFile file(request);
    remote.fetch([&](std::string_view chunk) { file.write(chunk); });
    DownloadResult result = file.finish(std::move(report.missing));
    remote.remove();
    return result;
  } catch (const Error&) {
    remote.remove();
    throw;
  }
}

DownloadResult download_through_stdout(const DownloadRequest& request, std::string_view folder,
                                       const ScriptRunner& run, const std::function<bool()>& cancelled) {
  DownloadFile file(request);
  std::optional<Error> refused;  // the first write error (the bound, a full disk): stops the script
  std::string errors;
  const StreamedScript outcome = run(
      download_script(folder, request.patterns, "-"),
      [&](std::string_view d) {
        if (refused) return;
        try {
          file.write(d);
        } catch (const Error& e) {
          refused = e;
        }
      },
      keep_bounded(errors), [&] { return refused.has_value() || (cancelled && cancelled()); });
  if (refused) throw *refused;
  if (outcome.cancelled) throw Error(ErrorCode::cancelled, "the download was stopped");
  DownloadReport report = read_download_report(outcome.exit_code, errors);
  if (report.nothing_matched) return {0, std::move(report.missing)};
  return file.finish(std::move(report.missing));
}

}  // namespace corral::sdk
