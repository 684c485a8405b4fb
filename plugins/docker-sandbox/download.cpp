// DockerSandboxProvider::download: `sbx exec` packs the matches into a temporary archive
// in the sandbox, `sbx cp` copies it into a private local folder, and from there it is
// streamed through sdk::DownloadFile (which holds the size bound); both copies are removed
// whatever happened.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "corral/sdk/download.hpp"
#include "provider.hpp"
#include "sbx_errors.hpp"

namespace fs = std::filesystem;

namespace corral::docker_sandbox {
namespace {

// A mode-0700 folder in $TMPDIR (or /tmp) that `sbx cp` copies into, removed with the object.
class PrivateDir {
 public:
  PrivateDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/corral-sbx-download-XXXXXX";
    if (!::mkdtemp(pattern.data()))
      throw Error(ErrorCode::internal,
                  "cannot make a temporary folder for the download: " + std::string(std::strerror(errno)),
                  "set TMPDIR to a writable folder");
    path_ = pattern;
  }
  ~PrivateDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Streams the local file `path` to `sink` in pieces, stopping with cancelled on Ctrl-C.
void copy_into(const std::string& path, const std::function<void(std::string_view)>& sink, const sdk::Host& host) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    throw Error(ErrorCode::unavailable, "sbx cp left no archive at " + path + ": " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  std::string buffer(1 << 16, '\0');
  while (true) {
    if (host.cancelled()) throw Error(ErrorCode::cancelled, "the download was interrupted");
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(ErrorCode::internal, "cannot read the copied archive " + path + ": " + std::strerror(errno));
    if (n == 0) return;
    sink(std::string_view(buffer.data(), static_cast<size_t>(n)));
  }
}

}  // namespace

DownloadResult DockerSandboxProvider::download(const Sandbox& sandbox, const DownloadRequest& request,
                                               const sdk::Host& host) {
  std::string folder = exec_dir(sandbox, request.cwd);
  if (folder.empty()) folder = ".";  // sbx's own workdir: the workspace
  const std::string archive = "/tmp/" + sdk::download_archive_name();
  sdk::RemoteArchive remote;
  remote.pack = [&](const std::string& script, const std::function<void(std::string_view)>& on_stderr) {
    host.progress("packing the downloads in Docker Sandbox " + sandbox.id);
    std::string words;  // sbx's own, should it fail rather than the script
    os::ProcessOutcome packed = cli_.stream(
        {"exec", sandbox.id, "sh", "-c", script}, [](std::string_view) {},
        [&](std::string_view d) {
          on_stderr(d);
          if (words.size() < 1024) words.append(d.substr(0, 1024 - words.size()));
        },
        [&host] { return host.cancelled(); }, 0);
    if (packed.cancelled) {
      // As with exec, ending `sbx exec` leaves tar packing in the sandbox: stop it there.
      stop_quietly(sandbox.id, host);
      throw Error(ErrorCode::cancelled, "the download was interrupted");
    }
    // sbx's exit codes overlap the script's, so `sbx ls` decides whose failure it was.
    if (packed.exit_code != 0 && packed.exit_code != sdk::kDownloadNothingMatched)
      if (auto e = exec_failure(sandbox.id, words, host)) throw *e;
    return packed.exit_code;
  };
  remote.fetch = [&](const std::function<void(std::string_view)>& sink) {
    PrivateDir local;
    host.progress("copying the downloads out of Docker Sandbox " + sandbox.id);
    cli_.run({"cp", sandbox.id + ":" + archive, local.path() + "/"}, [&host] { return host.cancelled(); });
    copy_into(local.path() + "/" + archive.substr(archive.rfind('/') + 1), sink, host);
  };
  // Not interruptible and bounded by the control timeout: cleanup runs after Ctrl-C too.
  remote.remove = [&] {
    std::string why;
    try {
      SbxResult r = cli_.capture({"exec", sandbox.id, "rm", "-f", "--", archive});
      if (r.exit_code == 0) return;
      why = gist(r.err + "\n" + r.out);
    } catch (const Error& e) {
      why = e.what();
    }
    host.warn("could not remove " + archive + " from Docker Sandbox " + sandbox.id + " (" + why +
              "); it goes when the sandbox does");
  };
  return sdk::download_through_archive(request, folder, archive, remote);
}

}  // namespace corral::docker_sandbox
