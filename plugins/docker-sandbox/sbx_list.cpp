#include "sbx_list.hpp"

#include <algorithm>
#include <cctype>
#include <initializer_list>

#include "corral/json.hpp"

namespace corral::docker_sandbox {
namespace {

using json::Value;

// "Sandbox_Name" and "sandboxName" both become "sandboxname".
std::string key_form(std::string_view key) {
  std::string out;
  for (char c : key)
    if (c != '_' && c != '-') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The first member whose key, in key_form, is one of `names` (tried in order).
const Value* member(const Value& object, std::initializer_list<std::string_view> names) {
  for (std::string_view want : names)
    for (auto& m : object.GetObject())
      if (key_form(m.name.GetString()) == want && !m.value.IsNull()) return &m.value;
  return nullptr;
}

std::string string_of(const Value* v) {
  if (v && v->IsString()) return {v->GetString(), v->GetStringLength()};
  return {};
}

std::string strip_mode(std::string path) {
  for (std::string_view suffix : {":ro", ":rw"})
    if (path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0)
      path.resize(path.size() - suffix.size());
  return path;
}

// A workspace given as a string, a list of strings, or a list of {path|source|host}.
std::string workspace_of(const Value& entry) {
  if (const Value* w = member(entry, {"workspace", "workspacepath", "workdir", "workingdirectory", "path"});
      w && w->IsString())
    return strip_mode(string_of(w));
  const Value* list = member(entry, {"workspaces", "mounts", "paths"});
  if (!list || !list->IsArray() || list->Empty()) return {};
  const Value& first = (*list)[0];
  if (first.IsString()) return strip_mode(string_of(&first));
  if (first.IsObject()) return strip_mode(string_of(member(first, {"path", "source", "host", "hostpath"})));
  return {};
}

std::optional<SbxEntry> entry_of(const Value& item, std::string_view key_name) {
  SbxEntry e;
  if (item.IsString()) {
    e.name = string_of(&item);  // a bare list of names
  } else if (item.IsObject()) {
    e.name = string_of(member(item, {"name", "sandboxname", "sandbox", "id"}));
    std::string status = string_of(member(item, {"status", "state"}));
    std::transform(status.begin(), status.end(), status.begin(), [](unsigned char c) { return std::tolower(c); });
    e.status = status;
    e.agent = string_of(member(item, {"agent", "agentname"}));
    e.workspace = workspace_of(item);
  }
  if (e.name.empty()) e.name = std::string(key_name);
  if (e.name.empty()) return std::nullopt;
  return e;
}

// The array of sandboxes inside a top-level object, or nullptr.
const Value* list_in(const Value& object) {
  if (const Value* v = member(object, {"sandboxes", "items", "data", "results", "vms"}); v && v->IsArray()) return v;
  for (auto& m : object.GetObject())
    if (m.value.IsArray()) return &m.value;
  return nullptr;
}

Error unreadable(const std::string& why) {
  return Error(ErrorCode::unavailable, "cannot read the output of `sbx ls --json`: " + why,
               "this sbx prints a format corral does not know; check `sbx ls --json` by hand and "
               "update sbx or corral");
}

}  // namespace

std::vector<SbxEntry> parse_ls_json(std::string_view text) {
  std::vector<SbxEntry> out;
  size_t b = text.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return out;
  json::Document doc;
  doc.Parse(text.data(), text.size());
  if (doc.HasParseError()) throw unreadable("it is not JSON");
  if (doc.IsNull()) return out;

  auto add = [&](const Value& item, std::string_view key_name) {
    if (auto e = entry_of(item, key_name)) out.push_back(std::move(*e));
  };
  if (doc.IsArray()) {
    for (const Value& item : doc.GetArray()) add(item, {});
  } else if (doc.IsObject()) {
    if (const Value* list = list_in(doc)) {
      for (const Value& item : list->GetArray()) add(item, {});
    } else if (member(doc, {"name", "sandboxname"})) {
      add(doc, {});  // a single sandbox printed bare
    } else if (!doc.ObjectEmpty() &&
               std::all_of(doc.MemberBegin(), doc.MemberEnd(), [](auto& m) { return m.value.IsObject(); })) {
      for (auto& m : doc.GetObject()) add(m.value, m.name.GetString());  // keyed by name
    } else if (!doc.ObjectEmpty()) {
      throw unreadable("no list of sandboxes in it");
    }
  } else {
    throw unreadable("expected a list or an object");
  }
  return out;
}

std::optional<SbxEntry> find_entry(const std::vector<SbxEntry>& entries, std::string_view name) {
  for (const SbxEntry& e : entries)
    if (e.name == name) return e;
  return std::nullopt;
}

}  // namespace corral::docker_sandbox
