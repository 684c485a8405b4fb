// The local jail as a trust boundary: whoever runs corral (root in CI, or a user), the
// command is never the host's root and can write only its workspace.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cli.hpp"
#include "https_upstream.hpp"
#include "corral/json.hpp"
#include "corral/os/process.hpp"

namespace fs = std::filesystem;
using corral::test::CliEnv;
using corral::test::CliResult;
using corral::test::read_file;

namespace {

constexpr uid_t kNobody = 65534;
// The uids corral, as root, gives each sandbox's jail one of (plugins/local/jail_ids.hpp).
constexpr uid_t kJailIdFirst = 0x7C000000, kJailIdCount = 0x10000;
bool is_jail_id(uid_t uid) { return uid >= kJailIdFirst && uid - kJailIdFirst < kJailIdCount; }
const fs::path kSwappiness = "/proc/sys/vm/swappiness";

bool as_root() { return ::geteuid() == 0; }

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// Runs corral with `prefix` before it on the command line (setpriv to change identity),
// with `passed` open in it as a shell's `9>>file` would leave them.
CliResult run_with(const CliEnv& env, const std::vector<std::string>& prefix, const std::vector<std::string>& args,
                   const std::string& corral = corral::test::corral_binary(),
                   const std::vector<corral::os::ProcessSpec::PassedFd>& passed = {}) {
  corral::os::ProcessSpec spec;
  spec.pass_fds = passed;
  spec.argv = prefix;
  spec.argv.push_back(corral);
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = env.environment();
  spec.cwd = env.workspace().string();
  auto p = corral::os::capture_process(spec, 300);
  return {p.exit_code, p.out, p.err};
}

// The build tree may sit in a folder nobody cannot enter (a private temp dir, root's
// home): install corral into the test's own folder, as a user would, and run that copy.
std::string install_for_nobody(const CliEnv& env) {
  const fs::path build = fs::path(corral::test::corral_binary()).parent_path().parent_path();
  const fs::path prefix = env.root().path() / "prefix";
  auto r = corral::os::capture_process({{"cmake", "--install", build.string(), "--prefix", prefix.string()}}, 120);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return (prefix / "bin" / "corral").string();
}

// corral, installed in the test's folder, as the unprivileged user nobody, owning the
// test's HOME and XDG folders.
CliResult run_as_nobody(const CliEnv& env, const std::vector<std::string>& args,
                        const std::vector<corral::os::ProcessSpec::PassedFd>& passed = {}) {
  return run_with(env, {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"}, args,
                  (env.root().path() / "prefix" / "bin" / "corral").string(), passed);
}

// Hands the test's whole folder (HOME, XDG dirs, working tree) to nobody.
void give_to_nobody(const CliEnv& env) {
  auto r = corral::os::capture_process({{"chown", "-R", "65534:65534", env.root().str()}}, 30);
  REQUIRE(r.exit_code == 0);
}

// Every "inside outside count" line of a uid_map/gid_map text.
struct MapLine {
  unsigned long inside, outside, count;
};
std::vector<MapLine> map_lines(const std::string& text) {
  std::vector<MapLine> out;
  std::istringstream in(text);
  MapLine l{};
  while (in >> l.inside >> l.outside >> l.count) out.push_back(l);
  return out;
}

// The outputs of a command, separated by lines of "--".
std::vector<std::string> sections(const std::string& out) {
  std::vector<std::string> parts(1);
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line == "--") parts.emplace_back();
    else parts.back() += line + "\n";
  }
  return parts;
}

// A probe of everything the jail must not be able to do, plus its identity. Sections:
// uid_map, gid_map, id -u, the Groups line, the user namespace, swappiness write, shadow.
std::string probe_script(const std::string& value) {
  return "cat /proc/self/uid_map; echo --; cat /proc/self/gid_map; echo --; id -u; echo --; "
         "grep '^Groups:' /proc/self/status; echo --; readlink /proc/self/ns/user; echo --; "
         "(echo " + value + " > /proc/sys/vm/swappiness) 2>/dev/null && echo wrote || echo write-refused; echo --; "
         "cat /etc/shadow >/dev/null 2>&1 && echo read || echo read-refused";
}

