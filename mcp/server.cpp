#include "server.hpp"

#include "base/environment.hpp"
#include "telemetry/traced_operation.hpp"

#include <fmt/format.h>

#include <chrono>
#include <system_error>

#include "base/printable.hpp"
#include "corral/errors.hpp"
#include "corral/os/fd_write.hpp"
#include "line_reader.hpp"
#include "service/leases.hpp"

namespace corral::mcp {
namespace {

// How long the tool and discovery lists may be cached: they do not change while the
// server runs, and the next server may have other limits.
constexpr const char* kCacheFields = R"("ttlMs":3600000,"cacheScope":"private")";
// Progress notifications carry output in pieces of at most this many bytes.
constexpr std::size_t kProgressPiece = 4096;

// The Ui of the server's own work (expiring and stopping sandboxes): messages to the log.
class LogUi : public Ui {
 public:
  explicit LogUi(std::function<void(const std::string&)> log) : log_(std::move(log)) {}
  void out(std::string_view) override {}
  void err(std::string_view) override {}
  void info(const std::string&) override {}
  void note(const std::string& message) override { log_(message); }
  void warn(const std::string& message) override { log_("warning: " + message); }
  void progress(const std::string&) override {}
  bool cancelled() override { return false; }

 private:
  std::function<void(const std::string&)> log_;
};

std::string json_string(std::string_view text) {
  return json::text_of([&](json::Writer& w) { json::write_text(w, text); });
}

// The members of a tool's answer: its structured result, also as text for clients that
// show only text.
std::string tool_result(const std::string& structured) {
  // Written again compactly: a piece made elsewhere (a session handle) may end in a
  // newline, and a message must stay on one line.
  const std::string compact = json::dump(json::parse(structured, "a tool's result"));
  return fmt::format(R"("content":[{{"type":"text","text":{}}}],"structuredContent":{})", json_string(compact), compact);
}

// The members of a tool error: what went wrong and what to do, for the model to read.
std::string tool_error(const std::string& message, const std::string& hint) {
  return fmt::format(R"("content":[{{"type":"text","text":{}}}],"isError":true)",
                     json_string(hint.empty() ? message : message + "\nhint: " + hint));
}

constexpr const char* kInstructions =
    "corral runs commands in sandboxes made from the served folder. Use `run` for one command in a fresh "
    "sandbox; `sandbox_start`, then `sandbox_exec` and the file tools, to work in one sandbox over several "
    "steps, and `sandbox_stop` when done. `providers` lists where sandboxes can run. Limits (providers, "
    "network, variables, how many sandboxes, output size) are the user's: a tool error says which one applied.";

}  // namespace

struct Server::Call {
  std::string id;
  Era era;
  const Tool* tool = nullptr;
  Message message;  // owns `arguments`
  const json::Value* arguments = nullptr;
  std::string progress_token;  // JSON text; "" = the client wants no progress
  std::unique_ptr<CallUi> ui;
  std::atomic<bool> done{false};
  std::atomic<bool> cancelled_by_client{false};
  std::mutex progress_mutex;
  std::uint64_t streamed = 0;  // bytes of output sent as progress (under progress_mutex)
};

Server::Server(service::Session& session, ServerOptions options, int in, int out, int log)
    : session_(session),
      options_(std::move(options)),
      in_(in),
      out_(out),
      log_(log),
      book_(options_.limits.max_sandboxes) {}

Server::~Server() {
  stopping_ = true;
  expire_wake_.notify_all();
  reap_calls(true);
  if (expirer_.joinable()) expirer_.join();
}

void Server::log(const std::string& message) { os::write_all(log_, "corral mcp: " + message + "\n"); }

void Server::send(const std::string& line) {
  std::lock_guard lock(out_mutex_);
  if (!os::write_all(out_, line + "\n")) stopping_ = true;
}

void Server::answer(const std::string& id, const Era& era, const std::string& fields) {
  send(result_line(id, result_object(era, fields, options_.version)));
}

void Server::fail(const std::string& id, const RpcError& error) { send(error_line(id, error)); }

int Server::serve() {
  for (const std::string& lease : options_.limits.adopt) {
    const Claim claim = session_.claims().resolve(lease);
    book_.adopt({.lease_id = claim.lease_id, .slug = claim.slug});
  }
  expirer_ = std::thread([this] { expire_loop(); });
  LineReader reader(in_, options_.max_line);
  std::string line;
  while (!stopping_) {
    if (options_.stop_requested && options_.stop_requested()) {
      log("stop signal: ending");
      break;
    }
    LineReader::Status status;
    try {
      status = reader.next(line, 200);
    } catch (const std::system_error& e) {
      log(fmt::format("cannot read stdin: {}", e.what()));
      break;
    }
    if (status == LineReader::Status::eof) break;
    if (status == LineReader::Status::oversized)
      fail("null", {RpcCode::invalid_request, fmt::format("a message is longer than {} bytes", options_.max_line), ""});
    if (status == LineReader::Status::line && line.find_first_not_of(" \t") != std::string::npos) {
      Parsed parsed = parse_line(line);
      if (parsed.error) fail(parsed.error_id, *parsed.error);
      else if (parsed.message) dispatch(std::move(*parsed.message));
    }
    reap_calls(false);
  }
  stopping_ = true;
  expire_wake_.notify_all();
  reap_calls(true);
  expirer_.join();
  return stop_made() ? 0 : 1;
}

void Server::dispatch(Message m) {
  if (!m.is_request()) {
    if (m.method == "notifications/cancelled") cancel(m);
    return;  // notifications/initialized, progress, anything else: nothing to answer
  }
  EraOrError era = era_of(m.method, m.params, initialized_);
  if (era.error) return fail(m.id, *era.error);
  if (m.method == "initialize") return initialize(m);
  if (m.method == "ping") return answer(m.id, *era.era, "");
  if (m.method == "server/discover") return discover(m, *era.era);
  if (m.method == "tools/list") return list_tools(m, *era.era);
  if (m.method == "tools/call") return call_tool(std::move(m), *era.era);
  fail(m.id, {RpcCode::method_not_found, fmt::format("method '{}' is not served here", printable(std::string_view(m.method).substr(0, 100))), ""});
}

void Server::initialize(const Message& m) {
  const json::Value* version = m.params ? json::find(*m.params, "protocolVersion") : nullptr;
  if (!version || !version->IsString())
    return fail(m.id, {RpcCode::invalid_params, "initialize needs params.protocolVersion, a string", ""});
  initialized_ = true;
  const std::string_view chosen = negotiate_legacy(version->GetString());
  answer(m.id, Era{},
         fmt::format(R"("protocolVersion":{},"capabilities":{{"tools":{{"listChanged":false}}}},)"
                     R"("serverInfo":{{"name":"corral","version":{}}},"instructions":{})",
                     json_string(chosen), json_string(options_.version), json_string(kInstructions)));
}

void Server::discover(const Message& m, const Era& era) {
  std::string versions = json_string(kModernVersion);
  for (std::string_view v : kLegacyVersions) versions += "," + json_string(v);
  answer(m.id, era,
         fmt::format(R"("supportedVersions":[{}],"capabilities":{{"tools":{{"listChanged":false}}}},"instructions":{},{})",
                     versions, json_string(kInstructions), kCacheFields));
}

void Server::list_tools(const Message& m, const Era& era) {
  std::string list;
  for (const Tool& t : tools()) {
    if (!list.empty()) list += ",";
    list += fmt::format(R"({{"name":{},"description":{},"inputSchema":{},"outputSchema":{}}})", json_string(t.name),
                        json_string(t.description), json::dump(json::parse(t.input_schema, "an input schema")),
                        json::dump(json::parse(t.output_schema, "an output schema")));
  }
  answer(m.id, era, fmt::format(R"("tools":[{}]{})", list, era.modern ? std::string(",") + kCacheFields : ""));
}

void Server::call_tool(Message m, const Era& era) {
  const json::Value* name = m.params ? json::find(*m.params, "name") : nullptr;
  if (!name || !name->IsString())
    return fail(m.id, {RpcCode::invalid_params, "tools/call needs params.name, the name of a tool", ""});
  const Tool* tool = find_tool(name->GetString());
  if (!tool)
    return fail(m.id, {RpcCode::invalid_params,
                       fmt::format("unknown tool '{}'; tools/list lists them", printable(std::string_view(name->GetString()).substr(0, 100))), ""});
  auto call = std::make_shared<Call>();
  call->id = m.id;
  call->era = era;
  call->tool = tool;
  call->arguments = json::find(*m.params, "arguments");
  if (const json::Value* meta = json::find(*m.params, "_meta"))
    if (const json::Value* token = json::find(*meta, "progressToken"); token && (token->IsString() || token->IsInt64()))
      call->progress_token = json::dump(*token);
  call->message = std::move(m);
  CallUi::ProgressFn progress;
  if (!call->progress_token.empty()) {
    Call* c = call.get();
    progress = [this, c](std::string_view stream, std::string_view chunk) {
      std::lock_guard lock(c->progress_mutex);
      const std::uint64_t limit = options_.limits.max_output;
      if (c->streamed >= limit) return;
      chunk = chunk.substr(0, std::min<std::uint64_t>({chunk.size(), kProgressPiece, limit - c->streamed}));
      c->streamed += chunk.size();
      const std::string text = json::is_valid_utf8(chunk) ? std::string(chunk)
                                                           : fmt::format("[{} bytes of binary output]", chunk.size());
      send(notification_line("notifications/progress",
                             fmt::format(R"({{"progressToken":{},"progress":{},"message":{}}})", c->progress_token,
                                         c->streamed, json_string(fmt::format("{}: {}", stream, text)))));
    };
  }
  call->ui = std::make_unique<CallUi>(options_.limits.max_output, stopping_, std::move(progress));
  {
    std::lock_guard lock(calls_mutex_);
    if (calls_.count(call->id))
      return fail(call->id, {RpcCode::invalid_request, "a request with this id is still in progress", ""});
    if (static_cast<int>(calls_.size()) >= options_.max_calls)
      return answer(call->id, era,
                    tool_error(fmt::format("{} tool calls are already running", calls_.size()),
                               "wait for one to finish, then call again"));
    calls_[call->id] = call;
    threads_.emplace_back(call, std::thread([this, call] { run_call(call); }));
  }
}

void Server::cancel(const Message& m) {
  const json::Value* id = m.params ? json::find(*m.params, "requestId") : nullptr;
  if (!id || !(id->IsString() || id->IsInt64())) return;
  std::lock_guard lock(calls_mutex_);
  auto it = calls_.find(json::dump(*id));
  if (it == calls_.end()) return;  // answered already, or never asked: nothing to stop
  it->second->cancelled_by_client = true;
  it->second->ui->cancel();
}

void Server::run_call(const std::shared_ptr<Call>& call) {
  ToolContext ctx{session_, options_.limits, options_.provider_flags, book_, *call->ui};
  // Each tool call is a trace of its own, named after the tool, when the environment asks.
  std::unique_ptr<telemetry::TracedOperation> trace = telemetry::TracedOperation::start(
      std::string(call->tool->name), process_env, options_.version, [this](const std::string& w) { log("warning: " + w); });
  if (trace) call->ui->set_tracer(&trace->phases());
  std::string fields;
  bool failed = false;
  try {
    fields = tool_result(call->tool->call(ctx, call->arguments));
  } catch (const Error& e) {
    failed = true;
    if (trace) trace->fail(e.what());
    fields = tool_error(e.what(), e.hint());
  } catch (const std::exception& e) {
    failed = true;
    if (trace) trace->fail(e.what());
    fields = tool_error(fmt::format("corral failed: {}", e.what()), "");
  }
  {
    std::lock_guard lock(calls_mutex_);
    calls_.erase(call->id);
  }
  // A request the client cancelled gets no answer (the cancellation pages of both eras).
  if (!call->cancelled_by_client) answer(call->id, call->era, fields);
  if (trace) {  // sent after the answer: the agent never waits for the collector
    call->ui->set_tracer(nullptr);
    trace->finish(failed ? 1 : 0);
  }
  call->done = true;
}

void Server::reap_calls(bool all) {
  std::list<std::pair<std::shared_ptr<Call>, std::thread>> ended;
  {
    std::lock_guard lock(calls_mutex_);
    for (auto it = threads_.begin(); it != threads_.end();) {
      auto next = std::next(it);
      if (all || it->first->done) ended.splice(ended.end(), threads_, it);
      it = next;
    }
  }
  for (auto& [call, thread] : ended) thread.join();
}

void Server::expire_loop() {
  LogUi ui([this](const std::string& m) { log(m); });
  std::unique_lock lock(expire_mutex_);
  while (!stopping_) {
    expire_wake_.wait_for(lock, std::chrono::seconds(1));
    if (stopping_) break;
    for (const Book::Entry& e : book_.expired(Book::Clock::now())) {
      lock.unlock();
      try {
        service::stop(session_, ui, {.lease = e.lease_id});
        log(fmt::format("stopped {}: its lifetime ran out", e.slug));
      } catch (const Error& error) {
        log(fmt::format("could not stop {} at the end of its lifetime: {}", e.slug, error.what()));
      }
      book_.forget(e.lease_id);
      lock.lock();
    }
  }
}

bool Server::stop_made() {
  LogUi ui([this](const std::string& m) { log(m); });
  bool ok = true;
  for (const Book::Entry& e : book_.entries()) {
    if (e.adopted) continue;
    if (e.kept) {
      log(fmt::format("kept {}; stop it with `corral stop --id {}`", e.slug, e.slug));
      continue;
    }
    try {
      service::stop(session_, ui, {.lease = e.lease_id});
      log(fmt::format("stopped {}", e.slug));
    } catch (const Error& error) {
      ok = false;
      log(fmt::format("could not stop {}: {} (`corral stop --id {}` tries again)", e.slug, error.what(), e.slug));
    }
    book_.forget(e.lease_id);
  }
  return ok;
}

}  // namespace corral::mcp
