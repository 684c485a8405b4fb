#include "state.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "corral/json.hpp"

namespace fs = std::filesystem;

namespace sbx_standin {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The processes descended from `root`, found by their parents in /proc.
std::vector<int> descendants(int root) {
  std::vector<std::pair<int, int>> parent_of;  // pid, ppid
  for (const auto& entry : fs::directory_iterator("/proc", fs::directory_options::skip_permission_denied)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'.
    const std::string stat = slurp(entry.path().string() + "/stat");
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    int ppid = 0;
    if (rest >> state >> ppid) parent_of.emplace_back(std::atoi(name.c_str()), ppid);
  }
  std::vector<int> found{root};
  for (size_t i = 0; i < found.size(); ++i)
    for (const auto& [pid, ppid] : parent_of)
      if (ppid == found[i]) found.push_back(pid);
  found.erase(found.begin());
  return found;
}

// Runs `fn` on the lines of `path` under an exclusive lock and writes back what it returns.
template <class Fn>
void edit_locked(const std::string& path, Fn fn) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;
  ::flock(fd, LOCK_EX);
  std::vector<std::string> lines;
  std::istringstream in(slurp(path));
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) lines.push_back(l);
  std::string out;
  for (const std::string& l : fn(lines)) out += l + "\n";
  if (::ftruncate(fd, 0) == 0 && ::pwrite(fd, out.data(), out.size(), 0) < 0) std::perror("pwrite");
  ::close(fd);  // releases the lock
}

}  // namespace

State State::from_env() {
  const char* dir = std::getenv("SBX_STANDIN_STATE");
  if (!dir || !*dir) {
    std::cerr << "sbx stand-in: set SBX_STANDIN_STATE to a state folder\n";
    std::exit(2);
  }
  return State(dir);
}

State::State(std::string dir) : dir_(std::move(dir)) { fs::create_directories(fs::path(dir_) / "sandboxes"); }

std::string State::record_path(const std::string& name) const { return dir_ + "/sandboxes/" + name + ".json"; }
std::string State::pids_path(const std::string& name) const { return dir_ + "/sandboxes/" + name + ".pids"; }

std::optional<Record> State::load(const std::string& name) const {
  if (name.empty() || name.find('/') != std::string::npos || !fs::exists(record_path(name))) return std::nullopt;
  auto doc = corral::json::parse(slurp(record_path(name)), "stand-in record");
  Record r;
  r.name = corral::json::get_string(doc, "name");
  r.agent = corral::json::get_string(doc, "agent", "shell");
  r.status = corral::json::get_string(doc, "status", "running");
  r.workspaces = corral::json::get_strings(doc, "workspaces");
  r.template_image = corral::json::get_string(doc, "template");
  r.cpus = static_cast<int>(corral::json::get_int(doc, "cpus"));
  r.memory = corral::json::get_string(doc, "memory");
  return r;
}

void State::save(const Record& r) const {
  rapidjson::StringBuffer buffer;
  corral::json::Writer w(buffer);
  w.StartObject();
  corral::json::write_string(w, "name", r.name);
  corral::json::write_string(w, "agent", r.agent);
  corral::json::write_string(w, "status", r.status);
  corral::json::write_strings(w, "workspaces", r.workspaces);
  corral::json::write_string(w, "template", r.template_image);
  w.Key("cpus");
  w.Int(r.cpus);
  corral::json::write_string(w, "memory", r.memory);
  w.EndObject();
  std::string tmp = record_path(r.name) + ".tmp";
  std::ofstream(tmp) << buffer.GetString();
  fs::rename(tmp, record_path(r.name));
}

void State::remove(const std::string& name) const {
  std::error_code ec;
  fs::remove(record_path(name), ec);
  fs::remove(pids_path(name), ec);
}

std::vector<Record> State::all() const {
  std::vector<Record> out;
  for (auto& e : fs::directory_iterator(fs::path(dir_) / "sandboxes"))
    if (e.path().extension() == ".json")
      if (auto r = load(e.path().stem().string())) out.push_back(*r);
  std::sort(out.begin(), out.end(), [](const Record& a, const Record& b) { return a.name < b.name; });
  return out;
}

void State::add_pid(const std::string& name, int pid) const {
  edit_locked(pids_path(name), [&](std::vector<std::string> lines) {
    lines.push_back(std::to_string(pid));
    return lines;
  });
}

void State::remove_pid(const std::string& name, int pid) const {
  edit_locked(pids_path(name), [&](std::vector<std::string> lines) {
    lines.erase(std::remove(lines.begin(), lines.end(), std::to_string(pid)), lines.end());
    return lines;
  });
}

void State::kill_all(const std::string& name) const {
  edit_locked(pids_path(name), [&](const std::vector<std::string>& lines) {
    for (const std::string& l : lines) {
      int pid = std::atoi(l.c_str());
      if (pid <= 1) continue;
      ::kill(-pid, SIGSTOP);  // nothing it started can start more while the tree is read
      for (int descendant : descendants(pid)) {
        ::kill(-descendant, SIGKILL);
        ::kill(descendant, SIGKILL);
      }
      ::kill(-pid, SIGKILL);
    }
    return std::vector<std::string>{};
  });
}

void State::log(const std::string& log_name, const std::string& line) const {
  std::ofstream(fs::path(dir_) / log_name, std::ios::app) << line << "\n";
}

}  // namespace sbx_standin