// Checks the probe's output: its own user namespace, no mapping to host root (when
// `direct_map`: the namespace's parent is the host's, as when corral is root; bwrap's
// own nests one more, so its map names the middle namespace's ids), no root groups,
// and both escapes refused. `expected_uid` 0: a uid of corral's range for the jail
// (corral is root); the one found is returned.
uid_t check_isolated(const std::string& out, uid_t expected_uid, bool direct_map = true) {
  auto s = sections(out);
  REQUIRE_MESSAGE(s.size() == 7, out);
  if (expected_uid == 0) {
    expected_uid = static_cast<uid_t>(std::stoul(trimmed(s[2])));
    CHECK_MESSAGE(is_jail_id(expected_uid), "the jail's uid ", expected_uid, " is not one of corral's range");
  }
  auto uid_map = map_lines(s[0]), gid_map = map_lines(s[1]);
  if (!direct_map) uid_map = gid_map = {{expected_uid, expected_uid, 1}};
  CHECK_MESSAGE(!uid_map.empty(), s[0]);
  for (const auto& l : uid_map) CHECK_MESSAGE(l.outside != 0, "uid_map maps host root: ", s[0]);
  for (const auto& l : gid_map) CHECK_MESSAGE(l.outside != 0, "gid_map maps host root: ", s[1]);
  // Exactly one id each way: the jail's user is all the namespace knows.
  REQUIRE(uid_map.size() == 1);
  REQUIRE(gid_map.size() == 1);
  CHECK((uid_map[0].inside == expected_uid && uid_map[0].outside == expected_uid && uid_map[0].count == 1));
  CHECK((gid_map[0].outside == expected_uid && gid_map[0].count == 1));
  CHECK(trimmed(s[2]) == std::to_string(expected_uid));
  std::string groups = trimmed(s[3]).substr(std::string("Groups:").size());
  std::istringstream g(groups);
  for (std::string id; g >> id;) CHECK_MESSAGE(id == std::to_string(expected_uid), "supplementary group ", id);
  CHECK(trimmed(s[4]) != trimmed(fs::read_symlink("/proc/self/ns/user").string()));
  CHECK(trimmed(s[5]) == "write-refused");
  CHECK(trimmed(s[6]) == "read-refused");
  return expected_uid;
}

// A swappiness value other than the current one, so a successful write would show.
std::string other_swappiness(const std::string& now) { return trimmed(now) == "61" ? "62" : "61"; }

// Restores the host's swappiness if a broken jail let the command change it.
struct SwappinessGuard {
  std::string before = read_file(kSwappiness);
  ~SwappinessGuard() {
    if (as_root() && read_file(kSwappiness) != before)
      corral::os::capture_process({{"sh", "-c", "echo " + trimmed(before) + " > " + kSwappiness.string()}}, 10);
  }
};

bool shadow_private() {
  struct stat st {};
  return ::stat("/etc/shadow", &st) == 0 && !(st.st_mode & S_IROTH);
}

// Whether a test can run corral as nobody and tell a jail that reads /etc/shadow.
bool nobody_can_run_here() { return as_root() && shadow_private() && !corral::os::find_program("setpriv").empty(); }

// Installs corral where nobody can run it and gives nobody the test's folder.
void hand_to_nobody(const CliEnv& env) {
  install_for_nobody(env);
  give_to_nobody(env);
}

}  // namespace

TEST_CASE("as an unprivileged user, --secret loads the installed TLS module: the host gets the value, the jail the placeholder") {
  if (!nobody_can_run_here()) return;  // root runs it as nobody; the suites run as root
  CliEnv env;
  corral::test::HttpsUpstream upstream("host.corral.internal");
  hand_to_nobody(env);
  const std::string value = "sk-nobody-5Real4Value3Here2";
  env.env["API_KEY"] = value;
  env.env["CORRAL_EGRESS_CA_FILE"] = upstream.ca_file();
  const std::string port = std::to_string(upstream.port());
  auto r = run_as_nobody(env, {"run", "--network", "allow:host.corral.internal:" + port, "--secret",
                               "API_KEY=host.corral.internal", "--", "sh", "-c",
                               "curl -sS --max-time 20 -H \"Authorization: Bearer $API_KEY\" "
                               "https://host.corral.internal:" + port + "/nobody; echo; echo \"$API_KEY\""});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  const size_t line = r.out.find('\n');
  REQUIRE(line != std::string::npos);
  const std::string placeholder = r.out.substr(line + 1, r.out.size() - line - 2);
  CHECK(placeholder.size() == value.size());
  CHECK(r.out == "you sent Bearer " + placeholder + "\n" + placeholder + "\n");
  CHECK(r.out.find(value) == std::string::npos);
  REQUIRE(upstream.heads().size() == 1);
  CHECK(upstream.heads()[0].find("Authorization: Bearer " + value + "\r\n") != std::string::npos);
}

