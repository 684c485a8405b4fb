#include "standin_fixture.hpp"

#include <chrono>
#include <thread>

#include <signal.h>

#include <algorithm>
#include <sstream>

#include "corral/json.hpp"
#include "corral/os/process.hpp"

namespace fs = std::filesystem;

namespace sbx_test {

std::string standin_path() { return SBX_STANDIN_PATH; }

StandIn::StandIn() = default;

StandIn::~StandIn() {
  for (int pid : hung_pids())
    if (process_alive(pid)) ::kill(pid, SIGKILL);
}

std::map<std::string, std::string> StandIn::env(const std::map<std::string, std::string>& extra) const {
  std::map<std::string, std::string> e{{"SBX_STANDIN_STATE", dir_.str()}};
  for (const auto& [k, v] : extra) e[k] = v;
  return e;
}

corral::test::CliResult StandIn::run(const std::vector<std::string>& args,
                                     const std::map<std::string, std::string>& extra) const {
  return run_with(args, extra, "/dev/null");
}

corral::test::CliResult StandIn::run_reading(const std::vector<std::string>& args, const std::string& stdin_path) const {
  return run_with(args, {}, stdin_path);
}

corral::test::CliResult StandIn::run_with(const std::vector<std::string>& args,
                                          const std::map<std::string, std::string>& extra,
                                          const std::string& stdin_path) const {
  corral::os::ProcessSpec spec;
  spec.stdin_path = stdin_path;
  spec.argv = {standin_path()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  std::vector<std::string> envp{"PATH=/usr/bin:/bin"};
  for (const auto& [k, v] : env(extra)) envp.push_back(k + "=" + v);
  spec.env = envp;
  auto r = corral::os::capture_process(spec, 60);
  return {r.exit_code, r.out, r.err};
}

std::vector<std::vector<std::string>> StandIn::calls() const {
  std::vector<std::vector<std::string>> out;
  std::istringstream in(corral::test::read_file(dir_.path() / "argv.log"));
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    auto doc = corral::json::parse(line, "argv log");
    std::vector<std::string> argv;
    for (auto& v : doc.GetArray()) argv.emplace_back(v.GetString());
    out.push_back(argv);
  }
  return out;
}

std::vector<std::vector<std::string>> StandIn::calls_of(const std::string& command) const {
  std::vector<std::vector<std::string>> out;
  for (auto& c : calls())
    if (c.size() > 1 && c[1] == command) out.push_back(c);
  return out;
}

std::vector<std::string> StandIn::env_files() const {
  std::vector<std::string> out;
  std::istringstream in(corral::test::read_file(dir_.path() / "envfiles.log"));
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

std::vector<std::string> StandIn::sandboxes() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dir_.path() / "sandboxes", ec))
    if (e.path().extension() == ".json") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string StandIn::status(const std::string& name) const {
  fs::path p = dir_.path() / "sandboxes" / (name + ".json");
  if (!fs::exists(p)) return "";
  return corral::json::get_string(corral::json::parse(corral::test::read_file(p), "record"), "status");
}

std::vector<int> StandIn::exec_pids(const std::string& name) const {
  std::vector<int> out;
  std::istringstream in(corral::test::read_file(dir_.path() / "sandboxes" / (name + ".pids")));
  for (int pid; in >> pid;) out.push_back(pid);
  return out;
}

std::vector<int> StandIn::hung_pids() const {
  std::vector<int> out;
  std::istringstream in(corral::test::read_file(hangs_log()));
  for (std::string command, pid; in >> command >> pid;) out.push_back(std::stoi(pid));
  return out;
}

bool argv_mentions(const std::vector<std::string>& argv, const std::string& needle) {
  for (const auto& a : argv)
    if (a.find(needle) != std::string::npos) return true;
  return false;
}

bool process_alive(int pid) {
  if (pid <= 1 || ::kill(pid, 0) != 0) return false;
  std::string stat = corral::test::read_file("/proc/" + std::to_string(pid) + "/stat");
  size_t close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] != 'Z';
}

bool process_ends(int pid) {
  for (int i = 0; i < 50; ++i) {
    if (!process_alive(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

}  // namespace sbx_test
