// Unit tests of what can be checked without a host to talk to: quoting (against a real
// /bin/sh and bash), the lease record and listing, the remote scripts (run by a local sh
// on a temporary folder), the settings, the ssh argv and the reading of ssh's failures.
// Plain checks: an example should need no test library.
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <cstdio>
#include <string>
#include <vector>

#include <corral/os/process.hpp>
#include <corral/sdk/shell.hpp>

#include "../lease_record.hpp"
#include "../remote_scripts.hpp"
#include "../remote_shell.hpp"
#include "../settings.hpp"
#include "../ssh_command.hpp"
#include "../ssh_errors.hpp"

namespace {

int failures = 0;

#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) {                                                           \
      std::fprintf(stderr, "%s:%d: CHECK(%s)\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                            \
    }                                                                        \
  } while (0)

// The words `line` (a command line after "printf '%s\0' ") makes `shell` print, split at NUL.
std::vector<std::string> words_after(const std::string& shell, const std::string& line) {
  corral::os::ProcessSpec spec;
  spec.argv = {shell, "-c", "printf '%s\\0' " + line};
  auto r = corral::os::capture_process(spec);
  CHECK(r.exit_code == 0);
  std::vector<std::string> words;
  size_t start = 0;
  for (size_t nul; (nul = r.out.find('\0', start)) != std::string::npos; start = nul + 1)
    words.push_back(r.out.substr(start, nul - start));
  return words;
}

const std::vector<std::string> kHostile = {"",
                                           "plain",
                                           "it's",
                                           "'",
                                           "''",
                                           "a b",
                                           "  lead and trail  ",
                                           "$(touch /tmp/corral-ssh-pwned)",
                                           "`touch /tmp/corral-ssh-pwned`",
                                           "\\",
                                           "\\'",
                                           "\"",
                                           "\"'\"",
                                           "line\nbreak",
                                           "\n",
                                           "-n",
                                           "--",
                                           "-e",
                                           "*",
                                           "?",
                                           "[a]",
                                           "~",
                                           "~root",
                                           "$HOME",
                                           "${IFS}",
                                           "a\tb",
                                           "!",
                                           "!!",
                                           "; rm -rf /",
                                           "&& false",
                                           "| cat",
                                           "> /tmp/corral-ssh-pwned",
                                           "#comment",
                                           "été",
                                           "\x01\x7f",
                                           "%s%n",
                                           "NAME=value",
                                           "{a,b}"};

void test_quote_round_trips(const std::string& shell) {
  for (const std::string& word : kHostile) {
    std::vector<std::string> got = words_after(shell, corral::sdk::shell_quote(word));
    CHECK(got.size() == 1);
    if (got.size() == 1 && got[0] != word) std::fprintf(stderr, "%s changed %s\n", shell.c_str(), word.c_str());
    CHECK(got.size() == 1 && got[0] == word);
  }
  // All at once, as one command line: word boundaries survive too.
  CHECK(words_after(shell, corral_ssh::command_line(kHostile)) == kHostile);
}

void test_quote_shape() {
  CHECK(corral::sdk::shell_quote("") == "''");
  CHECK(corral::sdk::shell_quote("a b") == "'a b'");
  CHECK(corral::sdk::shell_quote("it's") == "'it'\\''s'");
  bool threw = false;
  try {
    corral::sdk::shell_quote(std::string("a\0b", 3));
  } catch (const corral::Error& e) {
    threw = e.code() == corral::ErrorCode::invalid_argument;
  }
  CHECK(threw);
}

void test_record_and_listing() {
  corral_ssh::LeaseRecord record{{{"corral-owner", "corral"}, {"odd", "tab\there\nnewline \"q\""}}};
  std::string line = corral_ssh::to_line(record);
  CHECK(line.find('\n') == std::string::npos);
  corral_ssh::LeaseRecord back = corral_ssh::record_from(line);
  CHECK(back.labels == record.labels);

  CHECK(corral_ssh::record_from_output("welcome to the build box\n" + line + "\n").labels == record.labels);

  std::string listing = "abc123\t" + line + "\n" +                     // a lease
                        "not a lease\t" + line + "\n" +                // a folder name that is no lease id
                        "-x\t" + line + "\n" + "def456\tnot json\n" +  // someone else's labels.json
                        "no-tab-here\n" + "fed987\t" + line;           // last line without newline
  auto leases = corral_ssh::parse_listing(listing);
  CHECK(leases.size() == 2);
  CHECK(leases.size() == 2 && leases[0].id == "abc123" && leases[1].id == "fed987");
  CHECK(leases.size() == 2 && leases[1].record.labels == record.labels);

  CHECK(corral_ssh::is_lease_id("0a1b2c3d4e5f"));
  CHECK(!corral_ssh::is_lease_id(""));
  CHECK(!corral_ssh::is_lease_id("../x"));
  CHECK(!corral_ssh::is_lease_id("-rf"));
  CHECK(!corral_ssh::is_lease_id("a b"));
  CHECK(!corral_ssh::is_lease_id(std::string(65, 'a')));
}

// Runs a remote command line the way sshd does: the login shell gets it as one string.
corral::os::CapturedProcess on_host(const std::string& line) {
  corral::os::ProcessSpec spec;
  spec.argv = {"sh", "-c", line};
  return corral::os::capture_process(spec, 30);
}

// The scripts against a local folder standing in for the host: create, read, list, run
// (exit code, environment, pid file) and destroy.
void test_scripts_locally() {
  std::string tmp = (std::filesystem::temp_directory_path() / "corral-ssh-test-XXXXXX").string();
  if (!::mkdtemp(tmp.data())) {
    CHECK(!"mkdtemp");
    return;
  }
  const corral_ssh::LeaseFolder lease(tmp + "/leases", "abc123");
  const corral_ssh::LeaseRecord record{{{"corral-lease", "abc123"}, {"odd", "it's $(x)"}}};
  CHECK(on_host(corral_ssh::create_lease(lease, corral_ssh::to_line(record))).exit_code == 0);
  CHECK(std::filesystem::is_directory(lease.workspace()));
  CHECK(on_host(corral_ssh::create_lease(lease, corral_ssh::to_line(record))).exit_code == corral_ssh::kLeaseExists);
  auto read = on_host(corral_ssh::read_record(lease));
  CHECK(read.exit_code == 0 && corral_ssh::record_from_output(read.out).labels == record.labels);
  CHECK(on_host(corral_ssh::read_record({lease.root(), "gone"})).exit_code == corral_ssh::kLeaseMissing);
  auto listed = corral_ssh::parse_listing(on_host(corral_ssh::list_leases(lease.root())).out);
  CHECK(listed.size() == 1 && listed[0].id == "abc123" && listed[0].record.labels == record.labels);
  CHECK(on_host(corral_ssh::list_leases(tmp + "/none")).exit_code == 0);

  auto run = on_host(corral_ssh::run_command(lease, "r1", lease.workspace(), {{"A", "it's $(x) \"q\""}},
                                             {"sh", "-c", "printf '%s|' \"$A\" \"$(pwd)\"; echo err >&2; exit 3"}));
  CHECK(run.exit_code == 3);
  CHECK(run.out == "it's $(x) \"q\"|" + lease.workspace() + "|");
  CHECK(run.err == "err\n");
  CHECK(!std::filesystem::exists(lease.runs() + "/r1.pid"));  // gone with the run

  CHECK(on_host(corral_ssh::destroy_lease(lease)).exit_code == 0);
  CHECK(!std::filesystem::exists(lease.dir()));
  CHECK(on_host(corral_ssh::destroy_lease(lease)).exit_code == 0);  // already gone is fine
  std::filesystem::remove_all(tmp);
}

corral_ssh::Settings settings() {
  corral_ssh::Settings s;
  s.host = "build-box";
  s.remote_root = ".corral/leases";
  return s;
}

void test_ssh_argv() {
  corral_ssh::Settings s = settings();
  s.port = 2222;
  s.user = "ci";
  s.known_hosts_file = "/keys/my hosts%";
  corral_ssh::SshClient client(s);
  std::vector<std::string> argv = client.argv("echo 'hi'", "/tmp/log");
  auto has = [&](const std::string& a) { return std::find(argv.begin(), argv.end(), a) != argv.end(); };
  CHECK(argv.front() == "ssh");
  CHECK(has("BatchMode=yes") && has("StrictHostKeyChecking=yes") && has("IdentitiesOnly=yes"));
  CHECK(has("UserKnownHostsFile=\"/keys/my hosts%%\""));  // quoted, %-token escaped
  CHECK(has("GlobalKnownHostsFile=/dev/null"));
  // The destination and command come last, after "--", so neither can be read as an option.
  CHECK(argv.size() >= 3 && argv[argv.size() - 3] == "--" && argv[argv.size() - 2] == "build-box" &&
        argv.back() == "echo 'hi'");
}

void test_settings_refuse_bad_values() {
  auto refused = [](corral::StringMap values) {
    try {
      corral_ssh::Settings::from(corral::sdk::Options(std::move(values)));
    } catch (const corral::Error& e) {
      return e.code() == corral::ErrorCode::invalid_argument && !e.hint().empty();
    }
    return false;
  };
  CHECK(refused({}));                                 // no host
  CHECK(refused({{"host", "-oProxyCommand=evil"}}));  // an option in disguise
  CHECK(refused({{"host", "me@box"}}));               // the account is --ssh-user's
  CHECK(refused({{"host", "box"}, {"port", "70000"}}));
  CHECK(refused({{"host", "box"}, {"identity-file", "/no/such/key"}}));
  CHECK(refused({{"host", "box"}, {"remote-root", "/"}}));
  CHECK(refused({{"host", "box"}, {"remote-root", "a/../b"}}));
  CHECK(!refused({{"host", "box"}}));
  CHECK(corral_ssh::Settings::from(corral::sdk::Options({{"host", "box"}, {"remote-root", "~/x/y/"}})).remote_root ==
        "x/y");
}

void test_ssh_failures() {
  corral_ssh::Settings s = settings();
  s.known_hosts_file = "/keys/known_hosts";
  auto code = [&](const std::string& log) { return corral_ssh::ssh_failed("run the command", log, s).code(); };
  CHECK(code("No ED25519 host key is known for [127.0.0.1]:2222 and you have requested strict checking.\n"
             "Host key verification failed.\n") == corral::ErrorCode::auth);
  corral::Error changed =
      corral_ssh::ssh_failed("run the command",
                             "@@@@@@@@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n@@@@@@@@@@@\n"
                             "Host key for [127.0.0.1]:2222 has changed and you have requested strict checking.\n"
                             "Host key verification failed.\n",
                             s);
  CHECK(changed.code() == corral::ErrorCode::auth);
  CHECK(changed.hint().find("/keys/known_hosts") != std::string::npos);
  CHECK(code("ci@build-box: Permission denied (publickey).\n") == corral::ErrorCode::auth);
  CHECK(code("ssh: connect to host build-box port 22: Connection refused\n") == corral::ErrorCode::unavailable);
  CHECK(code("ssh: Could not resolve hostname build-box: Name or service not known\n") ==
        corral::ErrorCode::unavailable);
  CHECK(corral_ssh::gist("first\n@@@@\nlast line\n\n") == "last line");
}

}  // namespace

int main() {
  test_quote_shape();
  test_quote_round_trips("/bin/sh");
  if (!corral::os::find_program("bash").empty()) test_quote_round_trips("bash");
  test_record_and_listing();
  test_scripts_locally();
  test_ssh_argv();
  test_settings_refuse_bad_values();
  test_ssh_failures();
  if (failures) {
    std::fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  std::printf("corral-ssh unit tests passed\n");
  return 0;
}
