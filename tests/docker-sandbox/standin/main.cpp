// A stand-in for Docker's `sbx` CLI, for corral's tests. It accepts exactly the flags the
// reference in specs/docker-sbx/*.yaml documents (anything else is an error, as with the
// real tool), keeps sandboxes as records in $SBX_STANDIN_STATE, really runs `exec`
// commands, and logs every argv so tests can check what corral passed.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <regex>

#include "corral/json.hpp"
#include "exec_runner.hpp"
#include "faults.hpp"
#include "state.hpp"

namespace fs = std::filesystem;
using namespace sbx_standin;

namespace {

void log_argv(const State& state, int argc, char** argv) {
  rapidjson::StringBuffer buffer;
  corral::json::Writer w(buffer);
  w.StartArray();
  for (int i = 0; i < argc; ++i) w.String(argv[i]);
  w.EndArray();
  state.log("argv.log", buffer.GetString());
}

int not_found(const std::string& name) {
  std::cerr << "ERROR: sandbox \"" << name << "\" not found\n";
  return 1;
}

// Starts a stopped sandbox, as exec does; returns non-zero when the VM cannot start.
int ensure_running(const State& state, Record& r) {
  if (r.status == "running") return 0;
  if (no_virtualization()) return fail_no_virtualization();
  r.status = "running";
  state.save(r);
  return 0;
}

// `sbx exec`: parsed on its own because, like `docker exec`, flags end at SANDBOX and
// everything after it belongs to the command.
int exec_main(const State& state, int argc, char** argv) {
  CLI::App app{"Execute a command inside a sandbox", "sbx exec"};
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // pflag: last one wins
  ExecRequest req;
  bool debug = false, privileged = false;
  std::string detach_keys, user;
  app.add_flag("-D,--debug", debug, "Enable debug logging");
  app.add_flag("-d,--detach", req.detach, "Detached mode: run command in the background");
  app.add_option("--detach-keys", detach_keys, "Override the key sequence for detaching a container");
  app.add_option("-e,--env", req.env, "Set environment variables")->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--env-file", req.env_files, "Read in a file of environment variables")->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_flag("-i,--interactive", req.interactive, "Keep STDIN open even if not attached");
  app.add_flag("--privileged", privileged, "Give extended privileges to the command");
  app.add_flag("-t,--tty", req.tty, "Allocate a pseudo-TTY");
  app.add_option("-u,--user", user, "Username or UID (format: <name|uid>[:<group|gid>])");
  app.add_option("-w,--workdir", req.workdir, "Working directory inside the container");
  app.prefix_command();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  std::vector<std::string> rest = app.remaining();
  if (!rest.empty() && rest[0] == "--") rest.erase(rest.begin());
  else if (!rest.empty() && rest[0].size() > 1 && rest[0][0] == '-') {
    std::cerr << "ERROR: unknown flag: " << rest[0] << "\n";
    return 1;
  }
  if (rest.size() < 2) {
    std::cerr << "ERROR: \"sbx exec\" requires at least 2 arguments\nUsage: sbx exec [flags] SANDBOX COMMAND [ARG...]\n";
    return 1;
  }
  if (req.tty && !::isatty(0)) {
    std::cerr << "ERROR: the input device is not a TTY\n";
    return 1;
  }
  maybe_hang(state, "exec");
  if (not_logged_in()) return fail_not_logged_in();
  auto record = state.load(rest[0]);
  if (!record) return not_found(rest[0]);
  if (int rc = ensure_running(state, *record)) return rc;
  req.command.assign(rest.begin() + 1, rest.end());
  return run_exec(state, *record, req);
}

int do_create(const State& state, std::string name, const std::vector<std::string>& paths,
              const std::string& image, int cpus, const std::string& memory, bool quiet) {
  static const std::regex kName("[A-Za-z0-9.+-]+");
  static const std::regex kMemory("[0-9]+[bkmgBKMG]?");
  if (cpus < 0) {
    std::cerr << "ERROR: invalid --cpus value " << cpus << ": must be 0 or more\n";
    return 1;
  }
  if (!memory.empty() && !std::regex_match(memory, kMemory)) {
    std::cerr << "ERROR: invalid --memory value \"" << memory << "\"\n";
    return 1;
  }
  std::vector<std::string> workspaces;
  for (std::string p : paths) {
    std::string mode;
    if (p.size() > 3 && p.compare(p.size() - 3, 3, ":ro") == 0) {
      mode = ":ro";
      p.resize(p.size() - 3);
    }
    std::error_code ec;
    fs::path abs = fs::canonical(p, ec);
    if (ec || !fs::is_directory(abs)) {
      std::cerr << "ERROR: workspace path \"" << p << "\" does not exist or is not a directory\n";
      return 1;
    }
    workspaces.push_back(abs.string() + mode);
  }
  if (name.empty()) name = "shell-" + fs::path(workspaces[0]).filename().string();
  if (!std::regex_match(name, kName)) {
    std::cerr << "ERROR: invalid sandbox name \"" << name
              << "\": use letters, numbers, hyphens, periods, plus signs and minus signs only\n";
    return 1;
  }
  if (not_logged_in()) return fail_not_logged_in();
  if (state.load(name)) {
    std::cerr << "ERROR: a sandbox named \"" << name << "\" already exists\n";
    return 1;
  }
  if (no_virtualization()) return fail_no_virtualization();
  Record r;
  r.name = name;
  r.status = "creating";
  r.workspaces = workspaces;
  r.template_image = image;
  r.cpus = cpus;
  r.memory = memory;
  state.save(r);  // registered before the VM starts, so a create cut short leaves it behind
  maybe_hang(state, "create");
  if (create_fails_after_register()) {
    r.status = "stopped";
    state.save(r);
    return fail_start(name);
  }
  r.status = "running";
  state.save(r);
  if (!quiet) std::cout << "Created sandbox " << name << "\n";
  return 0;
}

void print_ls(const std::vector<Record>& records, bool as_json, bool quiet) {
  if (quiet) {
    for (const Record& r : records) std::cout << r.name << "\n";
    return;
  }
  if (!as_json) {
    std::cout << "SANDBOX\tAGENT\tSTATUS\tPORTS\tWORKSPACE\n";
    for (const Record& r : records)
      std::cout << r.name << "\t" << r.agent << "\t" << r.status << "\t\t" << r.workspaces.at(0) << "\n";
    return;
  }
  // Two plausible shapes, switchable, because the real schema is undocumented.
  const char* format = std::getenv("SBX_STANDIN_LS_FORMAT");
  bool array_form = format && std::string(format) == "array";
  rapidjson::StringBuffer buffer;
  corral::json::Writer w(buffer);
  if (!array_form) {
    w.StartObject();
    w.Key("sandboxes");
  }
  w.StartArray();
  for (const Record& r : records) {
    w.StartObject();
    if (array_form) {
      corral::json::write_string(w, "Name", r.name);
      corral::json::write_string(w, "Agent", r.agent);
      std::string status = r.status;
      status[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(status[0])));
      corral::json::write_string(w, "Status", status);
      corral::json::write_string(w, "Ports", "");
      corral::json::write_string(w, "Workspace", r.workspaces.at(0));
    } else {
      corral::json::write_string(w, "name", r.name);
      corral::json::write_string(w, "agent", r.agent);
      corral::json::write_string(w, "status", r.status);
      w.Key("ports");
      w.StartArray();
      w.EndArray();
      corral::json::write_strings(w, "workspaces", r.workspaces);
    }
    w.EndObject();
  }
  w.EndArray();
  if (!array_form) w.EndObject();
  std::cout << buffer.GetString() << "\n";
}

