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
  SessionCommand pack;
  pack.argv = {"/bin/sh", "-c", sdk::download_script(folder, request.patterns, archive)};
  pack.cwd = home;
  pack.home = home;
  std::string errors;  // the script's report: one line per pattern that matched nothing
  SessionHooks hooks;
  hooks.on_stdout = [](std::string_view) {};
  hooks.on_stderr = [&](std::string_view d) {
    if (errors.size() < 65536) errors.append(d.substr(0, 65536 - errors.size()));
  };
  hooks.stop = [&] { return host.cancelled(); };
  hooks.warn = [&](const std::string& w) { host.warn(w); };
  // A failure to clean up must not hide the failure that got us here.
  auto remove_archive = [&] {
    try {
      toolbox.remove_path(archive);
    } catch (const Error&) {
      host.warn("could not remove " + archive + " from Daytona sandbox " + sandbox.id +
                "; it goes when the sandbox does");
    }
  };
  host.progress("packing the downloads in Daytona sandbox " + sandbox.id);
  sdk::DownloadReport report;
  try {
    const int code = run_in_session(toolbox, pack, hooks, "pack the downloads");  // before `errors` is read
    report = sdk::read_download_report(code, errors);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::not_found) remove_archive();  // tar may have written part of it
    throw;
  }
  if (report.nothing_matched) return {0, std::move(report.missing)};
  try {
    sdk::DownloadFile file(request);
    host.progress("downloading the files from Daytona sandbox " + sandbox.id);
    toolbox.download(archive, [&](std::string_view chunk) { file.write(chunk); }, [&] { return host.cancelled(); });
    DownloadResult result = file.finish(std::move(report.missing));
    remove_archive();
    return result;
  } catch (const Error&) {
    remove_archive();
    throw;
  }
}

}  // namespace corral::daytona
