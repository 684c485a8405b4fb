// The JSON shapes of the provider model's types (corral/types.hpp): as they cross the
// plugin ABI (wire.cpp, json.cpp) and where core shows them (the handle's egress report).
// A Sandbox's shape carries its secrets: the wire runs from a plugin back into the same
// plugin; storage and display use PublicSandbox.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "corral/sdk/hex.hpp"
#include "corral/shape.hpp"

namespace corral::shape {

template <>
struct Shape<EgressDestination> {
  static constexpr auto fields =
      std::tuple{field("host", &EgressDestination::host), field("port", &EgressDestination::port),
                 field("count", &EgressDestination::count), field("reason", &EgressDestination::reason, omitted)};
};

template <>
struct Shape<EgressReport> {
  static constexpr auto fields =
      std::tuple{field("allowed", &EgressReport::allowed), field("refused", &EgressReport::refused)};
};

template <>
struct Shape<Sandbox> {
  static constexpr auto fields =
      std::tuple{field("id", &Sandbox::id), field("state", &Sandbox::state), field("details", &Sandbox::details),
                 field("labels", &Sandbox::labels), field("secrets", &Sandbox::secrets, omitted),
                 field("egress", &Sandbox::egress, omitted)};
};

// A Sandbox without its secrets: listings, storage, the screen.
struct PublicSandbox {
  static bool empty(const Sandbox&) { return false; }
  static void write(json::Writer& w, const Sandbox& s) {
    Sandbox shown = s;
    shown.secrets.clear();
    write_object(w, shown);
  }
};
struct PublicSandboxes {
  static bool empty(const std::vector<Sandbox>& v) { return v.empty(); }
  static void write(json::Writer& w, const std::vector<Sandbox>& v) {
    w.StartArray();
    for (const Sandbox& s : v) PublicSandbox::write(w, s);
    w.EndArray();
  }
  static std::vector<Sandbox> read(const json::Value& v, const char* key) {
    return Codec<std::vector<Sandbox>>::read(v, key);
  }
};

// JSON text is UTF-8: an argument that is not (a file name's bytes, a binary key) also
// crosses in hex, every one of them, so the command gets its argv byte for byte. A plugin
// of an SDK from before reads "argv", where the bad bytes are U+FFFD.
struct ArgvHex {
  static void write(json::Writer& w, const Command& c) {
    if (std::all_of(c.argv.begin(), c.argv.end(), json::is_valid_utf8)) return;
    std::vector<std::string> encoded;
    for (const std::string& a : c.argv) encoded.push_back(sdk::hex_encode(a));
    w.Key("argvHex");
    Codec<std::vector<std::string>>::write(w, encoded);
  }
  static void read(const json::Value& object, Command& c, std::string_view) {
    const json::Value* v = json::find(object, "argvHex");
    if (!v) return;
    const std::vector<std::string> encoded = Codec<std::vector<std::string>>::read(*v, "argvHex");
    if (encoded.size() != c.argv.size())
      throw Error(ErrorCode::invalid_argument, "field 'argvHex' must hold as many arguments as 'argv'");
    for (size_t i = 0; i < encoded.size(); ++i)
      if (!sdk::hex_decode(encoded[i], c.argv[i]))
        throw Error(ErrorCode::invalid_argument, "field 'argvHex' holds an argument that is not hex");
  }
};

template <>
struct Shape<Secret> {
  static constexpr auto fields =
      std::tuple{field("name", &Secret::name, required), field("hosts", &Secret::hosts, required),
                 field("placeholder", &Secret::placeholder, required), field("value", &Secret::value, required),
                 field("header", &Secret::header), field("format", &Secret::format)};
};

template <>
struct Shape<Command> {
  static constexpr auto fields =
      std::tuple{field("argv", &Command::argv, omitted), custom<Command, ArgvHex>(),
                 field("shell", &Command::shell, omitted), field("cwd", &Command::cwd),
                 field("env", &Command::env), field("timeoutSeconds", &Command::timeout_seconds),
                 field("secrets", &Command::secrets, omitted), field("stdin", &Command::forward_stdin, omitted),
                 field("tty", &Command::tty, omitted)};
};

template <>
struct Shape<ExecResult> {
  // Required: a missing exit code must never read as success.
  static constexpr auto fields = std::tuple{field("exitCode", &ExecResult::exit_code, required),
                                            field("egress", &ExecResult::egress, omitted)};
};

template <>
struct Shape<CreateRequest> {
  static constexpr auto fields = std::tuple{field("leaseId", &CreateRequest::lease_id),
                                            field("slug", &CreateRequest::slug),
                                            field("labels", &CreateRequest::labels),
                                            field("workspace", &CreateRequest::workspace),
                                            field("network", &CreateRequest::network, omitted),
                                            field("idle", &CreateRequest::idle, omitted),
                                            field("ephemeral", &CreateRequest::ephemeral, omitted),
                                            field("workspaceBytes", &CreateRequest::workspace_bytes, omitted)};
};

template <>
struct Shape<TreeFile> {
  // Defaults omitted: a tree of thousands of files stays small.
  static constexpr auto fields = std::tuple{field("path", &TreeFile::path),
                                            field("executable", &TreeFile::executable, omitted),
                                            field("symlink", &TreeFile::symlink, omitted)};
  static void check(TreeFile& f, std::string_view what) {
    if (f.path.empty()) throw Error(ErrorCode::invalid_argument, std::string(what) + " has no 'path'");
  }
};

// A tree-sync upload's {"root", "files"}, present only for one.
struct UploadTree {
  static void write(json::Writer& w, const UploadRequest& u) {
    if (u.tree_root.empty()) return;
    w.Key("tree");
    w.StartObject();
    json::write_string(w, "root", u.tree_root);
    w.Key("files");
    Codec<std::vector<TreeFile>>::write(w, u.tree_files);
    w.EndObject();
  }
  static void read(const json::Value& object, UploadRequest& u, std::string_view what) {
    const json::Value* tree = json::find(object, "tree");
    if (!tree) return;
    const json::Value* files = json::find(*tree, "files");
    u.tree_root = json::get_string(*tree, "root");
    if (u.tree_root.empty() || !files || !files->IsArray())
      throw Error(ErrorCode::invalid_argument, std::string(what) + ": 'tree' must hold a 'root' and a list of 'files'");
    u.tree_files = Codec<std::vector<TreeFile>>::read(*files, "files");
  }
};

template <>
struct Shape<UploadRequest> {
  static constexpr auto fields =
      std::tuple{field("archive", &UploadRequest::archive_path), field("size", &UploadRequest::size),
                 field("removed", &UploadRequest::removed, omitted), custom<UploadRequest, UploadTree>()};
};

template <>
struct Shape<DownloadRequest> {
  static constexpr auto fields =
      std::tuple{field("cwd", &DownloadRequest::cwd), field("patterns", &DownloadRequest::patterns),
                 field("archive", &DownloadRequest::archive_path), field("maxBytes", &DownloadRequest::max_bytes)};
};

template <>
struct Shape<DownloadResult> {
  static constexpr auto fields =
      std::tuple{field("size", &DownloadResult::size), field("missing", &DownloadResult::missing, omitted)};
};

template <>
struct Shape<ForkTarget> {
  static constexpr auto fields = std::tuple{field("leaseId", &ForkTarget::lease_id),
                                            field("slug", &ForkTarget::slug), field("labels", &ForkTarget::labels)};
};

template <>
struct Shape<ForkOutcome> {
  static constexpr auto fields = std::tuple{field("sandbox", &ForkOutcome::sandbox, omitted),
                                            field("error", &ForkOutcome::error, omitted)};
  // Each outcome is a fork or why there is none: an error wins, nothing at all is refused.
  static void check(ForkOutcome& f, std::string_view what) {
    if (f.error) f.sandbox.reset();
    else if (!f.sandbox) throw Error(ErrorCode::invalid_argument, std::string(what) + " has no 'sandbox'");
  }
};

template <>
struct Shape<DoctorCheck> {
  static constexpr auto fields =
      std::tuple{field("name", &DoctorCheck::name), field("ok", &DoctorCheck::ok),
                 field("detail", &DoctorCheck::detail), field("hint", &DoctorCheck::hint)};
};

}  // namespace corral::shape
