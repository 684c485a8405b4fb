#include "patch.hpp"

#include <vector>

namespace corral::kubernetes::standin {
namespace {

void merge(json::Value& target, const json::Value& patch, Allocator& a, bool strategic) {
  if (!patch.IsObject()) {
    target.CopyFrom(patch, a);
    return;
  }
  if (!target.IsObject()) target.SetObject();
  for (const auto& m : patch.GetObject()) {
    const char* key = m.name.GetString();
    if (m.value.IsNull()) {
      target.RemoveMember(key);
      continue;
    }
    auto existing = target.FindMember(key);
    if (existing == target.MemberEnd()) {
      json::Value copy;
      copy.CopyFrom(m.value, a);
      if (copy.IsObject()) {
        json::Value cleaned(rapidjson::kObjectType);
        merge(cleaned, m.value, a, strategic);  // drops nulls inside, as RFC 7386 does
        copy = std::move(cleaned);
      }
      target.AddMember(json::Value(key, a), std::move(copy), a);
      continue;
    }
    if (strategic && m.value.IsArray() && existing->value.IsArray()) {
      // Lists of objects that carry a name merge by it (the patch-merge-key of containers,
      // env, volumes, ports ...).
      bool named = !m.value.Empty();
      for (const auto& item : m.value.GetArray()) named = named && item.IsObject() && item.HasMember("name");
      if (named) {
        for (const auto& item : m.value.GetArray()) {
          bool found = false;
          for (auto& have : existing->value.GetArray())
            if (have.IsObject() && have.HasMember("name") && have["name"] == item["name"]) {
              merge(have, item, a, strategic);
              found = true;
            }
          if (!found) existing->value.PushBack(json::Value(item, a), a);
        }
        continue;
      }
    }
    merge(existing->value, m.value, a, strategic);
  }
}

// The value a JSON Pointer (RFC 6901) names inside `root`, its parent and last token.
struct Pointer {
  json::Value* parent = nullptr;
  std::string token;
};

std::vector<std::string> tokens_of(const std::string& pointer) {
  if (pointer.empty()) return {};
  if (pointer[0] != '/') throw PatchError("invalid JSON Pointer: " + pointer);
  std::vector<std::string> out;
  std::string current;
  for (size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      std::string t;
      for (size_t j = 0; j < current.size(); ++j) {
        if (current[j] == '~' && j + 1 < current.size()) {
          t += current[j + 1] == '1' ? '/' : '~';
          ++j;
        } else {
          t += current[j];
        }
      }
      out.push_back(t);
      current.clear();
    } else {
      current += pointer[i];
    }
  }
  return out;
}

json::Value* child(json::Value& v, const std::string& token) {
  if (v.IsObject()) {
    auto it = v.FindMember(token.c_str());
    return it == v.MemberEnd() ? nullptr : &it->value;
  }
  if (v.IsArray() && !token.empty() && token.find_first_not_of("0123456789") == std::string::npos) {
    const size_t i = std::stoul(token);
    return i < v.Size() ? &v[static_cast<rapidjson::SizeType>(i)] : nullptr;
  }
  return nullptr;
}

Pointer locate(json::Value& root, const std::string& pointer) {
  auto tokens = tokens_of(pointer);
  if (tokens.empty()) throw PatchError("the whole document cannot be the target of a patch operation");
  json::Value* v = &root;
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    v = child(*v, tokens[i]);
    if (!v) throw PatchError("doc is missing path: \"" + pointer + "\": missing value");
  }
  return {v, tokens.back()};
}

json::Value* find_path(json::Value& root, const std::string& pointer) {
  json::Value* v = &root;
  for (const auto& t : tokens_of(pointer)) {
    v = child(*v, t);
    if (!v) return nullptr;
  }
  return v;
}

