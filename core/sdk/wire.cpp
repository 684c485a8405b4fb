#include "corral/wire.hpp"

#include <algorithm>
#include <functional>

#include "corral/sdk/hex.hpp"

namespace corral::wire {
namespace {

using json::Value;
using json::Writer;

// The compact JSON text of one object whose members `body` writes.
std::string object(const std::function<void(Writer&)>& body) {
  return json::text_of([&](Writer& w) {
    w.StartObject();
    body(w);
    w.EndObject();
  });
}

void write_sandbox_member(Writer& w, const Sandbox& sandbox) {
  w.Key("sandbox");
  json::write_sandbox(w, sandbox, /*include_secrets=*/true);
}

void write_command(Writer& w, const Command& command) {
  w.StartObject();
  if (!command.argv.empty()) json::write_strings(w, "argv", command.argv);
  // JSON text is UTF-8: an argument that is not (a file name's bytes, a binary key) also
  // crosses in hex, every one of them, so the command gets its argv byte for byte. A
  // plugin of an SDK from before reads "argv", where the bad bytes are U+FFFD.
  if (!std::all_of(command.argv.begin(), command.argv.end(), json::is_valid_utf8)) {
    std::vector<std::string> encoded;
    for (const std::string& a : command.argv) encoded.push_back(sdk::hex_encode(a));
    json::write_strings(w, "argvHex", encoded);
  }
  if (!command.shell.empty()) json::write_string(w, "shell", command.shell);
  json::write_string(w, "cwd", command.cwd);
  json::write_map(w, "env", command.env);
  w.Key("timeoutSeconds");
  w.Int64(command.timeout_seconds);
  w.EndObject();
}

Command command_from(const Value& value) {
  if (!value.IsObject()) throw Error(ErrorCode::invalid_argument, "field 'command' must be an object");
  Command c;
  c.argv = json::get_strings(value, "argv");
  if (value.HasMember("argvHex")) {
    const std::vector<std::string> encoded = json::get_strings(value, "argvHex");
    if (encoded.size() != c.argv.size())
      throw Error(ErrorCode::invalid_argument, "field 'argvHex' must hold as many arguments as 'argv'");
    for (size_t i = 0; i < encoded.size(); ++i)
      if (!sdk::hex_decode(encoded[i], c.argv[i]))
        throw Error(ErrorCode::invalid_argument, "field 'argvHex' holds an argument that is not hex");
  }
  c.shell = json::get_string(value, "shell");
  c.cwd = json::get_string(value, "cwd");
  c.env = json::get_map(value, "env");
  c.timeout_seconds = json::get_int(value, "timeoutSeconds");
  return c;
}

// The member `key` of `doc`, which must be there.
const Value& required(const Value& doc, const char* key, std::string_view what) {
  if (doc.IsObject())
    if (auto it = doc.FindMember(key); it != doc.MemberEnd() && !it->value.IsNull()) return it->value;
  throw Error(ErrorCode::invalid_argument, std::string(what) + " has no '" + key + "'");
}

Sandbox sandbox_member(const Value& doc, std::string_view what) {
  return json::sandbox_from(required(doc, "sandbox", what));
}

}  // namespace

StringMap owner_labels(const std::string& lease_id, const std::string& slug, const std::string& host_id) {
  StringMap labels = {{kOwnerLabel, kOwnerValue}, {kLeaseLabel, lease_id}, {kSlugLabel, slug}};
  if (!host_id.empty()) labels[kHostLabel] = host_id;
  return labels;
}

bool labels_match(const StringMap& labels, const StringMap& filter) {
  for (const auto& [key, value] : filter) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  return true;
}

std::string to_json(const DoctorResult& m) {
  return object([&](Writer& w) {
    w.Key("checks");
    w.StartArray();
    for (const DoctorCheck& c : m.checks) json::write_check(w, c);
    w.EndArray();
  });
}

std::string to_json(const OpenRequest& m) {
  return object([&](Writer& w) { json::write_map(w, "options", m.options); });
}

std::string to_json(const OpenResult& m) {
  return object([&](Writer& w) {
    if (!m.target.empty()) json::write_string(w, "target", m.target);
  });
}

std::string to_json(const CreateRequest& m) {
  return object([&](Writer& w) {
    json::write_string(w, "leaseId", m.lease_id);
    json::write_string(w, "slug", m.slug);
    json::write_map(w, "labels", m.labels);
    json::write_string(w, "workspace", m.workspace);
    if (m.network.mode != NetworkPolicy::Mode::open) json::write_string(w, "network", to_string(m.network));
    if (!m.idle.empty()) json::write_string(w, "idle", m.idle);
    if (m.ephemeral) {
      w.Key("ephemeral");
      w.Bool(true);
    }
    if (m.workspace_bytes) {
      w.Key("workspaceBytes");
      w.Uint64(m.workspace_bytes);
    }
  });
}

std::string to_json(const GetRequest& m) {
  return object([&](Writer& w) { json::write_string(w, "id", m.id); });
}

std::string to_json(const ListRequest& m) {
  return object([&](Writer& w) { json::write_map(w, "labels", m.labels); });
}

std::string to_json(const ListResult& m) {
  return object([&](Writer& w) {
    w.Key("sandboxes");
    w.StartArray();
    // Listings carry no secrets: a listed sandbox is reached through get() first.
    for (const Sandbox& s : m.sandboxes) json::write_sandbox(w, s, /*include_secrets=*/false);
    w.EndArray();
  });
}

std::string to_json(const SandboxRequest& m) {
  return object([&](Writer& w) { write_sandbox_member(w, m.sandbox); });
}

std::string to_json(const Sandbox& m) { return json::to_json(m, /*include_secrets=*/true); }

std::string to_json(const ExecRequest& m) {
  return object([&](Writer& w) {
    write_sandbox_member(w, m.sandbox);
    w.Key("command");
    write_command(w, m.command);
  });
}

std::string to_json(const ExecResult& m) {
  return object([&](Writer& w) {
    w.Key("exitCode");
    w.Int(m.exit_code);
  });
}

std::string to_json(const UploadCall& m) {
  return object([&](Writer& w) {
    write_sandbox_member(w, m.sandbox);
    json::write_string(w, "archive", m.upload.archive_path);
    w.Key("size");
    w.Uint64(m.upload.size);
    if (!m.upload.removed.empty()) json::write_strings(w, "removed", m.upload.removed);
    if (m.upload.tree_root.empty()) return;
    w.Key("tree");
    w.StartObject();
    json::write_string(w, "root", m.upload.tree_root);
    w.Key("files");
    w.StartArray();
    for (const TreeFile& f : m.upload.tree_files) {
      w.StartObject();  // defaults omitted: a tree of thousands of files stays small
      json::write_string(w, "path", f.path);
      if (f.executable) {
        w.Key("executable");
        w.Bool(true);
      }
      if (f.symlink) {
        w.Key("symlink");
        w.Bool(true);
      }
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  });
}

std::string to_json(const DownloadCall& m) {
  return object([&](Writer& w) {
    write_sandbox_member(w, m.sandbox);
    json::write_string(w, "cwd", m.download.cwd);
    json::write_strings(w, "patterns", m.download.patterns);
    json::write_string(w, "archive", m.download.archive_path);
    w.Key("maxBytes");
    w.Uint64(m.download.max_bytes);
  });
}

std::string to_json(const DownloadResult& m) {
  return object([&](Writer& w) {
    w.Key("size");
    w.Uint64(m.size);
    if (!m.missing.empty()) json::write_strings(w, "missing", m.missing);
  });
}

std::string to_json(const ExtendRequest& m) {
  return object([&](Writer& w) {
    write_sandbox_member(w, m.sandbox);
    w.Key("seconds");
    w.Int64(m.seconds);
  });
}

std::string to_json(const UrlRequest& m) {
  return object([&](Writer& w) {
    write_sandbox_member(w, m.sandbox);
    w.Key("port");
    w.Int(m.port);
  });
}

std::string to_json(const UrlResult& m) {
  return object([&](Writer& w) { json::write_string(w, "url", m.url); });
}

std::string to_json(const ForkRequest& m) {
  return object([&](Writer& w) {
    write_sandbox_member(w, m.sandbox);
    w.Key("forks");
    w.StartArray();
    for (const ForkTarget& f : m.forks) {
      w.StartObject();
      json::write_string(w, "leaseId", f.lease_id);
      json::write_string(w, "slug", f.slug);
      json::write_map(w, "labels", f.labels);
      w.EndObject();
    }
    w.EndArray();
  });
}

std::string to_json(const ForkResult& m) {
  return object([&](Writer& w) {
    w.Key("forks");
    w.StartArray();
    for (const ForkOutcome& f : m.forks) {
      w.StartObject();
      if (f.sandbox) write_sandbox_member(w, *f.sandbox);
      if (f.error) {
        w.Key("error");
        w.StartObject();
        json::write_string(w, "code", std::string(to_string(f.error->code())));
        json::write_string(w, "message", f.error->what());
        if (!f.error->hint().empty()) json::write_string(w, "hint", f.error->hint());
        w.EndObject();
      }
      w.EndObject();
    }
    w.EndArray();
  });
}

template <>
DoctorResult read<DoctorResult>(std::string_view text, std::string_view what) {
  json::Document doc = json::parse(text, what);
  DoctorResult r;
  if (const Value* checks = json::find(doc, "checks")) {
    if (!checks->IsArray()) throw Error(ErrorCode::invalid_argument, std::string(what) + ": 'checks' must be a list");
    for (const Value& c : checks->GetArray())
      r.checks.push_back({json::get_string(c, "name"), json::get_bool(c, "ok"), json::get_string(c, "detail"),
                          json::get_string(c, "hint")});
  }
  return r;
}

template <>
OpenRequest read<OpenRequest>(std::string_view text, std::string_view what) {
  return {json::get_map(json::parse(text, what), "options")};
}

template <>
OpenResult read<OpenResult>(std::string_view text, std::string_view what) {
  return {json::get_string(json::parse(text, what), "target")};
}

template <>
CreateRequest read<CreateRequest>(std::string_view text, std::string_view what) {
  json::Document doc = json::parse(text, what);
  CreateRequest r;
  r.lease_id = json::get_string(doc, "leaseId");
  r.slug = json::get_string(doc, "slug");
  r.labels = json::get_map(doc, "labels");
  r.workspace = json::get_string(doc, "workspace");
  if (doc.HasMember("network")) r.network = parse_network_policy(json::get_string(doc, "network"));
  r.idle = json::get_string(doc, "idle");
  r.ephemeral = json::get_bool(doc, "ephemeral");
  const std::int64_t bound = json::get_int(doc, "workspaceBytes");
  if (bound < 0) throw Error(ErrorCode::invalid_argument, std::string(what) + ": workspaceBytes is negative");
  r.workspace_bytes = static_cast<std::uint64_t>(bound);
  return r;
}

template <>
GetRequest read<GetRequest>(std::string_view text, std::string_view what) {
  return {json::get_string(json::parse(text, what), "id")};
}

template <>
ListRequest read<ListRequest>(std::string_view text, std::string_view what) {
  return {json::get_map(json::parse(text, what), "labels")};
}

template <>
ListResult read<ListResult>(std::string_view text, std::string_view what) {
  json::Document doc = json::parse(text, what);
  ListResult r;
  const Value& list = required(doc, "sandboxes", what);
  if (!list.IsArray()) throw Error(ErrorCode::invalid_argument, std::string(what) + ": 'sandboxes' must be a list");
  for (const Value& s : list.GetArray()) r.sandboxes.push_back(json::sandbox_from(s));
  return r;
}

template <>
SandboxRequest read<SandboxRequest>(std::string_view text, std::string_view what) {
  return {sandbox_member(json::parse(text, what), what)};
}

template <>
Sandbox read<Sandbox>(std::string_view text, std::string_view what) {
  return json::sandbox_from(json::parse(text, what));
}

template <>
ExecRequest read<ExecRequest>(std::string_view text, std::string_view what) {
  json::Document doc = json::parse(text, what);
  return {sandbox_member(doc, what), command_from(required(doc, "command", what))};
}

template <>
ExecResult read<ExecResult>(std::string_view text, std::string_view what) {
  json::Document doc = json::parse(text, what);
  // A missing exit code must never read as success.
  const Value& code = required(doc, "exitCode", what);
  if (!code.IsInt()) throw Error(ErrorCode::invalid_argument, std::string(what) + ": 'exitCode' must be a whole number");
  return {code.GetInt()};
}

template <>
UploadCall read<UploadCall>(std::string_view text, std::string_view what) {
  json::Document doc = json::parse(text, what);
  UploadCall m;
  m.sandbox = sandbox_member(doc, what);
  m.upload.archive_path = json::get_string(doc, "archive");
  m.upload.size = static_cast<std::uint64_t>(json::get_int(doc, "size"));
  m.upload.removed = json::get_strings(doc, "removed");
  const Value* tree = json::find(doc, "tree");
  if (!tree) return m;
  m.upload.tree_root = json::get_string(*tree, "root");
  const Value& files = required(*tree, "files", what);
  if (m.upload.tree_root.empty() || !files.IsArray())
    throw Error(ErrorCode::invalid_argument, std::string(what) + ": 'tree' must hold a 'root' and a list of 'files'");
  m.upload.tree_files.reserve(files.Size());
  for (const Value& f : files.GetArray()) {
    TreeFile file{json::get_string(f, "path"), json::get_bool(f, "executable"), json::get_bool(f, "symlink")};
    if (file.path.empty()) throw Error(ErrorCode::invalid_argument, std::string(what) + ": a tree file has no 'path'");
    m.upload.tree_files.push_back(std::move(file));
  }
  return m;
}

template <>
DownloadCall read<DownloadCall>(std::string_view text, std::string_view what) {
  json::Document doc = json::parse(text, what);
  DownloadCall m;
  m.sandbox = sandbox_member(doc, what);
  m.download.cwd = json::get_string(doc, "cwd");
  m.download.patterns = json::get_strings(doc, "patterns");
  m.download.archive_path = json::get_string(doc, "archive");
  m.download.max_bytes = static_cast<std::uint64_t>(json::get_int(doc, "maxBytes"));
  return m;
}

template <>
DownloadResult read<DownloadResult>(std::string_view text, std::string_view what) {
  json::Document doc = json::parse(text, what);
  DownloadResult r;
  std::int64_t size = doc.HasMember("size") ? json::get_int(doc, "size") : 0;
  if (size < 0) throw Error(ErrorCode::invalid_argument, std::string(what) + ": size is negative");
  r.size = static_cast<std::uint64_t>(size);
  r.missing = json::get_strings(doc, "missing");
  return r;
}

template <>
ExtendRequest read<ExtendRequest>(std::string_view text, std::string_view what) {
  json::Document doc = json::parse(text, what);
  return {sandbox_member(doc, what), json::get_int(doc, "seconds")};
}

template <>
UrlRequest read<UrlRequest>(std::string_view text, std::string_view what) {
  json::Document doc = json::parse(text, what);
  return {sandbox_member(doc, what), static_cast<int>(json::get_int(doc, "port"))};
}

template <>
UrlResult read<UrlResult>(std::string_view text, std::string_view what) {
  return {json::get_string(json::parse(text, what), "url")};
}

template <>
ForkRequest read<ForkRequest>(std::string_view text, std::string_view what) {
  json::Document doc = json::parse(text, what);
  ForkRequest m;
  m.sandbox = sandbox_member(doc, what);
  const Value& forks = required(doc, "forks", what);
  if (!forks.IsArray()) throw Error(ErrorCode::invalid_argument, std::string(what) + ": 'forks' must be a list");
  for (const Value& f : forks.GetArray())
    m.forks.push_back({json::get_string(f, "leaseId"), json::get_string(f, "slug"), json::get_map(f, "labels")});
  return m;
}

template <>
ForkResult read<ForkResult>(std::string_view text, std::string_view what) {
  json::Document doc = json::parse(text, what);
  ForkResult r;
  const Value& forks = required(doc, "forks", what);
  if (!forks.IsArray()) throw Error(ErrorCode::invalid_argument, std::string(what) + ": 'forks' must be a list");
  for (const Value& f : forks.GetArray()) {
    ForkOutcome outcome;
    if (const Value* error = json::find(f, "error")) {
      // A code outside the ABI's set (or the host's own config) reads as internal.
      const std::string code = json::get_string(*error, "code");
      ErrorCode parsed = ErrorCode::internal;
      for (int c = CORRAL_ERR_INTERNAL; c <= CORRAL_ERR_UNSUPPORTED; ++c)
        if (to_string(static_cast<ErrorCode>(c)) == code) parsed = static_cast<ErrorCode>(c);
      outcome.error = Error(parsed, json::get_string(*error, "message"), json::get_string(*error, "hint"));
    } else {
      outcome.sandbox = sandbox_member(f, what);
    }
    r.forks.push_back(std::move(outcome));
  }
  return r;
}

}  // namespace corral::wire
