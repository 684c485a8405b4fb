// The stand-in E2B's world: its sandboxes (each a real folder on this machine), the
// processes running in them, the fault switches tests flip, and what clients sent.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "process.hpp"
#include "standin_state.hpp"

namespace corral::e2b::standin {

using Clock = std::chrono::system_clock;

struct FakeSandbox {
  std::string id;
  std::string template_id;
  std::string alias;
  std::map<std::string, std::string> metadata;
  std::string access_token;  // envdAccessToken; empty when created without `secure`
  Clock::time_point started_at;
  Clock::time_point end_at;
  std::string state = "running";  // running | paused
  std::string envd_version;       // what E2B reports of its envd (Faults::envd_version)
  // NewSandbox.autoPause / autoPauseMemory: at the end of its lifetime the sandbox is paused
  // (with or without its memory) instead of deleted.
  bool auto_pause = false;
  bool auto_pause_memory = true;
  std::filesystem::path root;  // the sandbox's "/" on this machine
  std::set<pid_t> processes;   // running processes (pids envd reported)
  std::map<std::string, pid_t> tags;  // StartRequest tags of running processes
  // The way into each running process (SendInput, CloseStdin), by pid.
  std::map<pid_t, std::shared_ptr<ChildInput>> inputs;
  // What create asked of the network: NewSandbox.allow_internet_access (unset when absent)
  // and SandboxNetworkConfig's allowOut / denyOut.
  std::optional<bool> allow_internet_access;
  std::vector<std::string> allow_out, deny_out;
  // False when nothing may leave the sandbox (internet access off, or all of 0.0.0.0/0
  // denied with no exception that takes in 127.0.0.1): its commands then run without a
  // network. An allowOut list is enforced as the stand-in can: it names this machine's
  // loopback (the one address tests reach) and the command has this machine's network,
  // or it does not and the command has none.
  bool internet() const;
};

// Fault switches; tests set them between runs.
struct Faults {
  bool reject_api_key = false;          // control plane answers 401 to everything
  int lifetime_cap_hours = 0;           // > 0: timeouts above it are refused with 400
  bool cap_message_without_number = false;
  std::string fail_route;               // "create", "get", "connect", "list", "kill", "timeout", "start", "files"
  int fail_status = 0;                  // answered on fail_route instead of the real thing
  int fail_times = 0;                   // > 0: only this many times, then the real thing
  std::string retry_after;              // sent with fail_status when non-empty
  bool echo_secrets = false;            // error bodies quote the request's API key / access token
  std::string redirect_to;              // control plane answers 307 to this origin
  int cut_streams_from = 0;             // > 0: the Start calls from this one (1-based) on
                                        // stream output, then end without their `end` event
  std::string cut_how = "end";          // how those streams stop: "end" (cleanly, as above),
                                        // "reset" (the connection drops after the first output,
                                        // the command still running), "rst" (the same with a
                                        // TCP RST instead of a FIN), "mid-envelope" (cleanly,
                                        // inside an envelope) or "oversized" (after the first
                                        // output, an envelope header claiming 1 GiB, then the
                                        // connection drops)
  std::string reset_route;              // control plane: the answer's headers, then the
                                        // connection drops inside its body (work done anyway)
  int reset_times = -1;                 // ... this many times, then the real thing; < 0: always
  bool reset_with_rst = false;          // ... with a TCP RST instead of a FIN
  std::string delay_route;              // control plane: the work is done, then the answer
                                        // waits delay_ms (ended early by State::release())
  int delay_ms = 0;
  int stall_start = 0;                  // > 0: that Start call (1-based) goes silent after its
                                        // first output (no bytes, no keepalives) until its
                                        // client, its process or its sandbox is gone
  std::string hold_route;               // any route: a call waits (counted in State::held)
                                        // until State::release(), then is served
  int hold_skip = 0;                    // ... after this many calls of it were let through
  int keepalive_ms = 0;                 // > 0: keepalive events this often while quiet
  int slow_chunk_ms = 0;                // > 0: pause before every data event
  int start_delay_ms = 0;               // > 0: the process runs this long before its `start` event
  std::string malformed_route;          // "create", "get", "list" or "start": a 2xx answer
  std::string malformed = "not-json";   // ... that is "not-json", "wrong-types", "truncated"
                                        // (a JSON prefix), "deep" (400,000 '[') or (start) "text"
  std::string sandbox_domain;           // non-empty: the `domain` E2B reports for sandboxes
  int max_sandboxes = 0;                // > 0: the team's concurrent-sandbox limit: while this
                                        // many sandboxes run (paused ones do not count), create
                                        // and the resume of a paused one (connect) answer 429,
                                        // and fork reports 429 for each fork past it
  std::string envd_version = "0.5.4";  // the envdVersion of sandboxes made from now on;
                                        // before 0.5.2 their envd has no CloseStdin
  std::string vanish_route;             // a route ("files", "start", or a control-plane one such
                                        // as "pause"): once, the sandbox is deleted (as when its
                                        // lifetime ends) just before that call reaches it ...
  int vanish_skip = 0;                  // ... after letting this many of its calls through
};

class State : public test::StandinState {
 public:
  using StandinState::StandinState;

