#include "session_run.hpp"

#include <chrono>
#include <optional>

#include "command_input.hpp"
#include "command_line.hpp"
#include "corral/sdk/http.hpp"
#include "corral/os/random.hpp"
#include "corral/os/temp_file.hpp"
#include "corral/os/wait.hpp"
#include "log_demux.hpp"
#include "output_decoder.hpp"

namespace corral::daytona {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxReconnects = 5;

// Ends the session (and with it the command), warning when that is not confirmed.
void stop_remote(Toolbox& toolbox, const std::string& session, const SessionHooks& hooks) {
  if (!toolbox.delete_session(session) && hooks.warn)
    hooks.warn("could not confirm that the command stopped in Daytona sandbox " + toolbox.sandbox_id() +
               "; it may keep running there until the sandbox stops");
}

}  // namespace

int run_in_session(Toolbox& toolbox, const SessionCommand& command, const SessionHooks& hooks, const std::string& step,
                   const SessionTiming& timing) {
  const std::string what = "Daytona sandbox " + toolbox.sandbox_id() + ": " + step;
  const std::string session = os::random_tag("corral-");
  WrappedCommand wrapped{command.argv, command.cwd, "", command.input != nullptr};
  std::optional<os::TempFile> env_file;
  if (!command.env.empty()) {
    env_file.emplace("daytona", env_file_content(command.env));
    wrapped.env_file = os::random_tag(command.home + "/.corral-env-");
  }
  const std::string text = wrapper_text(wrapped);

  toolbox.create_session(session);
  std::string command_id;
  try {
    if (env_file) toolbox.upload(env_file->path(), wrapped.env_file, hooks.stop);
    command_id = toolbox.run_async(session, text);
  } catch (...) {
    toolbox.delete_session(session);
    if (env_file) {
      try {
        toolbox.remove_path(wrapped.env_file);
      } catch (const Error&) {
      }
    }
    throw;
  }
  env_file.reset();
  std::optional<CommandInput> input;
  if (command.input) input.emplace(toolbox, session, command_id, *command.input);

  // The log carries each stream encoded by the wrapper: demultiplex, then decode.
  OutputDecoder out(what + ": stdout", hooks.on_stdout);
  OutputDecoder err(what + ": stderr", hooks.on_stderr);
  std::uint64_t out_fed = 0, err_fed = 0;  // demultiplexed (encoded) bytes handed on per stream
  LogDemux demux([&](std::string_view d) { out_fed += d.size(); out.feed(d); },
                 [&](std::string_view d) { err_fed += d.size(); err.feed(d); });
  std::uint64_t delivered = 0;  // raw log bytes handed to the demultiplexer so far
  int drops = 0;
  bool stalled = false;
  for (;;) {
    std::uint64_t position = 0;  // raw log bytes of this connection
    bool user_stop = false;
    auto next_watch = Clock::now() + timing.watch;
    std::optional<Clock::time_point> ended_at;
    auto watch = [&] {
      if (input && hooks.warn)
        if (const std::string failure = input->take_failure(); !failure.empty()) hooks.warn(failure);
      if (hooks.stop && hooks.stop()) return user_stop = true;
      if (Clock::now() < next_watch) return false;
      next_watch = Clock::now() + timing.watch;
      try {
        if (!ended_at && toolbox.exit_code(session, command_id)) ended_at = Clock::now();
      } catch (const Error&) {
        // a failed check proves nothing; the stream itself reports real trouble
      }
      return stalled = ended_at && Clock::now() - *ended_at > timing.close_grace;
    };
    auto on_bytes = [&](std::string_view data) {
      // After a reconnect the toolbox replays the log from its start: skip what was seen.
      const std::uint64_t end = position + data.size();
      if (end > delivered) {
        demux.feed(data.substr(static_cast<std::size_t>(delivered > position ? delivered - position : 0)));
        delivered = end;
      }
      position = end;
    };
    std::optional<Error> failure;
    try {
      if (toolbox.follow_logs(session, command_id, on_bytes, watch).closed) break;
    } catch (const Error& e) {
      if (user_stop) {
        stop_remote(toolbox, session, hooks);
        throw Error(ErrorCode::cancelled, what + ": stopped");
      }
      if (stalled) break;  // the command ended long ago: its log is complete, read it whole
      if (e.code() != ErrorCode::unavailable) {
        stop_remote(toolbox, session, hooks);
        throw;
      }
      failure = e;
    }
    if (++drops > kMaxReconnects) {
      stop_remote(toolbox, session, hooks);
      throw sdk::http::connection_lost(what, "command",
                                       "the output stream broke " + std::to_string(drops) + " times" +
                                           (failure ? std::string("; last: ") + failure->what() : ""));
    }
    if (!os::sleep_unless_stopped(std::chrono::milliseconds(200 << std::min(drops, 5)), hooks.stop)) {
      stop_remote(toolbox, session, hooks);
      throw Error(ErrorCode::cancelled, what + ": stopped");
    }
  }
  try {
    if (stalled) {
      // A stream that never closed: what it did not deliver comes from the whole log. Bytes
      // the demultiplexer held back are either a prefix or counted in neither total.
      auto [all_out, all_err] = toolbox.logs(session, command_id);
      if (all_out.size() > out_fed) out.feed(std::string_view(all_out).substr(static_cast<std::size_t>(out_fed)));
      if (all_err.size() > err_fed) err.feed(std::string_view(all_err).substr(static_cast<std::size_t>(err_fed)));
    } else {
      demux.finish();
    }
    out.finish();
    err.finish();
  } catch (const Error&) {
    stop_remote(toolbox, session, hooks);
    throw;
  }

  // The stream closes once the exit code is recorded; allow a moment for it to show.
  std::optional<int> code;
  const auto give_up = Clock::now() + timing.exit_code_wait;
  auto delay = std::chrono::milliseconds(50);
  try {
    while (!(code = toolbox.exit_code(session, command_id)) && Clock::now() < give_up) {
      if (!os::sleep_unless_stopped(delay, hooks.stop)) {
        stop_remote(toolbox, session, hooks);
        throw Error(ErrorCode::cancelled, what + ": stopped");
      }
      delay = std::min(std::chrono::milliseconds(500), delay * 2);
    }
  } catch (const Error& e) {
    if (e.code() != ErrorCode::cancelled) stop_remote(toolbox, session, hooks);
    throw;
  }
  if (!code) {
    stop_remote(toolbox, session, hooks);
    throw Error(ErrorCode::unavailable, what + ": the output ended but Daytona recorded no exit code",
                "the sandbox may have stopped; check `corral status --id LEASE` and rerun");
  }
  input.reset();                    // the command ended: what it did not read goes nowhere
  toolbox.delete_session(session);  // tidy: a finished session holds only its logs
  return *code;
}

}  // namespace corral::daytona
