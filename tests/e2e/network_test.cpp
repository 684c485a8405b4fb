// --network end to end: the local jail really cut off (a TCP server on this machine's
// loopback it cannot reach), policies a provider cannot enforce refused before anything
// exists, the policy fixed for a lease's life, and the trust rule between the user's
// config and a repository's.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>
#include <thread>

#include "cli.hpp"
#include "corral/json.hpp"
#include "https_upstream.hpp"
#include "private_network.hpp"

namespace fs = std::filesystem;
using corral::test::CliEnv;
using corral::test::LoopbackListener;
using corral::test::read_file;

namespace {

// Every file in the leases folder (claims, locks, file lists).
std::vector<fs::path> lease_files(const CliEnv& env) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(env.state_dir() / "corral" / "leases", ec)) out.push_back(e.path());
  return out;
}

corral::json::Document parse(const std::string& text) { return corral::json::parse(text, "output"); }

// An HTTP server on this machine's 127.0.0.1 that answers every request "reached PATH"
// and closes; it keeps the paths it was asked for, in order.
class HttpResponder {
 public:
  HttpResponder() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof a;
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd_, 64) == 0);
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &size) == 0);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      for (int c; (c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC)) >= 0; ::close(c)) {
        timeval limit{10, 0};
        ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
        std::string head;
        char chunk[4096];
        for (ssize_t n; head.find("\r\n\r\n") == std::string::npos && head.size() < 65536 &&
                        (n = ::recv(c, chunk, sizeof chunk, 0)) > 0;)
          head.append(chunk, static_cast<size_t>(n));
        const size_t start = head.find(' ') + 1, end = head.find(' ', start);
        const std::string path = start == 0 || end == std::string::npos ? "?" : head.substr(start, end - start);
        {
          std::lock_guard lock(mutex_);
          paths_.push_back(path);
        }
        const std::string body = "reached " + path;
        const std::string reply = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " +
                                  std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
        (void)::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
      }
    });
  }
  ~HttpResponder() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }
  std::vector<std::string> paths() const {
    std::lock_guard lock(mutex_);
    return paths_;
  }

 private:
  int fd_ = -1;
  int port_ = 0;
  mutable std::mutex mutex_;
  std::vector<std::string> paths_;
  std::thread thread_;
};

struct Testbox : CliEnv {
  fs::path boxes = root().path() / "boxes";
  fs::path h = root().path() / "handle.json";
  Testbox() {
    fs::create_directories(boxes);
    add_registry("testbox", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so"});
    env["TESTBOX_DIR"] = boxes.string();
    root().write("work/file.txt", "synced");
  }
  // `corral run --provider testbox --keep --lease-output H [flags] -- true`; the lease id.
  std::string keep(std::vector<std::string> flags = {}) {
    std::vector<std::string> args = {"run", "--provider", "testbox", "--keep", "--lease-output", h.string()};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--", "true"});
    last = run(args);
    REQUIRE_MESSAGE(last.exit_code == 0, last.err);
    return parse(read_file(h))["leaseId"].GetString();
  }
  // The policy testbox's create was asked to enforce for `lease`.
  std::string network_of(const std::string& lease) const { return read_file(boxes / ("tb-" + lease) / "network"); }
  corral::test::CliResult last;
};

}  // namespace

TEST_CASE("--network none: the command cannot reach a TCP server on this machine's loopback; without it, it can") {
  CliEnv env;
  LoopbackListener server;
  fs::path h = env.root().path() / "h.json";
  auto open = env.run({"run", "--", "sh", "-c", server.probe_script()});
  CHECK_MESSAGE(open.exit_code == 0, open.err);
  CHECK(open.out == "reached\n");
  auto cut =
      env.run({"run", "--network", "none", "--lease-output", h.string(), "--", "sh", "-c", server.probe_script()});
  CHECK_MESSAGE(cut.exit_code == 0, cut.err);
  CHECK(cut.out == "unreachable\n");
  auto handle = parse(read_file(h));
  CHECK(std::string(handle["network"].GetString()) == "none");
  // An open sandbox's handle says nothing of the network.
  REQUIRE(env.run({"run", "--network", "open", "--lease-output", h.string(), "--", "true"}).exit_code == 0);
  CHECK_FALSE(parse(read_file(h)).HasMember("network"));
  CHECK(env.local_sandboxes().empty());
  CHECK(env.claims().empty());
}