int do_rm(const State& state, const std::vector<std::string>& names, bool all, bool force) {
  if (names.empty() && !all) {
    std::cerr << "ERROR: specify at least one sandbox, or --all\n";
    return 1;
  }
  if (!force) {
    std::cerr << "ERROR: confirmation required but stdin is not a terminal; use --force to skip the prompt\n";
    return 1;
  }
  if (not_logged_in()) return fail_not_logged_in();
  if (rm_fails()) return fail_rm(names.empty() ? "--all" : names[0]);
  std::vector<std::string> targets = names;
  if (all)
    for (const Record& r : state.all()) targets.push_back(r.name);
  int rc = 0;
  for (const std::string& n : targets) {
    if (!state.load(n)) {
      rc = not_found(n);
      continue;
    }
    state.kill_all(n);
    state.remove(n);
    std::cout << n << "\n";
  }
  return rc;
}

int do_stop(const State& state, const std::vector<std::string>& names) {
  if (not_logged_in()) return fail_not_logged_in();
  int rc = 0;
  for (const std::string& n : names) {
    auto r = state.load(n);
    if (!r) {
      rc = not_found(n);
      continue;
    }
    state.kill_all(n);
    r->status = "stopped";
    state.save(*r);
    std::cout << n << "\n";
  }
  return rc;
}

