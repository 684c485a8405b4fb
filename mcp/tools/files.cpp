// sandbox_write_file, sandbox_read_file and sandbox_list_files: files in a started
// sandbox's workspace, through commands every provider can run (POSIX sh, printf, wc,
// head), so they work wherever sandbox_exec does. Paths are relative to the workspace;
// the host refuses absolute ones and "..", and the script refuses to follow a symbolic
// link anywhere along the path, so a file tool never reaches outside the workspace.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "base/printable.hpp"
#include "corral/errors.hpp"
#include "corral/sdk/base64.hpp"
#include "service/exec.hpp"
#include "tools.hpp"

namespace corral::mcp {
namespace {

constexpr std::size_t kMaxWrite = 8u << 20;     // bytes one sandbox_write_file may write
constexpr std::size_t kWriteChunk = 24 * 1024;  // raw bytes per command: at most 4x as printf text
constexpr int kMaxEntries = 1000;                // entries sandbox_list_files returns

// Walks folder $1 (relative, "." = the workspace) one part at a time from the workspace,
// refusing links and non-folders; with $2 = 1 it makes the missing parts.
constexpr std::string_view kWalk = R"(walk() {
  cur=.; old=$IFS; IFS=/; set -f
  for part in $1; do
    [ -n "$part" ] || continue
    cur=$cur/$part
    if [ -L "$cur" ]; then echo "corral: ${cur#./} is a symbolic link; the file tools do not follow links" >&2; exit 73; fi
    if [ ! -d "$cur" ]; then
      if [ -e "$cur" ]; then echo "corral: ${cur#./} is not a folder" >&2; exit 74; fi
      if [ "$2" = 1 ]; then mkdir -- "$cur" || exit 71
      else echo "corral: ${cur#./} does not exist" >&2; exit 75; fi
    fi
  done
  IFS=$old; set +f
}
case $0 in */*) dir=${0%/*} ;; *) dir=. ;; esac
)";

// $0 the file, $1 "new" or "append", $2 its bytes as a printf format.
constexpr std::string_view kWrite = R"(walk "$dir" 1
if [ -L "$0" ]; then echo "corral: $0 is a symbolic link; the file tools do not follow links" >&2; exit 73; fi
if [ -d "$0" ]; then echo "corral: $0 is a folder" >&2; exit 74; fi
if [ "$1" = new ]; then printf "$2" > "./$0"; else printf "$2" >> "./$0"; fi
)";

// $0 the file, $1 the most bytes to print: its size on a line, then its first bytes.
constexpr std::string_view kRead = R"(walk "$dir" 0
if [ -L "$0" ]; then echo "corral: $0 is a symbolic link; the file tools do not follow links" >&2; exit 73; fi
if [ ! -e "$0" ]; then echo "corral: $0 does not exist" >&2; exit 75; fi
if [ ! -f "$0" ]; then echo "corral: $0 is not a regular file" >&2; exit 74; fi
size=$(wc -c < "./$0") || exit 76
echo $size
head -c "$1" "./$0"
)";

// $0 the folder, $1 the most entries: "TYPE SIZE NAME\0" for each, then "more\0" if cut.
constexpr std::string_view kList = R"(walk "$0" 0
cd -- "./$0" || exit 74
n=0
for f in * .[!.]* ..?*; do
  [ -e "$f" ] || [ -L "$f" ] || continue
  n=$((n+1))
  if [ $n -gt "$1" ]; then printf 'more\000'; break; fi
  if [ -L "$f" ]; then t=link; s=0; elif [ -d "$f" ]; then t=dir; s=0
  elif [ -f "$f" ]; then t=file; s=$(wc -c < "$f"); else t=other; s=0; fi
  printf '%s %s %s\000' "$t" $s "$f"
done
)";

// `path` checked: relative to the workspace, normalised, no part starting with '-'.
std::string workspace_path(const std::string& path, bool root_ok) {
  if (root_ok && (path.empty() || path == ".")) return ".";
  if (auto problem = workdir_problem(path, /*relative_ok=*/true); problem || path.front() == '/')
    throw Error(ErrorCode::invalid_argument,
                fmt::format("path '{}' {}", printable(path.substr(0, 200)),
                            problem ? *problem : "is not relative to the workspace"),
                "give a path relative to the sandbox's workspace, e.g. 'src/main.c'");
  return path;
}