void add(json::Value& root, const std::string& path, json::Value value, Allocator& a) {
  Pointer p = locate(root, path);
  if (p.parent->IsObject()) {
    auto it = p.parent->FindMember(p.token.c_str());
    if (it != p.parent->MemberEnd()) it->value = std::move(value);
    else p.parent->AddMember(json::Value(p.token.c_str(), a), std::move(value), a);
  } else if (p.parent->IsArray()) {
    if (p.token == "-") {
      p.parent->PushBack(std::move(value), a);
      return;
    }
    if (p.token.empty() || p.token.find_first_not_of("0123456789") != std::string::npos)
      throw PatchError("invalid array index: " + p.token);
    const size_t index = std::stoul(p.token);
    if (index > p.parent->Size()) throw PatchError("add operation does not apply: doc is missing path: \"" + path + "\"");
    p.parent->PushBack(json::Value(), a);
    for (size_t i = p.parent->Size() - 1; i > index; --i)
      (*p.parent)[static_cast<rapidjson::SizeType>(i)] = std::move((*p.parent)[static_cast<rapidjson::SizeType>(i - 1)]);
    (*p.parent)[static_cast<rapidjson::SizeType>(index)] = std::move(value);
  } else {
    throw PatchError("add operation does not apply: doc is missing path: \"" + path + "\"");
  }
}

json::Value take(json::Value& root, const std::string& path) {
  Pointer p = locate(root, path);
  json::Value* target = child(*p.parent, p.token);
  if (!target) throw PatchError("remove operation does not apply: doc is missing path: \"" + path + "\": missing value");
  json::Value out = std::move(*target);
  if (p.parent->IsObject()) p.parent->RemoveMember(p.token.c_str());
  else p.parent->Erase(p.parent->Begin() + std::stoul(p.token));
  return out;
}

void json_patch(json::Document& doc, const std::string& text) {
  json::Document ops;
  ops.Parse(text.c_str());
  if (ops.HasParseError() || !ops.IsArray()) throw PatchError("json: cannot unmarshal object into Go value of type jsonpatch.Patch");
  auto& a = doc.GetAllocator();
  for (const auto& op : ops.GetArray()) {
    const std::string kind = string_at(op, {"op"});
    const std::string path = string_at(op, {"path"});
    const json::Value* value = json::find(op, "value");
    if (kind == "add" || kind == "replace") {
      if (!value) throw PatchError("missing value for " + kind + " operation");
      if (kind == "replace" && !find_path(doc, path))
        throw PatchError("replace operation does not apply: doc is missing key: " + path + ": missing value");
      add(doc, path, json::Value(*value, a), a);
    } else if (kind == "remove") {
      take(doc, path);
    } else if (kind == "test") {
      json::Value* have = find_path(doc, path);
      if (!value || !have || *have != *value) throw PatchError("testing value " + path + " failed: test failed");
    } else if (kind == "move" || kind == "copy") {
      const std::string from = string_at(op, {"from"});
      json::Value* source = find_path(doc, from);
      if (!source) throw PatchError(kind + " operation does not apply: doc is missing from path: " + from + ": missing value");
      json::Value moved = kind == "move" ? take(doc, from) : json::Value(*source, a);
      add(doc, path, std::move(moved), a);
    } else {
      throw PatchError("Unexpected kind: " + kind);
    }
  }
}

}  // namespace

void apply_patch(json::Document& target, const std::string& content_type, const std::string& patch) {
  const std::string type = content_type.substr(0, content_type.find(';'));
  if (type == "application/json-patch+json") {
    json_patch(target, patch);
    return;
  }
  if (type != "application/merge-patch+json" && type != "application/strategic-merge-patch+json")
    throw std::invalid_argument(type);
  json::Document p;
  p.Parse(patch.c_str());
  if (p.HasParseError()) throw PatchError("error decoding patch: invalid JSON");
  if (!p.IsObject()) throw PatchError("json: cannot unmarshal " + std::string(p.IsArray() ? "array" : "value") + " into Go value of type map[string]interface {}");
  merge(target, p, target.GetAllocator(), type == "application/strategic-merge-patch+json");
}

}  // namespace corral::kubernetes::standin
