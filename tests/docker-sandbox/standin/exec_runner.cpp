#include "exec_runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <thread>

#include "exec_terminal.hpp"
#include "faults.hpp"

namespace sbx_standin {
namespace {

std::string ltrim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b);
}

// Adds one "NAME=value" or "NAME" (taken from the client's environment) entry, the way
// docker's env-file and -e do; returns an error text or "".
std::string add_entry(std::map<std::string, std::string>& env, const std::string& entry) {
  size_t eq = entry.find('=');
  std::string name = entry.substr(0, eq);
  if (name.empty()) return "invalid environment variable: " + entry;
  if (name.find_first_of(" \t") != std::string::npos) return "variable '" + name + "' contains whitespaces";
  if (eq != std::string::npos) env[name] = entry.substr(eq + 1);
  else if (const char* v = std::getenv(name.c_str())) env[name] = v;
  return {};
}

// Reads a docker env file into `env`; logs its path and mode for the tests.
std::string read_env_file(const State& state, const std::string& path, std::map<std::string, std::string>& env) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "open " + path + ": no such file or directory";
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
  state.log("envfiles.log", path + " " + mode);
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    line = ltrim(line);
    if (line.empty() || line[0] == '#') continue;
    if (std::string err = add_entry(env, line); !err.empty()) return err;
  }
  return {};
}

// Copies whatever `fd` has beyond `offset` to `out_fd`.
void relay(int fd, off_t& offset, int out_fd) {
  char buf[65536];
  while (true) {
    ssize_t n = ::pread(fd, buf, sizeof buf, offset);
    if (n <= 0) return;
    offset += n;
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::write(out_fd, buf + done, static_cast<size_t>(n - done));
      if (w <= 0) return;
      done += w;
    }
  }
}

}  // namespace

void feed_stdin(int fd) {
  char buf[65536];
  for (ssize_t n; (n = ::read(0, buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    ssize_t done = 0;
    while (done < n) {
      ssize_t w = ::write(fd, buf + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) break;
      done += w;
    }
    if (done < n) break;  // EPIPE: the command closed its stdin
  }
  ::close(fd);
}

int run_exec(const State& state, const Record& record, const ExecRequest& request) {
  std::map<std::string, std::string> env{
      {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
      {"HOME", state.dir() + "/home"},
      {"HOSTNAME", record.name},
  };
  for (const std::string& f : request.env_files)
    if (std::string err = read_env_file(state, f, env); !err.empty()) {
      std::cerr << "ERROR: " << err << "\n";
      return 125;
    }
  for (const std::string& e : request.env)
    if (std::string err = add_entry(env, e); !err.empty()) {
      std::cerr << "ERROR: " << err << "\n";
      return 125;
    }
  std::string workdir = request.workdir.empty() ? record.workspaces.at(0) : request.workdir;
  std::vector<std::string> envp;
  for (const auto& [k, v] : env) envp.push_back(k + "=" + v);

  std::string base = state.dir() + "/sandboxes/" + record.name + ".exec-" + std::to_string(::getpid());
  std::string out_path = base + ".out", err_path = base + ".err";
  int out_fd = ::open(out_path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  int err_fd = ::open(err_path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  int ready[2];
  int input[2] = {-1, -1};  // -i: the command's stdin
  ExecTerminal terminal;    // -t
  // `go` holds the child back until its pid is registered, so `sbx stop` can always find
  // and kill a command that has started (as stopping a real sandbox's VM would).
  int go[2];
  if (out_fd < 0 || err_fd < 0 || ::pipe2(ready, O_CLOEXEC) != 0 || ::pipe2(go, O_CLOEXEC) != 0 ||
      (request.interactive && !request.tty && ::pipe2(input, O_CLOEXEC) != 0) ||
      (request.tty && !open_exec_terminal(terminal))) {
    std::cerr << "ERROR: stand-in cannot set up exec: " << std::strerror(errno) << "\n";
    return 125;
  }

  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(go[1]);
    char released = 0;
    while (::read(go[0], &released, 1) < 0 && errno == EINTR) {
    }
    for (int s = 1; s < NSIG; ++s) ::signal(s, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (request.tty) {
      attach_exec_terminal(terminal.command_end);
    } else {
      ::setsid();
      ::dup2(out_fd, 1);
      ::dup2(err_fd, 2);
      ::dup2(request.interactive ? input[0] : ::open("/dev/null", O_RDONLY), 0);
    }
    // Runtime errors go back through `ready` so the client can report them like docker.
    auto fail = [&](int code, const std::string& msg) {
      std::string line = std::to_string(code) + " " + msg;
      if (::write(ready[1], line.data(), line.size()) < 0) _exit(code);
      _exit(code);
    };
    if (::chdir(workdir.c_str()) != 0)
      fail(126, "OCI runtime exec failed: chdir to cwd (\"" + workdir + "\") set in config.json failed: " +
                    std::strerror(errno));
    std::vector<char*> argv, envv;
    for (const auto& a : request.command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (const auto& e : envp) envv.push_back(const_cast<char*>(e.c_str()));
    envv.push_back(nullptr);
    ::setenv("PATH", env["PATH"].c_str(), 1);  // execvpe searches the caller's PATH
    ::execvpe(argv[0], argv.data(), envv.data());
    fail(127, "OCI runtime exec failed: exec: \"" + request.command[0] + "\": executable file not found in $PATH");
  }
  ::close(ready[1]);
  ::close(go[0]);
  if (request.interactive && !request.tty) {
    ::close(input[0]);
    ::signal(SIGPIPE, SIG_IGN);  // a command that stops reading fails the copy, not the client
    std::thread(feed_stdin, input[1]).detach();
  }
  state.add_pid(record.name, pid);
  ::close(go[1]);  // registered: let it run
  std::string runtime_error;
  char buf[512];
  for (ssize_t n; (n = ::read(ready[0], buf, sizeof buf)) > 0;) runtime_error.append(buf, static_cast<size_t>(n));
  ::close(ready[0]);

  if (request.detach && runtime_error.empty()) return 0;  // the command keeps running

  off_t out_off = 0, err_off = 0;
  int status = 0;
  if (request.tty) {
    ::close(terminal.command_end);
    status = relay_exec_terminal(terminal.corral_end, pid, request.interactive);
  }
  while (!request.tty) {
    pid_t w = ::waitpid(pid, &status, WNOHANG);
    relay(out_fd, out_off, 1);
    relay(err_fd, err_off, 2);
    if (w == pid || (w < 0 && errno != EINTR)) break;
    if (out_off > 0 && exec_dies()) {
      // The client loses the sandbox mid-stream; the command runs on, as in a real VM.
      std::cerr << "ERROR: error reading from the sandbox: read: connection reset by peer\n";
      return 1;
    }
    ::usleep(10'000);
  }
  state.remove_pid(record.name, pid);
  ::unlink(out_path.c_str());
  ::unlink(err_path.c_str());
  if (!runtime_error.empty()) {
    size_t sp = runtime_error.find(' ');
    std::cerr << "ERROR: " << runtime_error.substr(sp + 1) << "\n";
    return std::atoi(runtime_error.c_str());
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace sbx_standin