// `bytes` as a printf format that prints exactly them: printable ASCII as itself (% and
// backslash doubled), every other byte, and a leading '-', as a three-digit octal escape.
std::string printf_format(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c == '%') out += "%%";
    else if (c == '\\') out += "\\\\";
    else if (c >= 0x20 && c < 0x7f && !(i == 0 && c == '-')) out += static_cast<char>(c);
    else out += fmt::format("\\{:03o}", c);
  }
  return out;
}

// Runs `script` (after the walker) with `words` as $0, $1... in lease's sandbox, its
// stdout up to `max_stdout` bytes; a non-zero exit is the tool's error, in its words.
std::string run_script(ToolContext& ctx, const std::string& lease, std::string_view script,
                       std::vector<std::string> words, std::uint64_t max_stdout) {
  // At least a few KiB, so the script's own error message on stderr is never cut.
  CallUi step(std::max<std::uint64_t>(max_stdout, 4096), ctx.ui);
  service::ExecSpec spec;
  spec.lease = {lease, choice_of(ctx, "")};
  spec.argv = {"/bin/sh", "-c", std::string(kWalk) + std::string(script)};
  spec.argv.insert(spec.argv.end(), words.begin(), words.end());
  const int exit_code = service::exec(ctx.session, step, spec);
  if (exit_code != 0) {
    std::string why = step.stderr_text();
    while (!why.empty() && why.back() == '\n') why.pop_back();
    if (why.rfind("corral: ", 0) == 0) why.erase(0, 8);
    throw Error(exit_code == 75 ? ErrorCode::not_found : ErrorCode::invalid_argument,
                why.empty() ? fmt::format("the sandbox's shell failed with exit code {}", exit_code) : why);
  }
  std::optional<std::string> out = step.stdout_bytes_whole();
  if (!out) throw Error(ErrorCode::internal, "the sandbox printed more than was asked for");
  return *out;
}

std::string write_file(ToolContext& ctx, const json::Value* arguments) {
  const Args args(arguments, {"lease", "path", "content", "encoding"});
  const std::string lease = owned_lease(ctx, args.string("lease"));
  const std::string path = workspace_path(args.string("path"), /*root_ok=*/false);
  const std::string encoding = args.optional_string("encoding").value_or("utf-8");
  std::string content = args.optional_string("content").value_or("");
  if (encoding == "base64") {
    std::optional<std::string> decoded = sdk::base64_decode(content);
    if (!decoded)
      throw Error(ErrorCode::invalid_argument, "content is not valid base64", "encode the bytes as standard base64");
    content = std::move(*decoded);
  } else if (encoding != "utf-8") {
    throw Error(ErrorCode::invalid_argument, fmt::format("encoding '{}' is not one of utf-8, base64", printable(encoding)));
  }
  if (content.size() > kMaxWrite)
    throw Error(ErrorCode::invalid_argument, fmt::format("content is {} bytes; at most {} can be written at once", content.size(), kMaxWrite),
                "copy larger files in with the working tree (sandbox_start syncs the served folder)");
  std::size_t at = 0;
  do {
    const std::string_view chunk = std::string_view(content).substr(at, kWriteChunk);
    run_script(ctx, lease, kWrite, {path, at == 0 ? "new" : "append", printf_format(chunk)}, 0);
    at += chunk.size();
  } while (at < content.size());
  return json::text_of([&](json::Writer& w) {
    w.StartObject();
    json::write_string(w, "path", path);
    w.Key("size");
    w.Uint64(content.size());
    w.EndObject();
  });
}

std::string read_file(ToolContext& ctx, const json::Value* arguments) {
  const Args args(arguments, {"lease", "path"});
  const std::string lease = owned_lease(ctx, args.string("lease"));
  const std::string path = workspace_path(args.string("path"), /*root_ok=*/false);
  const std::uint64_t bound = ctx.limits.max_output;
  const std::string out = run_script(ctx, lease, kRead, {path, std::to_string(bound)}, bound + 32);
  const std::size_t newline = out.find('\n');
  std::uint64_t size = 0;
  const auto [end, ec] = newline == std::string::npos ? std::from_chars(out.data(), out.data(), size)
                                                      : std::from_chars(out.data(), out.data() + newline, size);
  if (newline == std::string::npos || ec != std::errc() || end != out.data() + newline)
    throw Error(ErrorCode::internal, "the sandbox answered the read in an unexpected form");
  const std::string_view content = std::string_view(out).substr(newline + 1);
  const bool text = json::is_valid_utf8(content);
  return json::text_of([&](json::Writer& w) {
    w.StartObject();
    json::write_string(w, "content", text ? std::string(content) : sdk::base64_encode(content));
    json::write_string(w, "encoding", text ? "utf-8" : "base64");
    w.Key("size");
    w.Uint64(size);
    w.Key("truncated");
    w.Bool(size > content.size());
    w.EndObject();
  });
}

