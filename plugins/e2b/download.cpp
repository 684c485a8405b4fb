#include "download.hpp"

#include <random>

#include "corral/types.hpp"

namespace corral::e2b {

DownloadPaths download_paths(const std::string& workdir, const std::string& cwd, const std::string& archive_name) {
  DownloadPaths p;
  p.run_from = "/tmp";
  p.folder = ".." + join_workspace_path(workdir, cwd);  // the workdir is absolute: "../home/user/..."
  p.archive = archive_name;  // download_script resolves it from run_from, not from the folder
  p.remote = "/tmp/" + archive_name;
  return p;
}

std::string download_archive_name() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* hex = "0123456789abcdef";
  std::string out = "corral-download-";
  for (int i = 0; i < 16; ++i) out += hex[rng() % 16];
  return out + ".tar.gz";
}

}  // namespace corral::e2b
