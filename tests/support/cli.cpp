#include "cli.hpp"

#include <stdlib.h>
#include <fcntl.h>
#include <signal.h>
#include <poll.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <doctest/doctest.h>

#include "corral/json.hpp"
#include "corral/os/process.hpp"
#include "corral/os/unique_fd.hpp"

namespace fs = std::filesystem;

namespace corral::test {

TempDir::TempDir() {
  std::string base = (fs::temp_directory_path() / "corral-test-XXXXXX").string();
  if (!mkdtemp(base.data())) throw std::runtime_error("mkdtemp failed");
  path_ = base;
}

TempDir::~TempDir() {
  std::error_code ec;
  // Sandboxes may leave read-only folders behind; make them removable first.
  for (auto it = fs::recursive_directory_iterator(path_, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_directory(ec)) fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(path_, ec);
}

fs::path TempDir::write(const std::string& relative, const std::string& content) const {
  fs::path p = path_ / relative;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
  return p;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool eventually(const std::function<bool()>& done) {
  for (int i = 0; i < 300; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

std::string random_bytes(std::size_t bytes) {
  std::string out(bytes, '\0');
  std::ifstream("/dev/urandom", std::ios::binary).read(out.data(), static_cast<std::streamsize>(bytes));
  return out;
}

std::string corral_binary() {
  // Another build's corral (CORRAL_TEST_CORRAL=/old/build/bin/corral), to see a new test
  // fail against the code before a fix.
  const char* other = std::getenv("CORRAL_TEST_CORRAL");
  return other && *other ? other : CORRAL_TEST_BINARY;
}

namespace {

// True when /proc/PID/stat says the process is a zombie, or it is gone.
bool dead(const std::string& pid) {
  std::string stat = read_file("/proc/" + pid + "/stat");
  return stat.empty() || stat.find(") Z") != std::string::npos;
}

}  // namespace

bool process_alive(int pid) { return !dead(std::to_string(pid)); }

bool gone_within(int pid, std::chrono::milliseconds wait) {
  for (auto until = std::chrono::steady_clock::now() + wait; std::chrono::steady_clock::now() < until;) {
    if (dead(std::to_string(pid))) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::vector<int> processes_running(const std::vector<std::string>& argv) {
  std::string wanted;
  for (const std::string& a : argv) wanted += a + '\0';
  std::vector<int> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (read_file(e.path() / "cmdline") == wanted && !dead(pid)) out.push_back(std::stoi(pid));
  }
  return out;
}

std::vector<int> children_named(int parent, const std::string& name) {
  std::vector<int> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos || dead(pid)) continue;
    const std::string stat = read_file(e.path() / "stat");
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state = 0;
    int ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent && read_file(e.path() / "cmdline").find(name) != std::string::npos) out.push_back(std::stoi(pid));
  }
  return out;
}

CliEnv::CliEnv() {
  for (const char* d : {"work", "state", "config", "etc", "home"}) fs::create_directories(root_.path() / d);
  env["HOME"] = (root_.path() / "home").string();
  env["XDG_STATE_HOME"] = state_dir().string();
  env["XDG_CONFIG_HOME"] = config_dir().string();
  env["CORRAL_ETC_DIR"] = (root_.path() / "etc").string();
  env["NO_COLOR"] = "1";
}

std::vector<std::string> CliEnv::environment() const {
  std::map<std::string, std::string> merged;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    std::string name = kv.substr(0, eq);
    // Keep the caller's PATH and locale, and in a sanitized build how the runtime reports
    // (suppressions, halt on error); drop anything that would leak into the test.
    if (name == "PATH" || name == "LANG" || name == "TMPDIR" || name == "ASAN_OPTIONS" || name == "UBSAN_OPTIONS" ||
        name == "LSAN_OPTIONS")
      merged[name] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : env) merged[k] = v;
  std::vector<std::string> envp;
  for (const auto& [k, v] : merged) envp.push_back(k + "=" + v);
  return envp;
}

CliResult CliEnv::run(const std::vector<std::string>& args, const std::string& cwd) const {
  os::ProcessSpec spec;
  spec.argv = {corral_binary()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = environment();
  spec.cwd = cwd.empty() ? workspace().string() : cwd;
  os::CapturedProcess p = os::capture_process(spec, 300);
  return {p.exit_code, p.out, p.err};
}

CliResult CliEnv::run_with_input(const std::vector<std::string>& args, const std::string& input) const {
  os::ProcessSpec spec;
  spec.argv = {corral_binary()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = environment();
  spec.cwd = workspace().string();
  ::signal(SIGPIPE, SIG_IGN);  // a corral that stops reading must fail the write, not end the test
  os::Pipe pipe;
  spec.stdin_fd = pipe.read.get();
  // A writer of its own, as a shell pipeline has: the input may be larger than the pipe.
  std::thread writer([&pipe, &input] {
    std::string_view rest = input;
    while (!rest.empty()) {
      const ssize_t n = ::write(pipe.write.get(), rest.data(), rest.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // corral closed it
      rest.remove_prefix(static_cast<size_t>(n));
    }
    pipe.write.reset();
  });
  os::CapturedProcess p;
  try {
    p = os::capture_process(spec, 300);
  } catch (...) {
    pipe.read.reset();
    writer.join();
    throw;
  }
  pipe.read.reset();
  writer.join();
  return {p.exit_code, p.out, p.err};
}

CliResult CliEnv::run_on_terminal(const std::vector<std::string>& args, unsigned short columns) const {
  return run_on_terminal(args, columns, {});
}

CliResult CliEnv::run_on_terminal(const std::vector<std::string>& args, unsigned short columns,
                                  const std::vector<TerminalStep>& steps, TerminalModes* modes) const {
  std::vector<std::string> argv = {corral_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> envp = environment();
  const std::string dir = workspace().string();
  std::vector<char*> a, e;  // built before fork: the child may not allocate
  for (auto& s : argv) a.push_back(s.data());
  a.push_back(nullptr);
  for (auto& s : envp) e.push_back(s.data());
  e.push_back(nullptr);
  winsize size{};
  size.ws_row = 24;
  size.ws_col = columns;
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, &size);
  if (pid < 0) return {};
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(127);
    ::execve(a[0], a.data(), e.data());
    ::_exit(127);
  }
  CliResult r;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  char buffer[4096];
  termios before{};
  ::tcgetattr(master, &before);
  size_t step = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 200) > 0) {
      const ssize_t n = ::read(master, buffer, sizeof buffer);
      if (n <= 0) break;  // EIO once the child and every holder of the terminal are gone
      r.out.append(buffer, static_cast<size_t>(n));
    }
    // Each step's keys are typed once the screen shows what it waits for.
    while (step < steps.size() && r.out.find(steps[step].wait_for) != std::string::npos) {
      const TerminalStep& s = steps[step++];
      if (s.rows) {
        winsize resized{};
        resized.ws_row = s.rows;
        resized.ws_col = s.cols;
        ::ioctl(master, TIOCSWINSZ, &resized);
        ::kill(pid, SIGWINCH);
      }
      if (!s.keys.empty() && ::write(master, s.keys.data(), s.keys.size()) < 0) break;
    }
  }
  if (modes) {
    termios after{};
    ::tcgetattr(master, &after);
    modes->before_canonical = (before.c_lflag & ICANON) != 0;
    modes->before_echo = (before.c_lflag & ECHO) != 0;
    modes->after_canonical = (after.c_lflag & ICANON) != 0;
    modes->after_echo = (after.c_lflag & ECHO) != 0;
  }
  ::close(master);
  int status = 0;
  if (std::chrono::steady_clock::now() >= deadline) ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

Background CliEnv::start(const std::vector<std::string>& args, const std::string& cwd,
                         const std::string& stdin_path) const {
  static int counter = 0;
  Background b;
  b.out = root_.path() / ("bg" + std::to_string(counter) + ".out");
  b.err = root_.path() / ("bg" + std::to_string(counter++) + ".err");
  std::vector<std::string> argv = {corral_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> envp = environment();
  std::string dir = cwd.empty() ? workspace().string() : cwd;
  // Built before fork: the stand-ins' threads run in this process, so the child may only
  // make async-signal-safe calls (no malloc) until it execs.
  std::vector<char*> a, e;
  for (auto& s : argv) a.push_back(s.data());
  a.push_back(nullptr);
  for (auto& s : envp) e.push_back(s.data());
  e.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    int out = ::open(b.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int err = ::open(b.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int in = ::open(stdin_path.c_str(), O_RDONLY);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    if (::chdir(dir.c_str()) != 0) ::_exit(127);
    ::execve(a[0], a.data(), e.data());
    ::_exit(127);
  }
  b.pid = pid;
  return b;
}

int Background::wait(std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) != pid) {
    if (std::chrono::steady_clock::now() > until) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      FAIL("corral did not end within " << limit.count() << " s; killed");
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

void CliEnv::add_registry(const std::string& name, const std::vector<std::string>& libraries) const {
  // CORRAL_TEST_ISOLATION=process runs a whole suite's plugins in corral's helper process.
  const char* isolation = std::getenv("CORRAL_TEST_ISOLATION");
  if (isolation && *isolation) add_registry(name, libraries, {{"isolation", isolation}});
  else add_registry(name, libraries, {});
}

void CliEnv::add_registry(const std::string& name, const std::vector<std::string>& libraries,
                          const std::map<std::string, std::string>& keys) const {
  std::string text = "plugins:\n";
  for (const auto& l : libraries) {
    text += "  - path: " + l + "\n";
    for (const auto& [key, value] : keys) text += "    " + key + ": " + value + "\n";
  }
  root_.write("config/corral/providers.d/" + name + ".yaml", text);
}

std::vector<fs::path> CliEnv::local_sandboxes() const {
  std::vector<fs::path> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(state_dir() / "corral" / "local", ec)) out.push_back(e.path());
  return out;
}

std::vector<fs::path> CliEnv::staged_archives() const {
  std::vector<fs::path> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(state_dir() / "corral" / "tmp", ec))
    if (e.path().filename().string().rfind("workspace-", 0) == 0) out.push_back(e.path());
  return out;
}

std::vector<std::string> CliEnv::lease_states() const {
  CliResult r = run({"list", "--json"});
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> out;
  json::Document doc = json::parse(r.out, "list");
  for (const auto& l : doc.GetArray()) out.push_back(json::get_string(l, "state"));
  return out;
}

// True while a `corral pool fill` (a run's refill, say) runs in folder `cwd`.
static bool fill_running_in(const fs::path& cwd) {
  std::error_code ec;
  for (auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos || dead(pid)) continue;
    if (read_file(e.path() / "cmdline").find(std::string("\0pool\0fill\0", 11)) == std::string::npos) continue;
    std::error_code cwd_ec;
    if (fs::read_symlink(e.path() / "cwd", cwd_ec) == cwd) return true;
  }
  return false;
}

bool CliEnv::pool_settles_at(int ready) const {
  return eventually([&] {
    // Every refill done, those that found the pool full and made nothing included: one
    // still waiting for the pool's lock would fill it again after a drain.
    if (fill_running_in(fs::weakly_canonical(workspace()))) return false;
    CliResult r = run({"pool", "status", "--json"});
    if (r.exit_code != 0) return false;
    json::Document doc = json::parse(r.out, "pool status");
    if (doc.GetArray().Empty()) return ready == 0;
    const auto& p = doc.GetArray()[0];
    return doc.GetArray().Size() == 1 && json::get_int(p, "ready") == ready && json::get_int(p, "busy") == 0;
  });
}

std::set<std::string> CliEnv::pooled_sandboxes() const {
  std::set<std::string> out;
  for (const fs::path& c : claims()) {
    json::Document doc = json::parse(read_file(c), c.string());
    if (doc.HasMember("pool")) out.insert(json::get_string(doc, "sandboxId"));
  }
  return out;
}

std::vector<fs::path> CliEnv::claims() const {
  std::vector<fs::path> out;
  fs::path dir = state_dir() / "corral" / "leases";
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") out.push_back(e.path());
  return out;
}

std::string CliEnv::only_lease() const {
  const std::vector<fs::path> all = claims();
  REQUIRE(all.size() == 1);
  return all.front().stem().string();
}

}  // namespace corral::test