TEST_CASE("as root, the jailed command is not root: no host sysctl, no /etc/shadow, no root mapping") {
  if (!as_root() || !shadow_private()) return;  // the unprivileged case is below
  CliEnv env;
  SwappinessGuard guard;
  std::string value = other_swappiness(guard.before);
  auto r = env.run({"run", "--", "sh", "-c", probe_script(value)});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  const uid_t jail = check_isolated(r.out, 0);
  CHECK(jail != kNobody);
  CHECK(read_file(kSwappiness) == guard.before);
}

TEST_CASE("as root, root's supplementary groups do not reach the jail") {
  if (!as_root()) return;
  CliEnv env;
  // corral started with groups root(0) and adm(4), as a root login shell may have.
  auto r = run_with(env, {"setpriv", "--groups=0,4", "--"},
                    {"run", "--", "sh", "-c", "id -u; grep ^Groups: /proc/self/status"});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  const std::string uid = r.out.substr(0, r.out.find('\n'));
  std::istringstream g(trimmed(r.out.substr(r.out.find('\n') + 1)).substr(std::string("Groups:").size()));
  for (std::string id; g >> id;) CHECK_MESSAGE(id == uid, "supplementary group ", id);
}

TEST_CASE("as root, the workspace is the jail's: files made, changed and kept across --id reuse") {
  if (!as_root()) return;
  CliEnv env;
  env.root().write("work/src/a.txt", "one");
  fs::path h = env.root().path() / "handle.json";
  auto r = env.run({"run", "--keep", "--lease-output", h.string(), "--", "sh", "-c",
                    "echo made > made.txt && mkdir -p out/deep && echo x > out/deep/f && echo changed >> src/a.txt && "
                    "chmod 500 out && cat src/a.txt"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out == "onechanged\n");
  CHECK(read_file(env.workspace() / "src/a.txt") == "one");  // the user's tree is untouched
  std::string slug = corral::json::parse(read_file(h), "handle")["slug"].GetString();

  // On the host the workspace and what the jail made belong to the sandbox's own user, the
  // folder around it to root.
  fs::path local = env.state_dir() / "corral" / "local";
  std::vector<fs::path> dirs;
  for (auto& e : fs::directory_iterator(local)) dirs.push_back(e.path());
  REQUIRE(dirs.size() == 1);
  struct stat ws {}, made {}, dir {};
  REQUIRE(::stat((dirs[0] / "workspace").c_str(), &ws) == 0);
  REQUIRE(::stat((dirs[0] / "workspace/made.txt").c_str(), &made) == 0);
  REQUIRE(::stat(dirs[0].c_str(), &dir) == 0);
  CHECK(is_jail_id(ws.st_uid));
  CHECK(ws.st_gid == ws.st_uid);
  CHECK(made.st_uid == ws.st_uid);
  CHECK(dir.st_uid == 0);
  CHECK((dir.st_mode & 0777) == 0700);

  // Reused: a re-sync lands as the sandbox's user too, and the jail can change it and its own files.
  env.root().write("work/src/a.txt", "two");
  env.root().write("work/src/new.txt", "new");
  auto again = env.run({"run", "--id", slug, "--", "sh", "-c",
                        "cat made.txt src/a.txt src/new.txt && echo && echo more >> src/new.txt && rm made.txt && "
                        "chmod 700 out && rm -r out && ls"});
  CHECK_MESSAGE(again.exit_code == 0, again.err);
  CHECK(again.out == "made\ntwonew\nsrc\n");
  struct stat synced {};
  REQUIRE(::stat((dirs[0] / "workspace/src/new.txt").c_str(), &synced) == 0);
  CHECK(synced.st_uid == ws.st_uid);

  // Stop removes everything, including what the jail made read-only.
  CHECK(env.run({"run", "--id", slug, "--", "sh", "-c", "mkdir ro && touch ro/f && chmod 500 ro"}).exit_code == 0);
  auto stop = env.run({"stop", "--id", slug});
  CHECK_MESSAGE(stop.exit_code == 0, stop.err);
  CHECK_FALSE(fs::exists(dirs[0]));
}

TEST_CASE("as root, doctor checks the jail root would use") {
  if (!as_root()) return;
  CliEnv env;
  auto r = env.run({"doctor", "--provider", "local"});
  CHECK_MESSAGE(r.out.find("[ok] user namespaces usable") != std::string::npos, (r.out + r.err));
  CHECK_MESSAGE(r.out.find("as a uid of its own from 2080374784-2080440319") != std::string::npos, r.out);
}

TEST_CASE("a jail that cannot start is one clear error with a hint, not the command's failure") {
  CliEnv env;
  // As root, bwrap runs as the jail's user, which must be able to reach it.
  fs::permissions(env.root().path(), fs::perms::group_exec | fs::perms::others_exec, fs::perm_options::add);
  fs::path fake = env.root().write("tools/bwrap", "#!/bin/sh\necho 'bwrap: Creating new namespace failed: Operation not permitted' >&2\nexit 1\n");
  fs::permissions(fake, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                           fs::perms::others_exec, fs::perm_options::replace);
  env.env["CORRAL_BWRAP"] = fake.string();
  auto r = env.run({"run", "--", "true"});
  CHECK(r.exit_code == 69);
  CHECK_MESSAGE(r.err.find("bubblewrap cannot create a sandbox here: Creating new namespace failed") != std::string::npos,
                r.err);
  // Reported once, as corral's error: bwrap's own line is not passed on as the command's.
  CHECK(r.err.find("bwrap: Creating") == std::string::npos);
  CHECK(r.err.find("namespace") != std::string::npos);
  std::error_code ec;
  CHECK(fs::is_empty(env.state_dir() / "corral" / "local", ec));
}

TEST_CASE("a bubblewrap too old to forbid nested user namespaces is refused, saying which version is needed") {
  // Only an unprivileged corral asks bwrap for it (root's jails forbid nesting themselves).
  if (as_root() && corral::os::find_program("setpriv").empty()) return;
  CliEnv env;
  fs::path fake = env.root().write("tools/bwrap", "#!/bin/sh\necho 'bwrap: Unknown option --disable-userns' >&2\nexit 1\n");
  fs::permissions(fake, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec,
                  fs::perm_options::replace);
  env.env["CORRAL_BWRAP"] = fake.string();
  CliResult r;
  if (as_root()) {
    install_for_nobody(env);
    give_to_nobody(env);
    r = run_as_nobody(env, {"run", "--", "true"});
  } else {
    r = env.run({"run", "--", "true"});
  }
  CHECK(r.exit_code == 69);
  CHECK_MESSAGE(r.err.find("older than 0.8") != std::string::npos, r.err);
}

TEST_CASE("a command that cannot be executed is the command's failure: 127 or 126, as in a shell") {
  CliEnv env;
  env.root().write("work/not-executable", "#!/bin/sh\n");
  struct Case {
    std::vector<std::string> command;
    int code;
    std::string says;
  };
  for (const Case& c : {Case{{"/no/such/program"}, 127, "/no/such/program: No such file or directory"},
                        Case{{"no-such-program-corral", "arg"}, 127, "no-such-program-corral: command not found"},
                        Case{{"./not-executable"}, 126, "./not-executable: Permission denied"}}) {
    CAPTURE(c.command[0]);
    std::vector<std::string> args = {"run", "--"};
    args.insert(args.end(), c.command.begin(), c.command.end());
    auto r = env.run(args);
    CHECK(r.exit_code == c.code);
    CHECK_MESSAGE(r.err.find(c.says) != std::string::npos, r.err);
    CHECK(r.err.find("cannot create a sandbox") == std::string::npos);
  }
}

TEST_CASE("a missing or unusable jail starter is a clear error before a sandbox is made, and leaves nothing") {
  CliEnv env;
  const fs::path corral = install_for_nobody(env);
  const fs::path starter = corral.parent_path().parent_path() / "libexec" / "corral" / "corral-jail-exec";
  REQUIRE(fs::is_regular_file(starter));
  SUBCASE("missing") {
    fs::remove(starter);
    auto r = run_with(env, {}, {"run", "--", "sh", "-c", "echo ran"}, corral.string());
    CHECK(r.exit_code == 69);
    CHECK(r.out.find("ran") == std::string::npos);
    CHECK_MESSAGE(r.err.find(starter.string() + " is unusable: No such file or directory") != std::string::npos, r.err);
    CHECK_MESSAGE(r.err.find("reinstall corral") != std::string::npos, r.err);
    auto doctor = run_with(env, {}, {"doctor", "--provider", "local"}, corral.string());
    CHECK(doctor.exit_code == 69);
    CHECK_MESSAGE(doctor.out.find("[FAIL] jail starter installed: ") != std::string::npos, doctor.out);
  }
  SUBCASE("a FIFO in its place: refused, never waited on") {
    fs::remove(starter);
    REQUIRE(::mkfifo(starter.c_str(), 0755) == 0);
    auto r = run_with(env, {}, {"run", "--", "sh", "-c", "echo ran"}, corral.string());
    CHECK(r.exit_code == 69);
    CHECK(r.out.find("ran") == std::string::npos);
    CHECK_MESSAGE(r.err.find(starter.string() + " is unusable: not a file") != std::string::npos, r.err);
  }
  SUBCASE("not executable by the jail's user") {
    fs::permissions(starter, fs::perms::owner_all, fs::perm_options::replace);
    if (as_root()) {
      auto r = run_with(env, {}, {"run", "--", "sh", "-c", "echo ran"}, corral.string());
      CHECK(r.exit_code == 69);
      CHECK(r.out.find("ran") == std::string::npos);
      CHECK_MESSAGE(r.err.find("the jails' own users (uids 2080374784 up) may not execute it") != std::string::npos,
                    r.err);
    }
  }
  SUBCASE("empty, truncated or another program: not the complete starter") {
    const std::string whole = read_file(starter);
    REQUIRE(whole.size() > 1000);
    auto refused = [&](const std::string& content, const std::string& why) {
      fs::remove(starter);
      { std::ofstream(starter, std::ios::binary) << content; }
      fs::permissions(starter, fs::perms::owner_all | fs::perms::group_exec | fs::perms::group_read |
                                   fs::perms::others_exec | fs::perms::others_read);
      auto r = run_with(env, {}, {"run", "--", "sh", "-c", "echo ran"}, corral.string());
      INFO(why);
      CHECK(r.exit_code == 69);
      CHECK(r.out.find("ran") == std::string::npos);
      CHECK_MESSAGE(r.err.find(starter.string() + " is unusable: ") != std::string::npos, r.err);
      CHECK_MESSAGE(r.err.find("reinstall corral") != std::string::npos, r.err);
      auto doctor = run_with(env, {}, {"doctor", "--provider", "local"}, corral.string());
      CHECK(doctor.exit_code == 69);
      CHECK_MESSAGE(doctor.out.find("[FAIL] jail starter installed: ") != std::string::npos, doctor.out);
    };
    // A run that works first, so the verification remembered for the whole file is there
    // and must not vouch for what replaces it.
    auto ok = run_with(env, {}, {"run", "--", "sh", "-c", "echo ran"}, corral.string());
    REQUIRE_MESSAGE(ok.exit_code == 0, ok.err);
    refused("", "empty");
    refused(whole.substr(0, whole.size() / 2), "truncated");
    refused("#!/bin/sh\nexec \"$@\"\n", "a shell script that runs the command");
    refused("#!/bin/sh\necho corral-jail-exec 0\n", "a starter of another protocol");
    // A script that gives the probe's very answer is still no program.
    refused("#!/bin/sh\necho corral-jail-exec " CORRAL_JAIL_EXEC_PROTOCOL "\n", "a script answering the probe");
  }
  SUBCASE("writable by others, or not its owner's: held to the rule plugins are held to") {
    fs::permissions(starter, fs::perms::others_write, fs::perm_options::add);
    auto r = run_with(env, {}, {"run", "--", "sh", "-c", "echo ran"}, corral.string());
    CHECK(r.exit_code == 69);
    CHECK_MESSAGE(r.err.find("cannot be trusted: " + starter.string() + " is world-writable (fix with: chmod go-w") !=
                      std::string::npos, r.err);
    fs::permissions(starter, fs::perms::others_write, fs::perm_options::remove);
    if (as_root()) {
      REQUIRE(::chown(starter.c_str(), 12345, 12345) == 0);
      r = run_with(env, {}, {"run", "--", "sh", "-c", "echo ran"}, corral.string());
      CHECK(r.exit_code == 69);
      CHECK_MESSAGE(r.err.find("is owned by uid 12345, neither root nor you") != std::string::npos, r.err);
    }
  }
  CHECK(env.claims().empty());
  CHECK(env.local_sandboxes().empty());
}

namespace {

// What the command sees of descriptors and namespaces. Sections: whether it could write
// to descriptor 9, its own descriptors, every descriptor of every process of the jail
// it can read, and whether it could make a user namespace.
const char* const kDescriptorProbe =
    "{ echo X >&9; } 2>/dev/null && echo fd9-open || echo fd9-closed; echo --; ls /proc/$$/fd; echo --; "
    "for f in /proc/[0-9]*/fd/*; do readlink \"$f\"; done 2>/dev/null; echo --; "
    "unshare --user true 2>/dev/null && echo nested-made || echo nested-refused";

// Checks the probe's output: stdin, stdout and stderr alone, nothing of corral's or the
// caller's anywhere in the jail, and no nested user namespace.
void check_descriptors(const std::string& out, const fs::path& secret) {
  auto s = sections(out);
  REQUIRE_MESSAGE(s.size() == 4, out);
  CHECK(s[0] == "fd9-closed\n");
  CHECK(s[1] == "0\n1\n2\n");
  for (const char* leak : {"user:[", "mnt:[", "pid:[", "/state/", "corral-jail-exec"})
    CHECK_MESSAGE(s[2].find(leak) == std::string::npos, leak, " is open in the jail: ", s[2]);
  CHECK_MESSAGE(s[2].find(secret.filename().string()) == std::string::npos, s[2]);
  CHECK(s[3] == "nested-refused\n");
  CHECK(read_file(secret).empty());
}

// A root-owned 0600 file, opened for appending as a caller's `9>>file` would; its fd.
int open_secret(const fs::path& secret) {
  int fd = ::open(secret.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  REQUIRE(fd >= 0);
  return fd;
}

}  // namespace

TEST_CASE("descriptors the caller left open never reach the command, and it cannot nest user namespaces") {
  CliEnv env;
  const fs::path secret = env.root().path() / "secret-file";
  const int fd = open_secret(secret);
  SUBCASE("as the caller (root in CI)") {
    auto r = run_with(env, {}, {"run", "--", "sh", "-c", kDescriptorProbe}, corral::test::corral_binary(), {{fd, 9}});
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    check_descriptors(r.out, secret);
    // The same with the command as a shell string, and the caller's descriptor also at 3.
    r = run_with(env, {}, {"run", "--shell", kDescriptorProbe}, corral::test::corral_binary(), {{fd, 9}, {fd, 3}});
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    check_descriptors(r.out, secret);
  }
  SUBCASE("as an unprivileged user handed a root-owned descriptor") {
    if (!as_root() || corral::os::find_program("setpriv").empty()) return;
    install_for_nobody(env);
    give_to_nobody(env);
    ::chown(secret.c_str(), 0, 0);
    auto r = run_as_nobody(env, {"run", "--", "sh", "-c", kDescriptorProbe}, {{fd, 9}});
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    check_descriptors(r.out, secret);
  }
  ::close(fd);
}

TEST_CASE("as an unprivileged user the jail is a user namespace, isolated, with a writable workspace") {
  if (!nobody_can_run_here()) return;
  CliEnv env;
  env.root().write("work/a.txt", "one");
  hand_to_nobody(env);
  SwappinessGuard guard;
  fs::path h = env.root().path() / "handle.json";
  auto r = run_as_nobody(env, {"run", "--keep", "--lease-output", h.string(), "--", "sh", "-c",
                               probe_script(other_swappiness(guard.before)) + "; echo made > made.txt"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  check_isolated(r.out, kNobody, false);
  CHECK(read_file(kSwappiness) == guard.before);
  // What it made belongs to the caller on the host.
  std::string slug = corral::json::parse(read_file(h), "handle")["slug"].GetString();
  fs::path local = env.state_dir() / "corral" / "local";
  for (auto& e : fs::directory_iterator(local)) {
    struct stat made {};
    REQUIRE(::stat((e.path() / "workspace/made.txt").c_str(), &made) == 0);
    CHECK(made.st_uid == kNobody);
  }

  env.root().write("work/a.txt", "two");
  give_to_nobody(env);
  auto again = run_as_nobody(env, {"run", "--id", slug, "--", "sh", "-c", "cat made.txt a.txt; echo >> made.txt"});
  CHECK_MESSAGE(again.exit_code == 0, again.err);
  CHECK(again.out == "made\ntwo");
  auto doctor = run_as_nobody(env, {"doctor"});
  CHECK(doctor.out.find("[ok] user namespaces usable") != std::string::npos);
  auto stop = run_as_nobody(env, {"stop", "--id", slug});
  CHECK_MESSAGE(stop.exit_code == 0, stop.err);
}

TEST_CASE("as an unprivileged user a run that is not kept works in a tmpfs of its own, bounded and isolated") {
  if (!nobody_can_run_here()) return;
  CliEnv env;
  env.root().write("work/a.txt", "one");
  hand_to_nobody(env);
  SwappinessGuard guard;
  auto r = run_as_nobody(env, {"run", "--max-workspace", "1M", "--", "sh", "-c",
                               probe_script(other_swappiness(guard.before)) +
                                   "; echo --; stat -f -c %T .; cat a.txt; echo changed > a.txt; "
                                   "head -c 4000000 /dev/zero > big 2>/dev/null || echo refused"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto s = sections(r.out);
  REQUIRE_MESSAGE(s.size() == 8, r.out);
  check_isolated(r.out.substr(0, r.out.rfind("--\n")), kNobody, false);
  CHECK(s[7] == "tmpfs\nonerefused\n");
  CHECK(read_file(kSwappiness) == guard.before);
  CHECK(read_file(env.workspace() / "a.txt") == "one");
  CHECK(env.local_sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE("as an unprivileged user a kept sandbox is held to its size limit even in a folder its command made unreadable") {
  if (!nobody_can_run_here()) return;
  CliEnv env;
  env.root().write("work/a.txt", "one");
  hand_to_nobody(env);
  fs::path h = env.root().path() / "handle.json";
  auto made = run_as_nobody(env, {"run", "--keep", "--max-workspace", "1M", "--lease-output", h.string(), "--", "true"});
  REQUIRE_MESSAGE(made.exit_code == 0, made.err);
  const std::string slug = corral::json::parse(read_file(h), "handle")["slug"].GetString();
  // The caller (nobody) cannot read hidden/: its size counts all the same.
  auto hidden = run_as_nobody(env, {"run", "--id", slug, "--", "sh", "-c",
                                    "mkdir hidden && head -c 3000000 /dev/zero > hidden/f && chmod 000 hidden; "
                                    "echo hid"});
  CHECK(hidden.exit_code == 75);
  CHECK(hidden.out == "hid\n");
  CHECK_MESSAGE(hidden.err.find("its workspace held 2.9 MiB, past its limit of 1.0 MiB") != std::string::npos,
                hidden.err);
  auto stop = run_as_nobody(env, {"stop", "--id", slug});
  CHECK_MESSAGE(stop.exit_code == 0, stop.err);
}

TEST_CASE("a workspace file corral cannot read is the user's to fix (64, with a hint); a folder it cannot enter is left out, saying so") {
  // Root reads everything: the user who cannot is nobody.
  if (!as_root() || corral::os::find_program("setpriv").empty()) return;
  for (bool git : {false, true}) {
    CAPTURE(git);
    CliEnv env;
    env.root().write("work/ok.txt", "fine");
    env.root().write("work/locked/inside.txt", "hidden");
    env.root().write("work/secret.txt", "unreadable");
    if (git) {
      auto init = corral::os::capture_process({{"git", "init", "-q", env.workspace().string()}}, 30);
      REQUIRE(init.exit_code == 0);
    }
    install_for_nobody(env);
    give_to_nobody(env);
    fs::permissions(env.workspace() / "locked", fs::perms::none);
    fs::permissions(env.workspace() / "secret.txt", fs::perms::none);
    auto unreadable = run_as_nobody(env, {"run", "--", "true"});
    CHECK(unreadable.exit_code == 64);
    CHECK_MESSAGE(unreadable.err.find("cannot read " + (env.workspace() / "secret.txt").string()) != std::string::npos,
                  unreadable.err);
    CHECK(unreadable.err.find("list it in .corralignore") != std::string::npos);
    CHECK(unreadable.err.find("left out folder locked") != std::string::npos);
    // Left out by the user: the run goes on, still saying which folder it could not enter.
    env.root().write("work/.corralignore", "secret.txt\n");
    give_to_nobody(env);
    fs::permissions(env.workspace() / "locked", fs::perms::none);
    auto r = run_as_nobody(env, {"run", "--", "sh", "-c", "ls; cat ok.txt"});
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out.find("fine") != std::string::npos);
    CHECK(r.out.find("locked") == std::string::npos);
    CHECK_MESSAGE(r.err.find("warning: left out folder locked: corral cannot read it") != std::string::npos, r.err);
  }
}

TEST_CASE("as root, each sandbox's jail is a uid of its own that no other host process has, freed with the sandbox") {
  if (!as_root()) return;
  CliEnv env;
  const fs::path h1 = env.root().path() / "one.json", h2 = env.root().path() / "two.json";
  auto one = env.run({"run", "--keep", "--lease-output", h1.string(), "--", "id", "-u"});
  auto two = env.run({"run", "--keep", "--lease-output", h2.string(), "--", "id", "-u"});
  REQUIRE_MESSAGE(one.exit_code == 0, one.err);
  REQUIRE_MESSAGE(two.exit_code == 0, two.err);
  const uid_t a = static_cast<uid_t>(std::stoul(one.out)), b = static_cast<uid_t>(std::stoul(two.out));
  CHECK(is_jail_id(a));
  CHECK(is_jail_id(b));
  CHECK(a != b);
  // Nobody else is it: no user, no group, and the register says whose it is.
  CHECK(::getpwuid(a) == nullptr);
  CHECK(::getgrgid(a) == nullptr);
  const fs::path register_file = fs::path("/var/lib/corral/jail-ids") / std::to_string(a);
  CHECK(fs::is_regular_file(register_file));
  const std::string slug = corral::json::parse(read_file(h1), "handle")["slug"].GetString();
  // Reused, it keeps its user (its files are that user's).
  auto again = env.run({"run", "--id", slug, "--", "id", "-u"});
  CHECK(again.out == one.out);
  const std::string owner = read_file(register_file);
  CHECK_MESSAGE(owner.find(env.state_dir().string()) == 0, owner);
  // Stopped, its uid is free again; the other sandbox keeps its own.
  REQUIRE(env.run({"stop", "--id", slug}).exit_code == 0);
  CHECK_FALSE(fs::exists(register_file));
  CHECK(fs::exists(fs::path("/var/lib/corral/jail-ids") / std::to_string(b)));
  REQUIRE(env.run({"stop", "--all"}).exit_code == 0);
  CHECK_FALSE(fs::exists(fs::path("/var/lib/corral/jail-ids") / std::to_string(b)));
}

TEST_CASE("as root, another host user cannot read a running jail's environment, files or memory through /proc") {
  if (!as_root() || corral::os::find_program("setpriv").empty()) return;
  CliEnv env;
  env.env["CORRAL_TEST_FORWARDED_TOKEN"] = "forwarded-value-0451";
  auto bg = env.start({"run", "--env", "CORRAL_TEST_FORWARDED_TOKEN", "--", "sh", "-c",
                       "echo secret-in-workspace > f.txt; echo started; exec sleep 3599.25"});
  REQUIRE(corral::test::eventually([&] { return read_file(bg.out) == "started\n"; }));
  std::vector<int> pids;
  REQUIRE(corral::test::eventually([&] { return !(pids = corral::test::processes_running({"sleep", "3599.25"})).empty(); }));
  const std::string proc = "/proc/" + std::to_string(pids[0]);
  // nobody stands for every other host process; before, every jail ran as nobody.
  auto as_nobody = [&](const std::string& script) {
    return corral::os::capture_process(
        {{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "sh", "-c", script}}, 30);
  };
  auto environ = as_nobody("cat " + proc + "/environ");
  CHECK(environ.out.find("forwarded-value-0451") == std::string::npos);
  CHECK(environ.exit_code != 0);
  auto files = as_nobody("cat " + proc + "/root" + "/workspace/f.txt; ls " + proc + "/root/");
  CHECK(files.out.find("secret-in-workspace") == std::string::npos);
  CHECK(files.exit_code != 0);
  auto memory = as_nobody("head -c 1 " + proc + "/mem");
  CHECK(memory.exit_code != 0);
  // Root still can (corral's own view), so the process is the one the test means.
  CHECK(read_file(proc + "/environ").find("forwarded-value-0451") != std::string::npos);
  ::kill(bg.pid, SIGINT);
  CHECK(bg.wait(std::chrono::seconds(30)) == 130);
}

TEST_CASE("a workdir at or below a folder the jail is built of is refused before anything is made") {
  CliEnv env;
  for (const std::string workdir : {"/proc", "/proc/self", "/usr", "/usr/local/src", "/dev", "/etc", "/tmp/ws",
                                    "/run", "/sys", "/", "//usr", "/./proc", "/src/../proc", "/proc/", "src"}) {
    env.root().write("work/corral.yaml", "local:\n  workdir: '" + workdir + "'\n");
    auto r = env.run({"run", "--", "sh", "-c", "echo ran"});
    INFO(workdir, ": ", r.err);
    CHECK(r.exit_code == 64);
    CHECK(r.out.empty());
    CHECK(r.err.find("cannot hold the workspace") != std::string::npos);
    CHECK(r.err.find("--local-workdir /workspace") != std::string::npos);
  }
  CHECK(env.local_sandboxes().empty());
  CHECK(env.claims().empty());
  // A folder of one's own is fine, the flag the same as the file.
  env.root().write("work/corral.yaml", "local:\n  workdir: /src/app\n");
  auto r = env.run({"run", "--", "pwd"});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out == "/src/app\n");
  r = env.run({"run", "--local-workdir", "/usr/src", "--", "pwd"});
  CHECK(r.exit_code == 64);
}