  std::set<std::string> templates = {"base"};

  // Everything below is guarded by mutex(); hold it while touching sandboxes or faults.
  Faults faults;
  std::map<std::string, FakeSandbox> sandboxes;
  // The bodies of create, pause and fork requests (calls, per route, are counted too).
  std::vector<std::string> create_bodies;
  std::vector<std::string> pause_bodies;  // of the valid pause calls
  std::vector<std::string> fork_bodies;
  std::vector<std::string> network_bodies;  // of the valid PUT /sandboxes/{id}/network calls
  std::vector<std::string> input_bodies;    // of the SendInput calls that reached a process
  // The metadata filter of every list call, as the server parsed it.
  std::vector<std::map<std::string, std::string>> list_filters;
  // Threads that keep reading the output of processes whose client went away (as envd
  // keeps them running); joined when the stand-in stops. Safe without the mutex.
  test::Workers drains;
  int page_size = 100;
  std::vector<std::string> issued_tokens;  // every envdAccessToken handed out  // list pages hold at most this many (to exercise X-Next-Token)
  // Every header value clients sent, per route, to check where secrets travel.
  std::map<std::string, std::vector<std::string>> header_values;

  // Create answers this many ms after it made the sandbox, as E2B's start latency makes it
  // (e2b-standin --create-delay-ms; tests leave it 0).
  int create_delay_ms = 0;
  // Calls waiting on Faults::hold_route now.
  int held = 0;
  // Waits while `route` is held (see Faults::hold_route); `lock` holds mutex() and is
  // released while waiting.
  void hold(const std::string& route, std::unique_lock<std::mutex>& lock);
  // Waits delay_ms when `route` is Faults::delay_route, or until release(); `lock` holds
  // mutex() and is released while waiting.
  // Also waits create_delay_ms on "create".
  void delay(const std::string& route, std::unique_lock<std::mutex>& lock);
  // Lets every held or delayed call go on and holds or delays no more (clears hold_route
  // and delay_route).
  void release();
  // True (and counted down) when fail_route answers this call of `route` with fail_status.
  bool fails(const std::string& route);
  // True (once) when the vanish fault deletes the sandbox at this call of `route`.
  bool vanishes(const std::string& route);

  // A new sandbox with its folder tree (home/user, tmp); caller holds the mutex.
  FakeSandbox& add_sandbox(const std::string& template_id, bool secure, long timeout_seconds);
  // Deletes expired sandboxes, or pauses those created with autoPause (E2B's lifetime
  // enforcement; a paused sandbox does not expire); caller holds the mutex.
  void expire();
  // Sandboxes that run now: what the concurrent-sandbox limit counts; caller holds the mutex.
  int running() const;
  // Pauses `sb`: with `memory`, its processes are stopped (SIGSTOP of their groups) to go
  // on at resume; without, they are killed, as a filesystem-only snapshot cold-boots.
  // Caller holds the mutex.
  void pause(FakeSandbox& sb, bool memory);
  // Resumes a paused `sb` (SIGCONT of its stopped processes); caller holds the mutex.
  void resume(FakeSandbox& sb);
  // A new running sandbox living `timeout_seconds` with a copy of `source`'s files,
  // template, metadata, network and security (E2B's fork: its own files from the
  // snapshot on); caller holds the mutex.
  FakeSandbox& fork(const FakeSandbox& source, long timeout_seconds);
  // Kills a sandbox's processes (and their groups) and removes its folder; caller holds
  // the mutex.
  void remove(const std::string& id);

  // The host path of sandbox path `path` for `user` (relative = from their home);
  // nullopt when it would leave the sandbox.
  static std::optional<std::filesystem::path> map_path(const FakeSandbox& sb, const std::string& path,
                                                       const std::string& user);

 private:
  std::condition_variable released_;
};

// RFC 3339 UTC time, as E2B writes startedAt / endAt.
std::string rfc3339(Clock::time_point t);
// A random lower-case alphanumeric string.
std::string random_id(size_t length);

}  // namespace corral::e2b::standin