// SANDBOX:PATH names a sandbox path; the stand-in's sandboxes share the host's files.
int do_cp(const State& state, const std::string& src, const std::string& dst) {
  auto split = [&](const std::string& s) -> std::pair<std::string, std::string> {
    size_t colon = s.find(':');
    if (colon == std::string::npos || s[0] == '/' || s[0] == '.') return {"", s};
    return {s.substr(0, colon), s.substr(colon + 1)};
  };
  auto [src_box, src_path] = split(src);
  auto [dst_box, dst_path] = split(dst);
  if (src_box.empty() == dst_box.empty()) {
    std::cerr << "ERROR: exactly one of SRC and DST must be a sandbox path (SANDBOX:PATH)\n";
    return 1;
  }
  if (not_logged_in()) return fail_not_logged_in();
  const std::string& box = src_box.empty() ? dst_box : src_box;
  if (!state.load(box)) return not_found(box);
  std::error_code ec;
  fs::path to = dst_path;
  if (fs::is_directory(to)) to /= fs::path(src_path).filename();
  fs::copy(src_path, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
  if (ec) {
    std::cerr << "ERROR: " << ec.message() << "\n";
    return 1;
  }
  return 0;
}

int do_diagnose() {
  bool auth = !not_logged_in(), virt = !no_virtualization();
  std::cout << "✓ sbx CLI found\n✓ sandbox daemon is responding\n";
  std::cout << (auth ? "✓ signed in to Docker\n" : "✗ not signed in to Docker: run 'sbx login'\n");
  std::cout << (virt ? "✓ hardware virtualization available\n"
                     : "✗ hardware virtualization is not available (/dev/kvm missing)\n");
  int failed = (auth ? 0 : 1) + (virt ? 0 : 1);
  if (failed == 0) {
    std::cout << "All checks passed.\n";
    return 0;
  }
  std::cout << failed << " check(s) failed.\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  State state = State::from_env();
  log_argv(state, argc, argv);
  int word = 1;
  while (word < argc && (std::string(argv[word]) == "-D" || std::string(argv[word]) == "--debug")) ++word;
  if (word < argc && std::string(argv[word]) == "exec") return exec_main(state, argc - word, argv + word);

  CLI::App app{"Manage AI coding agent sandboxes.", "sbx"};
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // pflag: last one wins
  bool debug = false;
  app.add_flag("-D,--debug", debug, "Enable debug logging");
  app.require_subcommand(1);

  auto* create = app.add_subcommand("create", "Create a sandbox for an agent")->fallthrough()->require_subcommand(1);
  bool clone = false, quiet = false;
  int cpus = 0;
  std::vector<std::string> kits, mcps, paths;
  std::string memory, name, image;
  create->add_flag("--clone", clone, "Run the agent on a private in-container clone of the host Git repository");
  create->add_option("--cpus", cpus, "Number of CPUs to allocate to the sandbox (0 = auto)");
  create->add_option("--kit", kits, "Kit reference (directory, ZIP, or OCI)")->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  create->add_option("--mcp", mcps, "MCP server name to enable")->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  create->add_option("-m,--memory", memory, "Memory limit in binary units (e.g., 1024m, 8g)");
  create->add_option("--name", name, "Name for the sandbox");
  create->add_flag("-q,--quiet", quiet, "Suppress verbose output");
  create->add_option("-t,--template", image, "Container image to use for the sandbox");
  auto* shell = create->add_subcommand("shell", "Create a sandbox for shell")->fallthrough();
  shell->add_option("PATH", paths, "Workspace paths")->required();

  auto* ls = app.add_subcommand("ls", "List sandboxes")->fallthrough();
  bool ls_json = false, ls_quiet = false;
  ls->add_flag("--json", ls_json, "Output in JSON format");
  ls->add_flag("-q,--quiet", ls_quiet, "Only display sandbox names");

  auto* rm = app.add_subcommand("rm", "Remove one or more sandboxes")->fallthrough();
  bool rm_all = false, rm_force = false;
  std::vector<std::string> rm_names;
  rm->add_flag("--all", rm_all, "Remove all sandboxes");
  rm->add_flag("-f,--force", rm_force, "Skip confirmation prompts");
  rm->add_option("SANDBOX", rm_names, "Sandboxes to remove");

  auto* stop = app.add_subcommand("stop", "Stop one or more sandboxes without removing them")->fallthrough();
  std::vector<std::string> stop_names;
  stop->add_option("SANDBOX", stop_names, "Sandboxes to stop")->required();

  auto* cp = app.add_subcommand("cp", "Copy files or directories between a sandbox and the host")->fallthrough();
  bool follow = false;
  std::string cp_src, cp_dst;
  cp->add_flag("-L,--follow-link", follow, "Follow symbolic links in the source path");
  cp->add_option("SRC", cp_src)->required();
  cp->add_option("DST", cp_dst)->required();

  auto* version = app.add_subcommand("version", "Show Docker Sandboxes version information")->fallthrough();
  auto* diagnose = app.add_subcommand("diagnose", "Diagnose common issues with your sbx installation")->fallthrough();
  app.add_subcommand("exec", "Execute a command inside a sandbox");  // parsed by exec_main

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  // create hangs only once it has recorded the sandbox (in do_create).
  for (const char* command : {"ls", "rm", "stop", "cp", "version", "diagnose"})
    if (app.got_subcommand(command)) maybe_hang(state, command);
  if (*shell) return do_create(state, name, paths, image, cpus, memory, quiet);
  if (*ls) {
    if (not_logged_in()) return fail_not_logged_in();
    if (ls_json && ls_garbled()) {
      std::cout << "{\"sandboxes\":";  // cut off, as a crashing daemon might leave it
      return 0;
    }
    print_ls(state.all(), ls_json, ls_quiet);
    return 0;
  }
  if (*rm) return do_rm(state, rm_names, rm_all, rm_force);
  if (*stop) return do_stop(state, stop_names);
  if (*cp) return do_cp(state, cp_src, cp_dst);
  if (*version) {
    std::cout << "sbx version v0.0.0-standin (corral test double)\n";
    return 0;
  }
  if (*diagnose) return do_diagnose();
  return 1;
}
