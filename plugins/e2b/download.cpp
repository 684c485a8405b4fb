#include "download.hpp"

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

}  // namespace corral::e2b
