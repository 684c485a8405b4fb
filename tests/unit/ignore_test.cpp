#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "cli.hpp"
#include "corral/os/process.hpp"
#include "corral/types.hpp"
#include "workspace/ignore.hpp"

namespace fs = std::filesystem;
using corral::IgnoreRules;

TEST_CASE(".corralignore follows gitignore semantics") {
  IgnoreRules r = IgnoreRules::parse(
      "# comment\n"
      "*.log\n"
      "build/\n"
      "/top.txt\n"
      "docs/**/*.pdf\n"
      "!keep.log\n"
      "data/\n"
      "!data/keep.csv\n");
  CHECK(r.ignored("a.log"));
  CHECK(r.ignored("deep/in/b.log"));
  CHECK_FALSE(r.ignored("keep.log"));
  CHECK(r.ignored("build/out.o"));
  CHECK(r.ignored("sub/build/out.o"));
  CHECK_FALSE(r.ignored("build"));  // a file called build is not the folder
  CHECK(r.ignored("top.txt"));
  CHECK_FALSE(r.ignored("sub/top.txt"));
  CHECK(r.ignored("docs/a/b/c.pdf"));
  CHECK(r.ignored("docs/c.pdf"));
  CHECK_FALSE(r.ignored("docs/c.md"));
  // Like git: a file inside an excluded folder cannot be re-included.
  CHECK(r.ignored("data/keep.csv"));
  CHECK_FALSE(r.ignored("src/main.cpp"));
}

TEST_CASE("character classes and escapes") {
  IgnoreRules r = IgnoreRules::parse("file[0-9].txt\n\\#hash\nsp?ce\n");
  CHECK(r.ignored("file7.txt"));
  CHECK_FALSE(r.ignored("fileA.txt"));
  CHECK(r.ignored("#hash"));
  CHECK(r.ignored("space"));
  CHECK_FALSE(r.ignored("sp/ce"));
}

TEST_CASE("a pattern that backtracks exponentially in a regex matches in linear time") {
  // std::regex took minutes here and ignored Ctrl-C; a hang would trip ctest's timeout.
  IgnoreRules r = IgnoreRules::parse(std::string(20, '*') + "x\n" + "a*a*a*a*a*a*a*a*a*a*a*a*b/\n");
  std::string path(4000, 'a');
  CHECK_FALSE(r.ignored(path));
  CHECK(r.ignored(path + "x"));
  CHECK_FALSE(r.ignored(path + "/" + path, true));
  CHECK(r.ignored(path + "b/file"));
  std::string deep;
  for (int i = 0; i < 500; ++i) deep += "aaaaaaaa/";
  IgnoreRules stars = IgnoreRules::parse("**/a*a*a*a*a*a*/**/a*a*a*a*a*a*c\n");
  CHECK_FALSE(stars.ignored(deep + "aaaaaaaaaaaaaaaaaaaa"));
  CHECK(stars.ignored(deep + "aaaaaaaaaaaaaaaac"));
}

TEST_CASE("a malformed pattern is an error naming the file and line") {
  CHECK_THROWS_WITH_AS(IgnoreRules::parse("ok\n# fine\n\nfoo[ab\n", "/w/.corralignore"),
                       doctest::Contains("/w/.corralignore:4: unterminated '[' class in pattern 'foo[ab'"),
                       corral::Error);
  CHECK_THROWS_WITH_AS(IgnoreRules::parse("a\r\nb[[:alpah:]]\r\n", "x"),
                       doctest::Contains("x:2: unknown character class"),
                       corral::Error);
  CHECK_THROWS_WITH_AS(IgnoreRules::parse("trailing\\", "x"), doctest::Contains("x:1: trailing '\\'"), corral::Error);
  try {
    IgnoreRules::parse("[", "f");
    FAIL("no error");
  } catch (const corral::Error& e) {
    CHECK(e.code() == corral::ErrorCode::invalid_argument);
  }
  // Closed classes, including the git forms that look odd, are fine.
  CHECK_NOTHROW(IgnoreRules::parse("[]]\n[!]]\n[[:x]\n[a-]\n[\\]]\n"));
}

