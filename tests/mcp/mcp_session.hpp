// Test support for `corral mcp`: the built binary spawned as an MCP client spawns it,
// spoken to in raw JSON-RPC lines on its stdin and stdout, and helpers to read answers.
#pragma once

#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli.hpp"
#include "corral/json.hpp"

namespace corral::test::mcp {

namespace fs = std::filesystem;
namespace json = corral::json;
using namespace std::chrono_literals;

inline constexpr const char* kInitialize =
    R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},)"
    R"("clientInfo":{"name":"server_test","version":"1"}}})";
inline constexpr const char* kModernMeta =
    R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}})";

// `corral mcp FLAGS...` run in env's workspace with pipes for stdin and stdout, its stderr
// to a file. Ended at scope end: stdin closed, then killed if it does not end soon.
class McpServer {
 public:
  McpServer(const CliEnv& env, const std::vector<std::string>& flags) : err_(env.root().path() / "mcp.err") {
    int in[2], out[2];
    REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    std::vector<std::string> argv = {corral::test::corral_binary(), "mcp"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    std::vector<std::string> envp = env.environment();
    const std::string dir = env.workspace().string();
    std::vector<char*> a, e;
    for (auto& s : argv) a.push_back(s.data());
    a.push_back(nullptr);
    for (auto& s : envp) e.push_back(s.data());
    e.push_back(nullptr);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      const int err = ::open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::dup2(err, 2);
      if (::chdir(dir.c_str()) != 0) ::_exit(127);
      ::execve(a[0], a.data(), e.data());
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    in_ = in[1];
    out_ = out[0];
  }

  ~McpServer() {
    close_stdin();
    if (!exited_) {
      const auto until = std::chrono::steady_clock::now() + 30s;
      int status = 0;
      while (::waitpid(pid_, &status, WNOHANG) != pid_) {
        if (std::chrono::steady_clock::now() > until) {
          ::kill(pid_, SIGKILL);
          ::waitpid(pid_, &status, 0);
          break;
        }
        std::this_thread::sleep_for(20ms);
      }
    }
    ::close(out_);
  }

  int pid() const { return pid_; }

  void send(const std::string& line) { write_raw(line + "\n"); }
  void write_raw(const std::string& bytes) {
    std::size_t at = 0;
    while (at < bytes.size()) {
      const ssize_t n = ::write(in_, bytes.data() + at, bytes.size() - at);
      REQUIRE(n > 0);
      at += static_cast<std::size_t>(n);
    }
  }
  void close_stdin() {
    if (in_ >= 0) ::close(in_);
    in_ = -1;
  }

  // The next line the server writes, or nullopt when none comes within `wait` (or stdout closed).
  std::optional<std::string> next_line(std::chrono::milliseconds wait = 20s) {
    const auto until = std::chrono::steady_clock::now() + wait;
    for (;;) {
      if (const std::size_t nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd p{out_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
      char chunk[65536];
      const ssize_t n = ::read(out_, chunk, sizeof chunk);
      if (n <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  // The next message, parsed; fails the test when none comes.
  json::Document next(std::chrono::milliseconds wait = 20s) {
    std::optional<std::string> line = next_line(wait);
    REQUIRE_MESSAGE(line.has_value(), "no message from corral mcp; its stderr: " << stderr_text());
    return json::parse(*line, "a message from corral mcp");
  }

  // The answer to request `id` (JSON text), the notifications before it kept in `notes`.
  json::Document answer(const std::string& id, std::vector<std::string>* notes = nullptr) {
    for (;;) {
      json::Document m = next();
      const json::Value* got = json::find(m, "id");
      if (got && json::dump(*got) == id) return m;
      REQUIRE_MESSAGE(!got, "an answer to another request: " << json::dump(m));
      if (notes) notes->push_back(json::dump(m));
    }
  }

  // Sends a request and returns its answer.
  json::Document request(const std::string& id, const std::string& method, const std::string& params = "") {
    send(R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":")" + method + "\"" +
         (params.empty() ? "" : ",\"params\":" + params) + "}");
    return answer(id);
  }

  // Calls `tool` with `arguments` (JSON text) in the legacy era and returns its result.
  json::Document call(int id, const std::string& tool, const std::string& arguments = "{}") {
    json::Document m = request(std::to_string(id), "tools/call", R"({"name":")" + tool + R"(","arguments":)" + arguments + "}");
    REQUIRE_MESSAGE(m.HasMember("result"), json::dump(m));
    return m;
  }

  void initialize() {
    send(kInitialize);
    json::Document m = answer("0");
    REQUIRE(m.HasMember("result"));
    send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  }

  // Waits (bounded) for the server to end; its exit code.
  int wait(std::chrono::seconds limit = 60s) {
    const auto until = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) != pid_) {
      if (std::chrono::steady_clock::now() > until) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        exited_ = true;
        FAIL("corral mcp did not end within " << limit.count() << " s");
        return -1;
      }
      std::this_thread::sleep_for(20ms);
    }
    exited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  std::string stderr_text() const { return corral::test::read_file(err_); }

 private:
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  bool exited_ = false;
  std::string buffer_;
  fs::path err_;
};

inline const json::Value& result_of(const json::Document& m) {
  REQUIRE_MESSAGE(m.HasMember("result"), json::dump(m));
  return m["result"];
}

// A tool result's structuredContent; fails on a tool error.
inline const json::Value& structured(const json::Document& m) {
  const json::Value& r = result_of(m);
  REQUIRE_MESSAGE(!json::get_bool(r, "isError"), json::dump(m));
  REQUIRE(r.HasMember("structuredContent"));
  // The text content is the same result, for clients that show only text.
  REQUIRE(r["content"].IsArray());
  CHECK(json::dump(json::parse(json::get_string(r["content"][0], "text"), "content text")) ==
        json::dump(r["structuredContent"]));
  return r["structuredContent"];
}

// A tool error's text; fails unless the result is one.
inline std::string tool_error(const json::Document& m) {
  const json::Value& r = result_of(m);
  REQUIRE_MESSAGE(json::get_bool(r, "isError"), json::dump(m));
  return json::get_string(r["content"][0], "text");
}

inline int error_code(const json::Document& m) {
  REQUIRE_MESSAGE(m.HasMember("error"), json::dump(m));
  return static_cast<int>(json::get_int(m["error"], "code"));
}

inline std::string lease_of(const json::Document& started) { return json::get_string(structured(started), "lease"); }

// A workspace with a file, the folder every sandbox is made of.
inline void fill_workspace(const CliEnv& env) {
  env.root().write("work/hello.txt", "hello from the served folder\n");
  env.root().write("work/sub/inner.txt", "inner\n");
}


}  // namespace corral::test::mcp
