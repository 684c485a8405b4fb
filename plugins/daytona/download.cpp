// DaytonaProvider::download: the matches packed by sdk::download_script in a process
// session, the archive fetched with the toolbox's file API into sdk::DownloadFile (which
// holds the size bound), then deleted from the sandbox whatever happened.
#include "corral/sdk/download.hpp"
#include "provider.hpp"
#include "session_run.hpp"

namespace corral::daytona {

DownloadResult DaytonaProvider::download(const Sandbox& sandbox, const DownloadRequest& request,
                                         const sdk::Host& host) {
  Toolbox toolbox = toolbox_for(sandbox, host);
  const std::string folder = join_workspace_path(workdir_of(sandbox, toolbox, host), request.cwd);
  const std::string& home = live_[sandbox.id].home;
  // In the user's home rather than /tmp: the toolbox's file API answers for it, as for
  // the upload archive, whatever the snapshot does with /tmp.
  const std::string archive = home + (home == "/" ? "." : "/.") + sdk::download_archive_name();
  sdk::RemoteArchive remote;
  remote.pack = [&](const std::string& script, const std::function<void(std::string_view)>& on_stderr) {
    host.progress("packing the downloads in Daytona sandbox " + sandbox.id);
    SessionCommand pack;
    pack.argv = {"/bin/sh", "-c", script};
    pack.cwd = home;
    pack.home = home;
    return run_in_session(toolbox, pack, sdk::remote::step_hooks(host, on_stderr), "pack the downloads");
  };
  remote.fetch = [&](const std::function<void(std::string_view)>& sink) {
    host.progress("downloading the files from Daytona sandbox " + sandbox.id);
    toolbox.download(archive, sink, [&] { return host.cancelled(); }, host.transfer_reporter());
  };
  remote.remove = [&] {
    try {
      toolbox.remove_path(archive);
    } catch (const Error&) {
      host.warn("could not remove " + archive + " from Daytona sandbox " + sandbox.id +
                "; it goes when the sandbox does");
    }
  };
  return sdk::download_through_archive(request, folder, archive, remote);
}

}  // namespace corral::daytona
