#include "download.hpp"

#include <random>

#include "corral/types.hpp"

namespace corral::e2b {

DownloadPaths download_paths(const std::string& workdir, const std::string& cwd, const std::string& archive_name) {
  const std::string folder = join_workspace_path(workdir, cwd);
  DownloadPaths p;
  p.run_from = "/tmp";
  p.folder = ".." + folder;
  // Back up from the folder to "/" one part at a time (join_workspace_path leaves no "."
  // or ".." part), then down into /tmp.
  size_t parts = 0;
  for (size_t i = 0; i < folder.size(); ++i)
    if (folder[i] != '/' && (i == 0 || folder[i - 1] == '/')) ++parts;
  for (size_t i = 0; i < parts; ++i) p.archive += "../";
  p.archive += "tmp/" + archive_name;
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