TEST_CASE("a kept --network none sandbox stays cut off for every later command, whatever the local option says") {
  CliEnv env;
  LoopbackListener server;
  fs::path h = env.root().path() / "h.json";
  REQUIRE(env.run({"run", "--keep", "--network", "none", "--lease-output", h.string(), "--", "true"}).exit_code == 0);
  const std::string lease = parse(read_file(h))["leaseId"].GetString();

  auto again = env.run({"run", "--id", lease, "--local-network", "shared", "--", "sh", "-c", server.probe_script()});
  CHECK_MESSAGE(again.exit_code == 0, again.err);
  CHECK(again.out == "unreachable\n");
  auto same = env.run({"run", "--id", lease, "--network", "none", "--", "sh", "-c", server.probe_script()});
  CHECK(same.out == "unreachable\n");

  // The policy is fixed at creation: asking for another one is refused, and nothing runs.
  auto looser = env.run({"run", "--id", lease, "--network", "open", "--", "sh", "-c", "echo ran"});
  CHECK(looser.exit_code == 64);
  CHECK(looser.out.empty());
  CHECK(looser.err.find("was created with --network none, not open") != std::string::npos);
  CHECK(looser.err.find("fixed when it is created") != std::string::npos);

  auto url = env.run({"url", "--id", lease, "--port", "8080"});
  CHECK(url.exit_code == 64);
  CHECK(url.err.find("--network none") != std::string::npos);
  CHECK(url.out.empty());

  auto status = parse(env.run({"status", "--id", lease, "--json"}).out);
  CHECK(std::string(status["lease"]["network"].GetString()) == "none");
  CHECK(std::string(status["sandbox"]["details"]["network"].GetString()) == "none");
  CHECK(env.run({"status", "--id", lease}).out.find("network policy") != std::string::npos);
  CHECK(env.run({"stop", "--id", lease}).exit_code == 0);
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("an allow-list port is refused before anything is created by a provider that cannot hold it, naming local") {
  Testbox tb;
  for (const char* command : {"run", "warmup"}) {
    CAPTURE(command);
    std::vector<std::string> args = {command, "--provider", "testbox", "--network", "allow:pypi.org:8443"};
    if (std::string(command) == "run") args.insert(args.end(), {"--keep", "--", "sh", "-c", "echo ran"});
    auto r = tb.run(args);
    CHECK(r.exit_code == 64);
    CHECK(r.out.empty());
    CHECK(r.err.find("network policy 'allow:pypi.org:8443' needs the 'network-allowlist-ports' feature (for the port "
                     "in pypi.org:8443), which provider 'testbox' does not have") != std::string::npos);
    CHECK(r.err.find("providers that have it: local") != std::string::npos);
    CHECK(fs::is_empty(tb.boxes));
    CHECK(lease_files(tb).empty());  // no claim, not even a lock
  }
}

TEST_CASE("local allow: CONNECT, plain HTTP and SOCKS5 reach what the list names through the proxy, and nothing else") {
  CliEnv env;
  HttpResponder server;
  const std::string port = std::to_string(server.port());
  const std::string other_port = std::to_string(server.port() == 65535 ? 1 : server.port() + 1);
  fs::path h = env.root().path() / "h.json";
  const std::string script =
      "get() { curl -sS --noproxy '' --max-time 20 \"$@\"; echo \" [$?]\"; }; "
      "get http://127.0.0.1:" + port + "/plain; "
      "get -p http://host.corral.internal:" + port + "/tunnel; "
      "get --socks5-hostname \"${ALL_PROXY#http://}\" http://host.corral.internal:" + port + "/socks; "
      "get -o /dev/null -w '%{http_code}' http://localhost:" + port + "/; "
      "get -o /dev/null -w '%{http_code}' http://127.0.0.1:" + other_port + "/; "
      "if bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + port + "' 2>/dev/null; then echo direct-reached; "
      "else echo direct-unreachable; fi; "
      "echo \"no_proxy=$NO_PROXY\"";
  auto r = env.run({"run", "-v", "--keep", "--network", "allow:host.corral.internal:" + port + ",127.0.0.1:" + port,
                    "--lease-output", h.string(), "--", "sh", "-c", script});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out == "reached /plain [0]\nreached /tunnel [0]\nreached /socks [0]\n403 [0]\n403 [0]\n"
                 "direct-unreachable\nno_proxy=localhost,127.0.0.1,::1\n");
  // -v lists what was reached and what was refused, with why.
  CHECK(r.err.find("egress allowed: host.corral.internal:" + port + " ×2") != std::string::npos);
  CHECK(r.err.find("egress refused: localhost:" + port + " ×1: not in the allow list") != std::string::npos);

  auto handle = parse(read_file(h));
  CHECK(std::string(handle["network"].GetString()) ==
        "allow:host.corral.internal:" + port + ",127.0.0.1:" + port);
  const auto& allowed = handle["egress"]["allowed"];
  REQUIRE(allowed.Size() == 2);
  CHECK(std::string(allowed[0]["host"].GetString()) == "127.0.0.1");
  CHECK(allowed[0]["count"].GetInt() == 1);
  CHECK(std::string(allowed[1]["host"].GetString()) == "host.corral.internal");
  CHECK(allowed[1]["port"].GetInt() == server.port());
  CHECK(allowed[1]["count"].GetInt() == 2);
  const auto& refused = handle["egress"]["refused"];
  REQUIRE(refused.Size() == 2);
  CHECK(std::string(refused[1]["host"].GetString()) == "localhost");
  CHECK(std::string(refused[1]["reason"].GetString()) == "not in the allow list");

  // A later command in the kept sandbox goes through the same list; status adds up both.
  const std::string lease = handle["leaseId"].GetString();
  auto again = env.run({"run", "--id", lease, "--", "curl", "-sS", "--noproxy", "", "http://127.0.0.1:" + port + "/again"});
  CHECK_MESSAGE(again.exit_code == 0, again.err);
  CHECK(again.out == "reached /again");
  auto status = parse(env.run({"status", "--id", lease, "--json"}).out);
  CHECK(std::string(status["sandbox"]["details"]["network"].GetString()) ==
        "allow:host.corral.internal:" + port + ",127.0.0.1:" + port);
  REQUIRE(status["sandbox"].HasMember("egress"));
  CHECK(status["sandbox"]["egress"]["allowed"][0]["count"].GetInt() == 2);
  CHECK(status["sandbox"]["egress"]["refused"].Size() == 2);
  CHECK(env.run({"stop", "--id", lease}).exit_code == 0);
  CHECK(server.paths() == std::vector<std::string>{"/plain", "/tunnel", "/socks", "/again"});
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("local allow: a name that leads to this machine's loopback is refused unless its address is listed too") {
  CliEnv env;
  HttpResponder server;
  const std::string port = std::to_string(server.port());
  const std::string probe = "curl -sS --noproxy '' -o /dev/null -w '%{http_code}\\n' http://localhost:" + port + "/";
  fs::path h = env.root().path() / "h.json";
  auto name_only = env.run({"run", "--network", "allow:localhost:" + port, "--lease-output", h.string(), "--", "sh",
                            "-c", probe});
  CHECK(name_only.out == "403\n");
  CHECK(std::string(parse(read_file(h))["egress"]["refused"][0]["reason"].GetString()) ==
        "resolves to a loopback, link-local or private address the allow list does not name");
  auto with_address =
      env.run({"run", "--network", "allow:localhost:" + port + ",127.0.0.1:" + port, "--", "sh", "-c", probe});
  CHECK(with_address.out == "200\n");
  // An entry without a port means 80 and 443 only.
  auto no_port = env.run({"run", "--network", "allow:localhost,127.0.0.1", "--", "sh", "-c", probe});
  CHECK(no_port.out == "403\n");
  CHECK(server.paths() == std::vector<std::string>{"/"});
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("local allow: git and Python's urllib find the proxy in the environment; nothing else reaches out") {
  CliEnv env;
  HttpResponder server;
  const std::string url = "http://host.corral.internal:" + std::to_string(server.port());
  std::string script = "git ls-remote " + url + "/repo.git >/dev/null 2>&1; echo git-done; ";
  const bool python = fs::exists("/usr/bin/python3");
  if (python)
    script += "/usr/bin/python3 -c 'import urllib.request as u; print(u.urlopen(\"" + url +
              "/py\").read().decode())'; ";
  auto r = env.run({"run", "--network", "allow:host.corral.internal:" + std::to_string(server.port()), "--", "sh",
                    "-c", script});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out == std::string("git-done\n") + (python ? "reached /py\n" : ""));
  REQUIRE_FALSE(server.paths().empty());
  CHECK(server.paths().front() == "/repo.git/info/refs?service=git-upload-pack");
}

TEST_CASE("local --secret: the upstream gets the value; in the jail only its placeholder exists, in env, files and answers") {
  CliEnv env;
  corral::test::HttpsUpstream upstream("host.corral.internal");
  const std::string value = "sk-test-4Qz9Real8Value7Kept6Out5";
  env.env["API_KEY"] = value;
  env.env["CORRAL_EGRESS_CA_FILE"] = upstream.ca_file();
  const std::string port = std::to_string(upstream.port());
  const std::string url = "https://host.corral.internal:" + port;
  std::string script =
      "curl -sS --max-time 20 -H \"Authorization: Bearer $API_KEY\" " + url + "/curl; echo \" [$?]\"; "
      "echo \"key=$API_KEY\"; "
      "echo \"$API_KEY\" > /tmp/copy; cp /tmp/copy ./copy; "
      "curl -sS --max-time 20 -o /dev/null -w '%{http_code}\\n' http://host.corral.internal:" + port + "/plain; "
      "git -c http.extraHeader=\"Authorization: Bearer $API_KEY\" ls-remote " + url + "/repo.git >/dev/null 2>&1; "
      "echo git-done; ";
  // Node: its fetch ignores the proxy variables, so the script tunnels as a proxy agent
  // does; what it shows is that Node trusts the jail's CA (NODE_EXTRA_CA_CERTS).
  const bool node = fs::exists("/usr/bin/node");
  if (node) {
    env.root().write("work/tunnel.js",
                     "const http = require('http'), tls = require('tls');\n"
                     "const proxy = new URL(process.env.HTTPS_PROXY), port = " + port + ";\n"
                     "http.request({host: proxy.hostname, port: proxy.port, method: 'CONNECT',\n"
                     "              path: 'host.corral.internal:' + port}).on('connect', (res, socket) => {\n"
                     "  const s = tls.connect({socket, servername: 'host.corral.internal'}, () => s.write(\n"
                     "    'GET /node HTTP/1.1\\r\\nHost: host.corral.internal:' + port + '\\r\\nAuthorization: Bearer ' +\n"
                     "    process.env.API_KEY + '\\r\\nConnection: close\\r\\n\\r\\n'));\n"
                     "  let d = ''; s.on('data', c => d += c);\n"
                     "  s.on('end', () => console.log(d.split('\\r\\n\\r\\n')[1]));\n"
                     "  s.on('error', e => console.log('node: ' + e.message));\n"
                     "}).end();\n");
    script += "/usr/bin/node tunnel.js; ";
  }
  const bool python = fs::exists("/usr/bin/python3");
  if (python)
    script += "/usr/bin/python3 -c 'import os, urllib.request as u; print(u.urlopen(u.Request(\"" + url +
              "/py\", headers={\"Authorization\": \"Bearer \" + os.environ[\"API_KEY\"]})).read().decode())'; ";
  // Everything the jail's command could read or write: its environment and its folders.
  script += "cat /proc/self/environ /tmp/copy ./copy | grep -c -F '" + value + "'; "
            "grep -r -l -F '" + value + "' /workspace /tmp /run 2>/dev/null | wc -l";
  fs::path h = env.root().path() / "h.json";
  auto r = env.run({"run", "-v", "--network", "allow:host.corral.internal:" + port, "--secret",
                    "API_KEY=host.corral.internal", "--lease-output", h.string(), "--", "sh", "-c", script});
  // The script itself holds the value (to search for it): only its argv may, and only
  // because the test wrote it there.
  const std::string out = r.out;
  const size_t key_at = out.find("key=");
  REQUIRE_MESSAGE(key_at != std::string::npos, r.err);
  const std::string placeholder = out.substr(key_at + 4, out.find('\n', key_at) - key_at - 4);
  CHECK(placeholder.size() == value.size());
  CHECK(placeholder.rfind("sk-test-", 0) == 0);
  CHECK(placeholder != value);
  const std::string echoed = "you sent Bearer " + placeholder + "\n";
  CHECK(out == "you sent Bearer " + placeholder + " [0]\nkey=" + placeholder + "\n403\ngit-done\n" +
                   (node ? echoed : std::string()) + (python ? echoed : std::string()) + "0\n0\n");
  CHECK(r.err.find(value) == std::string::npos);
  CHECK(read_file(h).find(value) == std::string::npos);
  // The server got the value each time, never the placeholder.
  const std::vector<std::string> heads = upstream.heads();
  // curl's, then git's (one or more: a dumb-protocol fallback), then Node's and Python's.
  REQUIRE(heads.size() >= 2u + node + python);
  for (const std::string& head : heads) {
    CHECK(head.find("Authorization: Bearer " + value + "\r\n") != std::string::npos);
    CHECK(head.find(placeholder) == std::string::npos);
  }
  CHECK(heads.front().rfind("GET /curl HTTP/1.1\r\n", 0) == 0);
  CHECK(heads[1].rfind("GET /repo.git/info/refs?service=git-upload-pack HTTP/1.1\r\n", 0) == 0);
  if (python) CHECK(heads.back().rfind("GET /py HTTP/1.1\r\n", 0) == 0);
  if (node) CHECK(heads[heads.size() - 1 - python].rfind("GET /node HTTP/1.1\r\n", 0) == 0);
  auto handle = parse(read_file(h));
  CHECK(std::string(handle["network"].GetString()) == "allow:host.corral.internal:" + port);
  CHECK(handle["egress"]["allowed"][0]["count"].GetInt() == static_cast<int>(heads.size()));
  CHECK(std::string(handle["egress"]["refused"][0]["reason"].GetString()).find("plain HTTP to a secret's host") !=
        std::string::npos);

  // Declared in the user's own config, used by name: the value from a file beside it.
  const std::string from_file = "sk-file-7Other6Value5From4File3";
  env.root().write("config/corral/key.txt", from_file + "\n");
  env.root().write("config/corral/config.yaml",
                   "secrets:\n  TOKEN:\n    hosts: [host.corral.internal]\n    from: file:key.txt\n");
  auto declared = env.run({"run", "--network", "allow:host.corral.internal:" + port, "--secret", "TOKEN", "--", "sh",
                           "-c", "curl -sS --max-time 20 -H \"Authorization: Bearer $TOKEN\" " + url + "/declared"});
  CHECK_MESSAGE(declared.exit_code == 0, declared.err);
  CHECK(declared.out.find(from_file) == std::string::npos);
  REQUIRE(upstream.heads().size() == heads.size() + 1);
  CHECK(upstream.heads().back().find("Authorization: Bearer " + from_file + "\r\n") != std::string::npos);
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("--secret is refused before anything is created where it cannot be kept out of the sandbox") {
  SUBCASE("a provider without egress-secrets, naming local") {
    Testbox tb;
    tb.env["API_KEY"] = "abcdefgh12345678";
    auto r = tb.run({"run", "--provider", "testbox", "--network", "allow:10.0.0.0/8", "--secret", "API_KEY=a.example",
                     "--", "true"});
    CHECK(r.exit_code == 64);
    CHECK(r.err.find("--secret needs the 'egress-secrets' feature, which provider 'testbox' does not have") !=
          std::string::npos);
    CHECK(r.err.find("local") != std::string::npos);
    CHECK(fs::is_empty(tb.boxes));
    CHECK(lease_files(tb).empty());
  }
  SUBCASE("no allow list, a value also forwarded with --env, or none set") {
    CliEnv env;
    env.env["API_KEY"] = "abcdefgh12345678";
    auto open = env.run({"run", "--secret", "API_KEY=a.example", "--", "true"});
    CHECK(open.exit_code == 64);
    CHECK(open.err.find("--secret needs --network allow:") != std::string::npos);
    auto both = env.run({"run", "--network", "allow:a.example", "--secret", "API_KEY=a.example", "--env", "API_KEY",
                         "--", "true"});
    CHECK(both.exit_code == 64);
    CHECK(both.err.find("API_KEY is both a --secret and an --env") != std::string::npos);
    auto unset = env.run({"run", "--network", "allow:a.example", "--secret", "NOT_SET=a.example", "--", "true"});
    CHECK(unset.exit_code == 64);
    CHECK(unset.err.find("NOT_SET is not set in your environment") != std::string::npos);
    for (const auto* r : {&open, &both, &unset}) CHECK(r->err.find("abcdefgh12345678") == std::string::npos);
    CHECK(env.local_sandboxes().empty());
    CHECK(lease_files(env).empty());
  }
}

TEST_CASE("a --network that is no policy is a usage error with the accepted forms") {
  CliEnv env;
  auto r = env.run({"run", "--network", "sometimes", "--", "true"});
  CHECK(r.exit_code == 64);
  CHECK(r.err.find("unknown network policy 'sometimes'") != std::string::npos);
  CHECK(r.err.find("--network allow:example.com,10.0.0.0/8") != std::string::npos);
  auto bad_entry = env.run({"warmup", "--network", "allow:http://x"});
  CHECK(bad_entry.exit_code == 64);
  CHECK(bad_entry.err.find("'http://x'") != std::string::npos);
  CHECK(env.local_sandboxes().empty());
  CHECK(lease_files(env).empty());
}

TEST_CASE("the policy reaches the provider's create and is recorded in the claim and the handle") {
  Testbox tb;
  std::string lease = tb.keep({"--network", "allow:pypi.org,10.0.0.0/8"});
  CHECK(tb.network_of(lease) == "allow:pypi.org,10.0.0.0/8");
  CHECK(std::string(parse(read_file(tb.h))["network"].GetString()) == "allow:pypi.org,10.0.0.0/8");
  auto claim = parse(read_file(tb.state_dir() / "corral" / "leases" / (lease + ".json")));
  CHECK(std::string(claim["network"].GetString()) == "allow:pypi.org,10.0.0.0/8");
  // A reused lease hands back its recorded policy; the same --network (in any order) is accepted.
  auto reuse = tb.run({"run", "--id", lease, "--network", "allow:10.0.0.0/8,pypi.org", "--lease-output", tb.h.string(),
                       "--", "true"});
  CHECK_MESSAGE(reuse.exit_code == 0, reuse.err);
  CHECK(std::string(parse(read_file(tb.h))["network"].GetString()) == "allow:pypi.org,10.0.0.0/8");
  auto other = tb.run({"run", "--id", lease, "--network", "allow:pypi.org", "--", "true"});
  CHECK(other.exit_code == 64);
  CHECK(other.err.find("was created with --network allow:pypi.org,10.0.0.0/8, not allow:pypi.org") !=
        std::string::npos);

  std::string plain = tb.keep();
  CHECK(tb.network_of(plain) == "open");
  CHECK_FALSE(parse(read_file(tb.h)).HasMember("network"));
  CHECK(tb.run({"stop", "--all"}).exit_code == 0);
}

TEST_CASE("a repository's corral.yaml may tighten the user's network policy but never loosen it") {
  Testbox tb;
  tb.root().write("config/corral/config.yaml", "network:\n  testbox: none\n");
  tb.root().write("work/corral.yaml", "network: open\n");
  std::string lease = tb.keep();
  CHECK(tb.network_of(lease) == "none");
  CHECK(tb.last.err.find("asks for network 'open', which is looser than 'none'") != std::string::npos);

  tb.root().write("config/corral/config.yaml", "network: 'allow:a.example.com,b.example.com'\n");
  tb.root().write("work/corral.yaml", "network: 'allow:b.example.com,evil.example.net'\n");
  CHECK(tb.network_of(tb.keep()) == "allow:a.example.com,b.example.com");
  tb.root().write("work/corral.yaml", "network: 'allow:b.example.com'\n");
  CHECK(tb.network_of(tb.keep()) == "allow:b.example.com");
  CHECK(tb.last.err.find("looser") == std::string::npos);

  // Without a user policy the repository's applies; the user's flag beats both.
  fs::remove(tb.config_dir() / "corral" / "config.yaml");
  tb.root().write("work/corral.yaml", "network: none\n");
  CHECK(tb.network_of(tb.keep()) == "none");
  CHECK(tb.network_of(tb.keep({"--network", "open"})) == "open");
  CHECK(tb.run({"stop", "--all"}).exit_code == 0);
}

TEST_CASE("a repository's corral.yaml cannot loosen a provider's own isolation setting (local's network) either") {
  CliEnv env;
  LoopbackListener server;
  env.root().write("config/corral/config.yaml", "local: {network: none}\n");
  env.root().write("work/corral.yaml", "local: {network: shared}\n");
  auto r = env.run({"run", "--", "sh", "-c", server.probe_script()});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out == "unreachable\n");
  CHECK_MESSAGE(r.err.find("sets local.network: shared, which is looser than 'none'") != std::string::npos, r.err);
  // Tightening is the repository's to do, and the user's own flag beats both.
  env.root().write("config/corral/config.yaml", "");
  env.root().write("work/corral.yaml", "local: {network: none}\n");
  r = env.run({"run", "--", "sh", "-c", server.probe_script()});
  CHECK(r.out == "unreachable\n");
  CHECK(r.err.find("looser") == std::string::npos);
  r = env.run({"run", "--local-network", "shared", "--", "sh", "-c", server.probe_script()});
  CHECK(r.out == "reached\n");
}

TEST_CASE("a provider without network features is refused any policy but open, listing those that have it") {
  CliEnv env;
  // Docker Sandboxes' sbx has no network option: the refusal comes before sbx is ever run.
  const fs::path marker = env.root().path() / "sbx-ran";
  const fs::path sbx = env.root().write("bin/sbx", "#!/bin/sh\ntouch '" + marker.string() + "'\nexit 1\n");
  fs::permissions(sbx, fs::perms::owner_all);
  env.env["CORRAL_SBX_CLI"] = sbx.string();
  auto r = env.run({"run", "--provider", "docker-sandbox", "--network", "none", "--", "true"});
  CHECK(r.exit_code == 64);
  CHECK(r.err.find("network policy 'none' needs the 'network-policy' feature, which provider 'docker-sandbox' does "
                   "not have") != std::string::npos);
  CHECK(r.err.find("providers that have it: ") != std::string::npos);
  for (const char* able : {"daytona", "e2b", "local"}) CHECK(r.err.find(able) != std::string::npos);
  CHECK(lease_files(env).empty());
  CHECK_FALSE(fs::exists(marker));
}