std::string list_files(ToolContext& ctx, const json::Value* arguments) {
  const Args args(arguments, {"lease", "path"});
  const std::string lease = owned_lease(ctx, args.string("lease"));
  const std::string path = workspace_path(args.optional_string("path").value_or(""), /*root_ok=*/true);
  const std::string out = run_script(ctx, lease, kList, {path, std::to_string(kMaxEntries)}, 8u << 20);
  bool more = false;
  return json::text_of([&](json::Writer& w) {
    w.StartObject();
    w.Key("entries");
    w.StartArray();
    std::size_t at = 0;
    while (at < out.size()) {
      std::size_t end = out.find('\0', at);
      if (end == std::string::npos) end = out.size();
      const std::string_view record(out.data() + at, end - at);
      at = end + 1;
      if (record == "more") {
        more = true;
        continue;
      }
      const std::size_t a = record.find(' ');
      const std::size_t b = a == std::string_view::npos ? a : record.find(' ', a + 1);
      if (b == std::string_view::npos) continue;
      std::uint64_t size = 0;
      std::from_chars(record.data() + a + 1, record.data() + b, size);
      w.StartObject();
      json::write_string(w, "name", record.substr(b + 1));
      json::write_string(w, "type", record.substr(0, a));
      w.Key("size");
      w.Uint64(size);
      w.EndObject();
    }
    w.EndArray();
    w.Key("truncated");
    w.Bool(more);
    w.EndObject();
  });
}

#define CORRAL_MCP_LEASE_PATH \
  R"json("lease": {"type": "string", "description": "The lease sandbox_start returned"},)json" \
  R"json(    "path": {"type": "string", "description": "Relative to the sandbox's workspace; links are not followed")json"

}  // namespace

const Tool kWriteFileTool = {
    .name = "sandbox_write_file",
    .description = "Write a file in a started sandbox's workspace, making its folders; replaces what was there.",
    .input_schema = R"json({"type": "object", "additionalProperties": false, "required": ["lease", "path", "content"], "properties": {
    )json" CORRAL_MCP_LEASE_PATH R"json(},
    "content": {"type": "string", "description": "The file's content (at most 8 MiB)"},
    "encoding": {"type": "string", "enum": ["utf-8", "base64"], "description": "How content is given; default utf-8"}}})json",
    .output_schema = R"json({"type": "object", "required": ["path", "size"], "properties": {
    "path": {"type": "string"}, "size": {"type": "integer", "description": "Bytes written"}}})json",
    .call = write_file,
};

const Tool kReadFileTool = {
    .name = "sandbox_read_file",
    .description = "Read a file in a started sandbox's workspace: text as it is, other bytes as base64, "
                   "cut to the server's output bound.",
    .input_schema = R"json({"type": "object", "additionalProperties": false, "required": ["lease", "path"], "properties": {
    )json" CORRAL_MCP_LEASE_PATH R"json(}}})json",
    .output_schema = R"json({"type": "object", "required": ["content", "encoding", "size", "truncated"], "properties": {
    "content": {"type": "string"}, "encoding": {"type": "string", "enum": ["utf-8", "base64"]},
    "size": {"type": "integer", "description": "The file's whole size in bytes"},
    "truncated": {"type": "boolean", "description": "True when content holds only the file's first bytes"}}})json",
    .call = read_file,
};

const Tool kListFilesTool = {
    .name = "sandbox_list_files",
    .description = "List a folder in a started sandbox's workspace (its root by default): names, types and sizes.",
    .input_schema = R"json({"type": "object", "additionalProperties": false, "required": ["lease"], "properties": {
    )json" CORRAL_MCP_LEASE_PATH R"json(}}})json",
    .output_schema = R"json({"type": "object", "required": ["entries"], "properties": {
    "entries": {"type": "array", "items": {"type": "object", "required": ["name", "type", "size"], "properties": {
      "name": {"type": "string"}, "type": {"type": "string", "enum": ["file", "dir", "link", "other"]},
      "size": {"type": "integer"}}}},
    "truncated": {"type": "boolean", "description": "True when the folder holds more than 1000 entries"}}})json",
    .call = list_files,
};

}  // namespace corral::mcp
