// Checks of the run contract every provider keeps, whatever it advertises: exit codes, argv, output, the workspace,
// the working folder, the environment, --timeout and Ctrl-C.
#include "conformance/checks/checks.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "base/printable.hpp"
#include "base/hash.hpp"

namespace corral::conformance {

namespace {

constexpr int kLargeRepeats = 800;     // 800 x 64 KiB = 50 MiB on stdout...
constexpr int kLargeStderrEvery = 10;  // ...and 5 MiB on stderr, interleaved with it
constexpr std::int64_t kPromptSeconds = 30;  // how long Ctrl-C and --timeout may take to act

// Runs a printer of its arguments with `words` and fails naming the first argument
// that came back otherwise; with `refusable`, a refusal (invalid-argument) is fine.
void expect_argv(CheckContext& cx, const std::vector<std::string>& words, const std::string& refusable);

void lifecycle(CheckContext& cx) {
  Observed o = cx.kit.run({.shell = "echo conformance"});
  o.expect_exit(0);
  o.expect_out("conformance\n");
  o.expect_err("");
  if (o.handle().exit_code != 0) fail("the session handle does not record exit code 0");
  cx.kit.expect_cleaned_up(o);
}

void exit_codes(CheckContext& cx) {
  for (int code : {1, 42, 255}) {
    Observed o = cx.kit.run({.shell = fmt::format("exit {}", code)});
    o.expect_exit(code);
    if (o.handle().exit_code != code) fail(fmt::format("the session handle does not record exit code {}", code));
  }
}

// Arguments the way a generator of command lines writes them: the characters a shell,
// an argument parser or a JSON encoder could take for its own, spaces, newlines, empty
// words and leading dashes, then more of the same from a seeded generator (so a failure
// comes back the same). Each comes back NUL-terminated, so empty words show too.
void argv_exact(CheckContext& cx) {
  std::vector<std::string> words = {"[x]",  "a[1]", "[a,b]", "[]",     "{}",   "",          "--",  "-n",
                                    "--keep", "a b", " lead", "trail ", "a\nb", "tab\there", "'",   "\"",
                                    "\\",   "$HOME", "${PATH}", "$(id)", "`id`", "*",       "?.txt", "~",
                                    "a=b",  "%s",   ";",     "&&",     "|",    "#comment", "caf\xc3\xa9",
                                    "\xe2\x80\xae"};
  static const char* const kPieces[] = {"[", "]", ",", "{", "}", "-", "=", " ", "\n", "'", "\"", "\\", "$",
                                        "*", "?", "x", "\xc3\xa9", "!", "#", "&", "|", ";", "<", ">", "%"};
  std::uint32_t state = 2463534242u;
  for (int i = 0; i < 24; ++i) {
    std::string w;
    for (std::uint32_t n = (state ^= state << 13, state ^= state >> 17, state ^= state << 5) % 6; n > 0; --n)
      w += kPieces[(state ^= state << 13, state ^= state >> 17, state ^= state << 5) % std::size(kPieces)];
    words.push_back(w);
  }
  expect_argv(cx, words, "");
  // Bytes that are not UTF-8 (a file name's): they arrive as they are, or the provider
  // refuses them; never other bytes.
  expect_argv(cx, {"\xff\xfe", "a\x80" "b"}, "not UTF-8");
}

// Runs a printer of its arguments with `words` and fails naming the first argument
// that came back otherwise; with `refusable`, a refusal (invalid-argument) is fine.
void expect_argv(CheckContext& cx, const std::vector<std::string>& words, const std::string& refusable) {
  std::vector<std::string> argv = {"/bin/sh", "-c", "for a; do printf '%s\\0' \"$a\"; done", "sh"};
  argv.insert(argv.end(), words.begin(), words.end());
  Observed o = cx.kit.run({.argv = argv});
  if (!refusable.empty() && o.result.error && o.result.error->code() == ErrorCode::invalid_argument &&
      o.out.empty())
    return;
  const std::string how =
      "the command was run as an argv: /bin/sh -c 'for a; do printf ...; done' sh ARGS...; a plugin that joins an "
      "argv into one shell string, or changes bytes on the way, gets this";
  if (!o.result.handle || o.result.exit_code != 0)
    fail(fmt::format("the printer of its {} arguments exited {} instead of printing them{} ({})", words.size(),
                     o.result.exit_code, o.err.empty() ? std::string() : ", saying " + literal(o.err), how) +
         o.why());
  std::vector<std::string> got;
  for (std::size_t start = 0; start < o.out.size();) {
    const std::size_t end = o.out.find('\0', start);
    got.push_back(o.out.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  for (std::size_t i = 0; i < words.size(); ++i)
    if (i >= got.size() || got[i] != words[i])
      fail(fmt::format("argument {} of {} came back as {}, not {} ({})", i + 1, words.size(),
                       i < got.size() ? literal(got[i]) : "nothing", literal(words[i]), how));
  if (got.size() != words.size())
    fail(fmt::format("{} arguments came back, not {}", got.size(), words.size()));
}

void output_separate(CheckContext& cx) {
  Observed o = cx.kit.run({.shell = "printf 'out-1\\n'; printf 'err-1\\n' >&2; printf 'out-2'; printf 'err-2' >&2"});
  o.expect_exit(0);
  o.expect_out("out-1\nout-2");
  o.expect_err("err-1\nerr-2");
}

void output_binary(CheckContext& cx) {
  Observed o = cx.kit.run({.shell = "cat blob.bin"});
  o.expect_exit(0);
  const std::string blob = blob_bytes();
  if (o.out_size != blob.size()) fail(fmt::format("stdout had {} bytes, expected {}", o.out_size, blob.size()));
  if (o.out != blob) {
    std::size_t at = 0;
    while (at < blob.size() && o.out[at] == blob[at]) ++at;
    fail(fmt::format("stdout differs from the file's bytes from offset {} on", at));
  }
}

void output_large(CheckContext& cx) {
  const std::string blob = blob_bytes();
  Sha256 out_hash, err_hash;
  for (int i = 0; i < kLargeRepeats; ++i) {
    out_hash.update(blob);
    if (i % kLargeStderrEvery == 0) err_hash.update(blob);
  }
  const std::string script = fmt::format(
      "i=0; while [ $i -lt {} ]; do cat blob.bin; if [ $((i % {})) -eq 0 ]; then cat blob.bin >&2; fi; "
      "i=$((i+1)); done",
      kLargeRepeats, kLargeStderrEvery);
  Observed o = cx.kit.run({.shell = script});
  o.expect_exit(0);
  const std::uint64_t out_expected = std::uint64_t{kBlobSize} * kLargeRepeats;
  const std::uint64_t err_expected = std::uint64_t{kBlobSize} * (kLargeRepeats / kLargeStderrEvery);
  if (o.out_size != out_expected) fail(fmt::format("stdout had {} bytes, expected {}", o.out_size, out_expected));
  if (o.err_size != err_expected) fail(fmt::format("stderr had {} bytes, expected {}", o.err_size, err_expected));
  if (o.out_sha != out_hash.hex()) fail("stdout has the right size but not the right bytes (reordered or mixed)");
  if (o.err_sha != err_hash.hex()) fail("stderr has the right size but not the right bytes (reordered or mixed)");
}

void workspace(CheckContext& cx) {
  Observed o = cx.kit.run({.shell = "cat hello.txt 'sub/dir/nested file.txt' && ./tool.sh"});
  o.expect_exit(0);
  o.expect_out("hello\nnested\ntool ran\n");
}

void workdir(CheckContext& cx) {
  // A checkout of its own: git may not see the kit's other files as the user's would.
  Fixture checkout;
  if (std::string why = checkout.git_init(); !why.empty())
    skip(why + ": corral finds a workspace's top folder with git, so the kit cannot make a subfolder of one");
  Observed o = cx.kit.run({.shell = "cat 'dir/nested file.txt' && pwd && echo made > made-in-sub.txt",
                         .tree = &checkout,
                         .subdir = "sub"});
  o.expect_exit(0);
  const std::string prefix = "nested\n";
  const std::string pwd = o.out.rfind(prefix, 0) == 0 ? o.out.substr(prefix.size()) : "";
  if (pwd.empty()) fail(fmt::format("stdout was {}, expected the nested file and the folder", literal(o.out)));
  if (pwd.size() < 5 || pwd.compare(pwd.size() - 5, 5, "/sub\n") != 0)
    fail(fmt::format("the command ran in {}, not in a folder called sub (the one corral was started from)",
                     literal(pwd)));
  // An uploading provider runs the command on its copy: the user's own folder is untouched.
  if (fs::exists(checkout.root() / "sub" / "made-in-sub.txt") && cx.spec.features.has(Feature::archive_sync))
    fail("the command wrote into the user's own folder, not into the sandbox's copy of it");
}

void environment(CheckContext& cx) {
  Observed o = cx.kit.run({.shell = "env", .env_names = {PlantedEnv::kForwardedName}});
  o.expect_exit(0);
  const std::string forwarded = fmt::format("{}={}\n", PlantedEnv::kForwardedName, cx.planted.forwarded());
  if (!o.out_complete || o.out.find(forwarded) == std::string::npos)
    fail(fmt::format("{} was forwarded with --env but the command's environment lacks it",
                     PlantedEnv::kForwardedName));
  // Every secret-shaped variable of corral's environment is watched by Kit::run: one that
  // shows in `env`'s output fails there, named.
}

void timeout(CheckContext& cx) {
  Observed o = cx.kit.run({.shell = "echo started; sleep 120; echo not-reached", .timeout_seconds = 2});
  if (!o.result.error || o.result.error->code() != ErrorCode::timeout)
    fail(fmt::format("the run ended with exit code {}, expected a timeout (exit {})", o.result.exit_code,
                     kExitTimeout) +
         o.why());
  expect_stopped_in_time(o);
  if (o.result.exit_code != kExitTimeout) fail(fmt::format("exit code {}, expected {}", o.result.exit_code, kExitTimeout));
  if (o.out.find("not-reached") != std::string::npos) fail("the command ran on past its timeout");
  if (o.ms > (2 + kPromptSeconds) * 1000) fail(fmt::format("the run took {} ms to stop after a 2 s timeout", o.ms));
  cx.kit.expect_cleaned_up(o);
}

void output_streams(CheckContext& cx) {
  if (std::string why = cx.streaming_problem(); !why.empty()) fail(why);
}

void interrupt(CheckContext& cx) {
  // Ctrl-C is pressed when the output shows the command started; output that arrives only
  // at the end would make a plugin that stops at once look as if it ignored the Ctrl-C.
  if (std::string why = cx.streaming_problem(); !why.empty())
    fail("Ctrl-C could not be pressed while the command ran: " + why + " (see output-streams)");
  Observed o = cx.kit.run({.shell = "echo started; sleep 120; echo not-reached", .cancel_marker = "started"});
  if (!o.result.error || o.result.error->code() != ErrorCode::cancelled)
    fail(fmt::format("the run ended with exit code {} instead of being interrupted", o.result.exit_code) + o.why());
  expect_stopped_in_time(o);
  if (o.result.exit_code != kExitCancelled)
    fail(fmt::format("exit code {}, expected {}", o.result.exit_code, kExitCancelled));
  if (o.out.find("not-reached") != std::string::npos) fail("the command ran on after Ctrl-C");
  if (o.ms > kPromptSeconds * 1000) fail(fmt::format("the run took {} ms to stop after Ctrl-C", o.ms));
  cx.kit.expect_cleaned_up(o);
}

}  // namespace

std::vector<CheckDef> run_checks() {
  return {
      {"lifecycle", "a run creates a sandbox, runs the command and destroys the sandbox", {}, {}, &lifecycle},
      {"exit-codes", "exit codes 1, 42 and 255 come back unchanged", {}, {}, &exit_codes},
      {"argv", "the command's arguments arrive byte for byte: brackets, quotes, $, globs, spaces, newlines, empty "
               "words",
       {}, {}, &argv_exact},
      {"output-separate", "stdout and stderr arrive separately, byte for byte", {}, {}, &output_separate},
      {"output-binary", "binary output arrives intact: every byte value", {}, {}, &output_binary},
      {"output-large", "50 MiB on stdout and 5 MiB on stderr arrive complete and in order", {}, {},
       &output_large},
      {"output-streams", "output arrives as the command prints it, not when it ends", {}, {}, &output_streams},
      {"workspace", "the workspace arrives: nested, executable and binary files", {}, {}, &workspace},
      {"workdir", "the command runs in the sandbox's copy of the folder corral was started from", {}, {},
       &workdir},
      {"environment", "variables named with --env arrive; corral's environment and credential-shaped variables "
                      "(PROVIDER_API_TOKEN, *_KEY, GITHUB_TOKEN...) do not",
       {}, {},
       &environment},
      {"timeout", "--timeout stops the command with exit code 124 and removes the sandbox", {}, {}, &timeout},
      {"interrupt", "Ctrl-C stops the command with exit code 130 and removes the sandbox", {}, {},
       &interrupt},
  };
}

}  // namespace corral::conformance