namespace {

struct ParityCase {
  const char* patterns;
  std::vector<std::string> paths;  // a trailing '/' makes a folder
};

// The paths of `paths` that `git check-ignore --no-index` reports ignored under a
// .gitignore holding `patterns`, in a fresh repository with no user or system config.
std::set<std::string> git_ignored(const std::string& patterns, const std::vector<std::string>& paths) {
  corral::test::TempDir t;
  const fs::path repo = t.path() / "repo";
  fs::create_directories(repo);
  std::vector<std::string> env = {"HOME=" + t.str(), "XDG_CONFIG_HOME=" + t.str(), "GIT_CONFIG_NOSYSTEM=1",
                                  "PATH=" + std::string(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin")};
  auto git = [&](std::vector<std::string> args, const std::string& stdin_path = "/dev/null") {
    args.insert(args.begin(), "git");
    corral::os::ProcessSpec spec{args, env, repo.string()};
    spec.stdin_path = stdin_path;
    return corral::os::capture_process(spec, 60);
  };
  REQUIRE(git({"init", "-q"}).exit_code == 0);
  t.write("repo/.gitignore", patterns);
  std::string input;
  for (const std::string& p : paths) {
    if (p.back() == '/') {
      fs::create_directories(repo / p);
      input += p.substr(0, p.size() - 1);
    } else {
      t.write("repo/" + p, "");
      input += p;
    }
    input += '\0';
  }
  const fs::path list = t.write("paths", input);
  auto out = git({"check-ignore", "--no-index", "-z", "--stdin"}, list.string());
  REQUIRE_MESSAGE((out.exit_code == 0 || out.exit_code == 1), out.err);  // 1: nothing ignored
  std::set<std::string> ignored;
  std::string_view rest = out.out;
  while (!rest.empty()) {
    std::size_t nul = rest.find('\0');
    ignored.emplace(rest.substr(0, nul));
    if (nul == std::string_view::npos) break;
    rest.remove_prefix(nul + 1);
  }
  return ignored;
}

}  // namespace

TEST_CASE("matches what git check-ignore says for the same patterns and paths") {
  if (corral::os::find_program("git").empty()) {
    MESSAGE("git not installed: parity with git not checked");
    return;
  }
  // Paths never start with ':', which git reads as pathspec magic.
  const std::vector<ParityCase> cases = {
      {"# c\n*.log\n!keep.log\nbuild/\n/top.txt\ndocs/**/*.pdf\ndata/\n!data/keep.csv\n",
       {"a.log", "deep/in/b.log", "keep.log", "build/", "build/out.o", "sub/build/out.o", "top.txt", "sub/top.txt",
        "docs/a/b/c.pdf", "docs/c.pdf", "docs/c.md", "data/keep.csv", "src/main.cpp", "deep/keep.log"}},
      {"**/foo\nabc/**\na/**/b\nx**y\n**/deep/**\nm/**/n/**/o\n",
       {"foo", "in/foo", "in/side/foo", "abc/q", "abc/r/s", "abcd/q", "a/b", "a/x/b", "a/x/y/b", "ab", "xzzy", "xz/zy",
        "p/deep/q", "deep/r", "deeper/s", "m/n/o", "m/1/n/2/o", "m/n/1/x"}},
      {"file[0-9].txt\n[!a-c]x\n[]]z\n[[:digit:]]d\n[a-]m\n\\#hash\n\\!bang\nsp?ce\nsp\\ \ntrail   \n[\\]]e\n"
       "a[[:x]y\n[^q]r\n",
       {"file7.txt", "fileA.txt", "ax", "dx", "]z", "5d", "ad", "-m", "am", "bm", "#hash", "!bang", "space", "sp ",
        "sp/ce", "trail", "]e", "a[y", "a:y", "axy", "aby", "qr", "pr"}},
      {"/a/b\nc/d\n*/e\nf/*\ng/h/\nh*/i*j\nq?r/s\n",
       {"a/b", "x/a/b", "c/d", "x/c/d", "y/e", "y/z/e", "f/g1", "f/g2/h", "g/h/", "g/h2", "k/g/h/", "h1/i9j",
        "h1/2/i9j", "hh/i/j", "q/r/s", "qxr/s"}},
      {"out/\n!out/\nlib*\n!libkeep\n*.tmp/\nsrc/\n!src/main.c\n",
       {"out/x", "libfoo", "libkeep", "t.tmp", "d.tmp/f", "src/main.c", "src/other.c"}},
      {"a*b*c\n***z\n**q\n*\n!*.c\n!*/\n",
       {"abc", "axxbyyc", "ab/c", "z", "xz", "yy/z", "q", "dir/q", "keep.c", "d/x"}},
  };
  for (const ParityCase& c : cases) {
    CAPTURE(c.patterns);
    IgnoreRules rules = IgnoreRules::parse(c.patterns);
    std::set<std::string> git = git_ignored(c.patterns, c.paths);
    for (std::string path : c.paths) {
      const bool dir = path.back() == '/';
      if (dir) path.pop_back();
      CAPTURE(path);
      CHECK(rules.ignored(path, dir) == (git.count(path) == 1));
    }
  }
}
