// `corral mcp`'s server: MCP over stdio for one client. The reading thread parses each
// line and answers the protocol's own requests at once; each tools/call runs on a thread
// of its own, so calls on different sandboxes overlap; answers and notifications go out
// whole, one line at a time, through one lock. stdout carries only protocol messages;
// everything else goes to stderr. When stdin closes, a stop signal arrives or stdout
// breaks, the server cancels the calls in flight, waits for them to clean up, stops every
// sandbox it made that the user did not let it keep, and says which kept ones remain.
//
// Threads: serve() runs on the caller's thread and returns once all the server's threads
// ended; a Server serves once.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "book.hpp"
#include "json_rpc.hpp"
#include "limits.hpp"
#include "protocol.hpp"
#include "service/session.hpp"
#include "tools.hpp"

namespace corral::mcp {

struct ServerOptions {
  Limits limits;
  StringMap provider_flags;       // --<provider>-<option> VALUE for every provider opened
  std::string version;            // corral's, in serverInfo
  std::size_t max_line = 12u << 20;  // bytes in one message: an 8 MiB file, base64, and change
  int max_calls = 32;             // tool calls in flight at once
  std::function<bool()> stop_requested;  // a stop signal arrived (SIGTERM, SIGINT)
};

class Server {
 public:
  // Reads `in`, writes protocol lines to `out` and logs to `log`; the descriptors stay the caller's.
  Server(service::Session& session, ServerOptions options, int in, int out, int log);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Serves until the end (see above); 0, or 1 when a sandbox could not be stopped.
  int serve();

 private:
  struct Call;

  void dispatch(Message message);
  void initialize(const Message& m);
  void discover(const Message& m, const Era& era);
  void list_tools(const Message& m, const Era& era);
  void call_tool(Message m, const Era& era);
  void cancel(const Message& m);
  // Runs `call`'s tool and answers it, on its own thread.
  void run_call(const std::shared_ptr<Call>& call);
  // Joins the threads of calls that ended.
  void reap_calls(bool all);
  // Stops the sandboxes past their lifetime, until the server ends (its own thread).
  void expire_loop();
  // Stops every sandbox made here and not kept; false when one could not be stopped.
  bool stop_made();

  void answer(const std::string& id, const Era& era, const std::string& fields);
  void fail(const std::string& id, const RpcError& error);
  // Writes one line to stdout, whole; a broken stdout ends the server.
  void send(const std::string& line);
  void log(const std::string& message);

  service::Session& session_;
  const ServerOptions options_;
  const int in_, out_, log_;
  Book book_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> initialized_{false};
  std::mutex out_mutex_;

  std::mutex calls_mutex_;
  std::map<std::string, std::shared_ptr<Call>> calls_;  // in flight, by request id
  std::list<std::pair<std::shared_ptr<Call>, std::thread>> threads_;

  std::mutex expire_mutex_;
  std::condition_variable expire_wake_;
  std::thread expirer_;
};

}  // namespace corral::mcp
